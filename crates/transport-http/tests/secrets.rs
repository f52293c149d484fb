//! Secrets given to the HTTP client (a bearer token in a header, a proxy's
//! password) never show in its `Debug` output.

mod support;

use mcpwire_http::{HeaderName, HeaderValue, HttpClient, Proxy};
use support::quick_config;

#[test]
fn debug_shows_the_settings_but_no_header_value_or_proxy_password() {
    for proxy in [
        "http://user:s3cret-pw@127.0.0.1:3128",
        "http://user:s3cret-pw@127.0.0.1:3128/path@x",
        "user:s3cret-pw@127.0.0.1:3128",
    ] {
        let config = quick_config()
            .header(
                HeaderName::from_static("authorization"),
                HeaderValue::from_static("Bearer s3cret-token"),
            )
            .max_frame_len(12_345)
            .proxy(Proxy::url(proxy).no_proxy("example.org"));
        let client = HttpClient::new(config).unwrap();
        let shown = format!("{client:?}");
        assert!(shown.starts_with("HttpClient {"), "{shown}");
        for wanted in ["authorization", "12345", "127.0.0.1:3128", "example.org"] {
            assert!(shown.contains(wanted), "{wanted} missing: {shown}");
        }
        assert!(!shown.contains("s3cret"), "a secret in Debug: {shown}");
    }
}
