//! What a person reads when a remote server wants credentials: one line
//! saying what happened in their words and one with the fix, by default;
//! every cause with `-v`. Servers here answer on 127.0.0.1.

mod support;

use std::time::Duration;

use support::{DemoHttp, mcpwire, refusing_server, stderr, stdout};

/// A server that wants a fixed token: 401 to everything, metadata
/// documents and the 2025-03-26 default endpoints included.
fn token_server() -> String {
    refusing_server("401 Unauthorized", "www-authenticate: Bearer\r\n")
}

fn run(args: &[&str]) -> std::process::Output {
    mcpwire()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs")
}

#[test]
fn a_server_without_oauth_metadata_is_said_to_want_a_token() {
    let url = token_server();
    for extra in [&[][..], &["--non-interactive"][..]] {
        let mut args = extra.to_vec();
        args.extend(["-s", &url, "tools"]);
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert_eq!(
            err,
            format!(
                "mcpwire: cannot connect to {url}: this server wants a token (it offers no OAuth sign-in)\n  \
                 hint: pass -H 'Authorization: Bearer …' (or the header its documentation names), \
                 or set it in the configuration file's \"headers\" for the server\n"
            )
        );
    }
    // With -v, the whole chain: the library's words, one level each.
    let out = run(&["-v", "-s", &url, "tools"]);
    let err = stderr(&out);
    let last = err.lines().rfind(|l| l.starts_with("mcpwire: ")).unwrap();
    assert!(
        last.contains("publishes no OAuth metadata: it expects a token given beforehand")
            && last.contains("no terminal is attached"),
        "{err}"
    );
    assert!(!err.contains("CallbackRedirect"), "{err}");
}

#[test]
fn a_refused_token_is_reported_as_refused_naming_where_it_came_from() {
    let url = token_server();
    let out = run(&["-H", "Authorization: Bearer tok-123", "-s", &url, "ping"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.starts_with(&format!(
            "mcpwire: cannot connect to {url}: the server refused the token in the Authorization header given with -H\n  hint: check the token"
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(!err.contains("tok-123"), "{err}");

    // The same token from a configuration file names the entry.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"mcpServers": {{"remote": {{"url": "{url}", "headers": {{"X-Api-Key": "key-456"}}}}}}}}"#
        ),
    )
    .unwrap();
    let out = run(&["--config", config.to_str().unwrap(), "ping"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "the server refused the token in the X-Api-Key header of server \"remote\" in the configuration"
        ),
        "{err}"
    );
    assert!(!err.contains("key-456"), "{err}");
}

#[test]
fn the_demo_server_with_a_token_is_reached_with_it_and_said_to_want_it_without() {
    let demo = DemoHttp::start_with(&["--token", "t-789"]);
    let out = run(&["-s", &demo.url, "tools"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(": this server wants a token (it offers no OAuth sign-in)\n"),
        "{}",
        stderr(&out)
    );
    let out = run(&[
        "-H",
        "Authorization: Bearer t-789",
        "-s",
        &demo.url,
        "call",
        "echo",
        "message=in",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "in\n");
}
