//! Helpers to drive an `HttpTransport` in tests; the scripted hyper server
//! (HTTP/1.1 and HTTP/2, TLS with a test CA, scripted bodies) lives in
//! `mcpwire-test-support` (feature `http`), shared with the fault suite.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the support code"
)]
#![allow(unreachable_pub, reason = "support code shared by test binaries")]

use std::time::Duration;

use bytes::Bytes;
use mcpwire_http::{HttpClient, HttpConfig, Proxy, RetryPolicy};
#[allow(unused_imports, reason = "not every test binary uses the server")]
pub use mcpwire_test_support::http::{Reply, Seen, Server};
use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};

/// A config with a quick retry policy, so tests of retries stay short.
pub fn quick_config() -> HttpConfig {
    // Loopback tests must not depend on the machine's proxy settings.
    HttpConfig::new().proxy(Proxy::none()).retry(
        RetryPolicy::default()
            .initial_delay(Duration::from_millis(20))
            .max_delay(Duration::from_millis(100))
            .max_attempts(5)
            .max_elapsed(Duration::from_secs(30)),
    )
}

pub fn client() -> HttpClient {
    HttpClient::new(quick_config()).unwrap()
}

/// Generous: "it happens" waits on a loaded machine.
pub const WAIT: Duration = Duration::from_secs(20);

/// The next event, within [`WAIT`].
pub async fn next(t: &mut impl Transport) -> TransportEvent {
    tokio::time::timeout(WAIT, t.next_event())
        .await
        .expect("timed out waiting for a transport event")
        .expect("transport ended")
}

/// The next frame as a JSON value, failing on any other event.
pub async fn next_frame(t: &mut impl Transport) -> serde_json::Value {
    t.set_active(Active::Once);
    match next(t).await {
        TransportEvent::Frame(f) => serde_json::from_slice(&f).unwrap(),
        other => panic!("expected a frame, got {other:?}"),
    }
}

/// An SSE `message` event's text.
pub fn sse_message(id: Option<&str>, data: &str) -> String {
    match id {
        Some(id) => format!("id: {id}\nevent: message\ndata: {data}\n\n"),
        None => format!("event: message\ndata: {data}\n\n"),
    }
}

pub fn frame(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

pub const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
pub const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

pub fn init_result(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-06-18","capabilities":{{}},"serverInfo":{{"name":"s","version":"1"}}}}}}"#
    )
}

pub fn result(id: u64, value: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{value}}}"#)
}

/// Waits until `cond` holds on what the server saw, within [`WAIT`].
pub async fn wait_seen(server: &Server, cond: impl Fn(&[Seen]) -> bool) -> Vec<Seen> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let seen = server.seen();
        if cond(&seen) {
            return seen;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition never held; seen: {seen:#?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
