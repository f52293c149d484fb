//! The automatic start's first frames: a request before `initialize` (the
//! era probe's `server/discover`) that the server refuses is that request's
//! answer and leaves the transport undecided, so only a refused
//! `initialize` looks for legacy HTTP+SSE; a probe that gets no answer
//! does not hold up the `initialize` after it; and a tap sees each frame
//! with the headers it was sent with.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire_http::{HttpMode, HttpTransport};
use mcpwire_transport::{Direction, Tap, Tapped, Transport, TransportError, TransportEvent};
use support::*;

const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}"#;

fn method(seen: &Seen) -> String {
    seen.rpc_method().unwrap_or_default()
}

/// A server of the `initialize` era: anything POSTed before `initialize`
/// is answered `status`; `initialize` is answered; a GET of the endpoint
/// opens a stream that says nothing (no legacy endpoint here), any other
/// GET is 404.
async fn server(status: u16) -> Server {
    Server::start(move |seen| async move {
        match (seen.method.as_str(), method(&seen).as_str()) {
            ("GET", _) if seen.path == "/mcp" => Reply::sse().hold(),
            ("GET", _) => Reply::new(404),
            ("POST", "initialize") => Reply::json(&init_result(0)),
            ("POST", _) => Reply::new(status).body("refused"),
            _ => Reply::new(405),
        }
    })
    .await
}

#[tokio::test]
async fn a_refused_request_before_initialize_is_its_answer_and_initialize_decides() {
    let server = server(400).await;
    let mut t = HttpTransport::new(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(DISCOVER)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            frame: f,
            error: TransportError::Http(s),
        } => {
            assert_eq!(f, DISCOVER);
            assert_eq!(s.status, 400);
        }
        other => panic!("expected the 400 back, got {other:?}"),
    }
    assert_eq!(t.mode(), None, "still undecided");
    t.sender().send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 0);
    assert_eq!(t.mode(), Some(HttpMode::StreamableHttp));
    let seen: Vec<String> = server
        .seen()
        .iter()
        .map(|s| format!("{} {}", s.method, method(s)))
        .collect();
    assert_eq!(
        seen[..2],
        ["POST server/discover", "POST initialize"],
        "no GET between: {seen:?}"
    );
}

#[tokio::test]
async fn a_5xx_to_a_request_before_initialize_leaves_the_transport_undecided() {
    let server = server(500).await;
    let mut t = HttpTransport::new(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(DISCOVER)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Http(s),
            ..
        } => assert_eq!(s.status, 500),
        other => panic!("expected the 500 back, got {other:?}"),
    }
    // Some servers of either transport answer unknown methods with a server
    // error: the initialize after it decides.
    assert_eq!(t.mode(), None);
    t.sender().send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 0);
    assert_eq!(t.mode(), Some(HttpMode::StreamableHttp));
}

#[tokio::test]
async fn a_401_to_a_request_before_initialize_is_an_authorization_refusal() {
    let server = server(401).await;
    let mut t = HttpTransport::new(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(DISCOVER)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Unauthorized(_),
            ..
        } => {}
        other => panic!("expected an authorization refusal, got {other:?}"),
    }
    // No look for a legacy stream (the GETs are the authorizer's
    // discovery of the server's metadata).
    assert!(
        !server
            .seen()
            .iter()
            .any(|s| s.method == "GET" && s.path == "/mcp"),
        "no legacy GET"
    );
}

#[tokio::test]
async fn initialize_does_not_wait_behind_a_probe_that_gets_no_answer() {
    let server = Server::start(|seen| async move {
        match method(&seen).as_str() {
            "initialize" => Reply::json(&init_result(0)),
            _ => {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Reply::new(500)
            }
        }
    })
    .await;
    let mut t = HttpTransport::new(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(DISCOVER)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    t.sender().send(frame(INIT)).await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), next_frame(&mut t))
        .await
        .expect("initialize answered without waiting for the probe");
    assert_eq!(answer["id"], 0);
}

#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<(Direction, String, String)>>);

impl Tap for Recorder {
    fn frame(&self, tapped: &Tapped<'_>) {
        let headers: Vec<String> = tapped
            .headers
            .iter()
            .map(|(n, v)| format!("{n}: {v}"))
            .collect();
        self.0.lock().unwrap().push((
            tapped.direction,
            String::from_utf8_lossy(tapped.frame).into_owned(),
            headers.join("; "),
        ));
    }
}

#[tokio::test]
async fn a_tap_sees_each_posted_frame_with_its_headers_and_each_delivered_frame() {
    let server =
        Server::start(|_| async { Reply::json(&init_result(0)).header("mcp-session-id", "s1") })
            .await;
    let client = mcpwire_http::HttpClient::new(quick_config().header(
        http::HeaderName::from_static("x-api-key"),
        http::HeaderValue::from_static("k-secret"),
    ))
    .unwrap();
    let mut t = HttpTransport::new(&client, &server.url("/mcp")).unwrap();
    let tap = Arc::new(Recorder::default());
    assert!(t.set_tap(tap.clone()), "an HTTP transport taps itself");
    t.sender().send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 0);
    let seen = tap.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].0, Direction::Sent);
    assert_eq!(seen[0].1, INIT);
    assert!(
        seen[0].2.contains("content-type: application/json"),
        "{seen:?}"
    );
    assert!(seen[0].2.contains("x-api-key: [redacted]"), "{seen:?}");
    assert!(!seen[0].2.contains("k-secret"), "{seen:?}");
    assert_eq!(seen[1].0, Direction::Received);
    assert!(seen[1].1.contains("\"id\":0"), "{seen:?}");
}
