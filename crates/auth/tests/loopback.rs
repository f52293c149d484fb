//! The loopback redirect step's settings: the port and path it listens on
//! make the redirect URI the authorization server is given.

use mcpwire_auth::{LoopbackBrowser, RedirectStep};

/// A port free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn a_fixed_port_and_path_make_the_redirect_uri() {
    for path in ["cb", "/cb"] {
        let port = free_port();
        let pending = LoopbackBrowser::new()
            .port(port)
            .path(path)
            .open_browser(false)
            .prepare()
            .await
            .unwrap();
        assert_eq!(
            pending.redirect_uri(),
            format!("http://127.0.0.1:{port}/cb"),
            "path {path:?}"
        );
    }
    // The defaults: a port the system picks, `/callback`.
    let pending = LoopbackBrowser::new().prepare().await.unwrap();
    let uri = pending.redirect_uri();
    assert!(
        uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"),
        "{uri}"
    );
    assert_ne!(uri, "http://127.0.0.1:0/callback");
}

#[test]
fn the_browser_setting_is_kept() {
    let shown = format!("{:?}", LoopbackBrowser::new().open_browser(false));
    assert!(shown.contains("open_browser: false"), "{shown}");
    let shown = format!("{:?}", LoopbackBrowser::new());
    assert!(shown.contains("open_browser: true"), "{shown}");
}
