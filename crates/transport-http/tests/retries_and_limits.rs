//! The edges of the retry conditions, the session rules and the body limits,
//! held by tests because mutation testing (`cargo xtask mutants
//! transport-http`) found them unguarded: each test here fails if its
//! condition is loosened or tightened by one step.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcpwire_http::{HttpClient, HttpTransport};
use mcpwire_transport::{Active, Transport, TransportError, TransportEvent};
use support::*;

/// A server whose first `busy` answers are `status` with `Retry-After: 1`,
/// then answers every request.
async fn busy_then_ok(status: u16, busy: usize) -> Server {
    let calls = Arc::new(AtomicUsize::new(0));
    Server::start(move |seen| {
        let calls = calls.clone();
        async move {
            if calls.fetch_add(1, Ordering::SeqCst) < busy {
                return Reply::new(status).header("retry-after", "1").body("busy");
            }
            let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
            Reply::json(&result(v["id"].as_u64().unwrap(), "{}"))
        }
    })
    .await
}

/// 429 ("too many requests") means the server did not take the request, as
/// 503 does: the POST is sent again after the server's `Retry-After`.
#[tokio::test]
async fn a_429_post_is_retried_after_retry_after() {
    let server = busy_then_ok(429, 1).await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "one 429, then the same POST again");
    assert_eq!(seen[1].body, seen[0].body);
    assert!(seen[1].at - seen[0].at >= Duration::from_millis(990));
}

/// Any other error status is final: the request may have run.
#[tokio::test]
async fn a_500_post_is_not_retried() {
    let server = busy_then_ok(500, 1).await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Http(s),
            ..
        } => assert_eq!(s.status, 500),
        other => panic!("expected an undelivered 500, got {other:?}"),
    }
    assert_eq!(server.seen().len(), 1);
}

/// A server that answers the request with id `n` with a JSON body of
/// exactly `len(n)` bytes, in two pieces for odd ids and one for even ones.
async fn sized_answers(len: fn(u64) -> usize) -> Server {
    Server::start(move |seen| async move {
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        let id = v["id"].as_u64().unwrap();
        let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"pad":""#);
        let tail = r#""}}"#;
        let pad = "p".repeat(len(id) - head.len() - tail.len());
        let body = format!("{head}{pad}{tail}");
        let reply = Reply::new(200).header("content-type", "application/json");
        if id.is_multiple_of(2) {
            return reply.body(&body);
        }
        let (a, b) = body.split_at(body.len() / 2);
        reply.body(a).delay(5).body(b)
    })
    .await
}

fn request(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#)
}

const MAX: usize = 4096;

/// A JSON answer of exactly the maximum frame length is delivered, whole or
/// in pieces; one byte more is refused with a typed error naming the limit.
#[tokio::test]
async fn a_json_answer_at_the_limit_is_delivered_and_one_byte_over_is_not() {
    let server = sized_answers(|id| if id <= 2 { MAX } else { MAX + 1 }).await;
    let client = HttpClient::new(quick_config().max_frame_len(MAX)).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    for id in 1..=2 {
        t.sender().send(frame(&request(id))).await.unwrap();
        t.set_active(Active::Once);
        match next(&mut t).await {
            TransportEvent::Frame(f) => assert_eq!(f.len(), MAX, "answer {id}"),
            other => panic!("expected answer {id} at the limit, got {other:?}"),
        }
    }
    for id in 3..=4 {
        let over = request(id);
        t.sender().send(frame(&over)).await.unwrap();
        match next(&mut t).await {
            TransportEvent::Undelivered {
                frame: f,
                error: TransportError::Other(e),
            } => {
                assert_eq!(f, over);
                let e = e
                    .downcast_ref::<mcpwire_http::Error>()
                    .expect("an HTTP error");
                assert!(
                    matches!(e, mcpwire_http::Error::BodyTooLarge { max: MAX }),
                    "{e:?}"
                );
            }
            other => panic!("expected answer {id} refused, got {other:?}"),
        }
    }
}

/// An error answer keeps the first KiB of its body (docs/http.md), however
/// it arrives.
#[tokio::test]
async fn an_error_status_keeps_one_kib_of_its_body() {
    let server = Server::start(|_| async {
        Reply::new(500)
            .header("content-type", "text/plain")
            .body(&"a".repeat(1000))
            .delay(5)
            .body(&"b".repeat(100))
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Http(s),
            ..
        } => {
            assert_eq!(s.status, 500);
            assert_eq!(s.body, format!("{}{}", "a".repeat(1000), "b".repeat(24)));
        }
        other => panic!("expected an undelivered 500, got {other:?}"),
    }
}

/// A connection reset before the answer is a failed request (which may have
/// run, so it is not retried), not a timeout.
#[tokio::test]
async fn a_reset_before_the_answer_is_a_request_error_not_a_timeout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepts = Arc::new(AtomicUsize::new(0));
    let counted = accepts.clone();
    let server = tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            counted.fetch_add(1, Ordering::SeqCst);
            // Read the request, then reset the connection (linger 0).
            let mut buf = vec![0u8; 4096];
            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buf).await;
            #[allow(deprecated, reason = "a zero linger resets at once and never blocks")]
            stream.set_linger(Some(Duration::ZERO)).unwrap();
            drop(stream);
        }
    });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut t = HttpTransport::streamable(&client(), &url).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Other(e),
            ..
        } => {
            let e = e
                .downcast_ref::<mcpwire_http::Error>()
                .expect("an HTTP error");
            assert!(matches!(e, mcpwire_http::Error::Request(_)), "{e:?}");
        }
        other => panic!("expected a failed request, got {other:?}"),
    }
    assert_eq!(accepts.load(Ordering::SeqCst), 1, "not retried");
    server.abort();
}

const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}"#;
const PROGRESS: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#;

/// A server whose answer stream breaks after one event, and whose resuming
/// `GET`s are answered with `statuses` in turn, then with the answer.
async fn broken_stream_then(statuses: &'static [u16]) -> Server {
    let gets = Arc::new(AtomicUsize::new(0));
    Server::start(move |seen| {
        let gets = gets.clone();
        async move {
            match seen.method.as_str() {
                "POST" => Reply::sse().event(Some("e1"), PROGRESS).delay(20).abort(),
                "GET" => match statuses.get(gets.fetch_add(1, Ordering::SeqCst)) {
                    Some(&status) => Reply::new(status).body("not now"),
                    None => Reply::sse().event(Some("e2"), &result(2, "{}")),
                },
                _ => Reply::new(405),
            }
        }
    })
    .await
}

/// Resuming a broken answer stream retries what says "not now": a server
/// error, 429, 409 (a stream is already open); then the answer arrives.
#[tokio::test]
async fn resuming_an_answer_stream_retries_server_errors_429_and_409() {
    let server = broken_stream_then(&[500, 429, 409]).await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["method"], "notifications/progress");
    assert_eq!(next_frame(&mut t).await["id"], 2);
    let gets: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|s| s.method == "GET")
        .collect();
    assert_eq!(gets.len(), 4);
    for get in &gets {
        assert_eq!(get.header("last-event-id"), Some("e1"));
    }
}

/// Any other status ends the resumption at once: the request comes back
/// undelivered with that status. A 403 is the authorizer's to judge (the
/// default OAuth one refuses a 403 without `insufficient_scope`): it too
/// ends the resumption at once, as an authorization error.
#[tokio::test]
async fn resuming_an_answer_stream_stops_at_a_client_error() {
    for status in [400u16, 403] {
        let statuses: &'static [u16] = if status == 400 { &[400] } else { &[403] };
        let server = broken_stream_then(statuses).await;
        let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
        t.sender().send(frame(CALL)).await.unwrap();
        assert_eq!(next_frame(&mut t).await["method"], "notifications/progress");
        match next(&mut t).await {
            TransportEvent::Undelivered { frame: f, error } => {
                assert_eq!(f, CALL);
                match (status, &error) {
                    (400, TransportError::Http(s)) => assert_eq!(s.status, 400),
                    (403, TransportError::Unauthorized(e)) => {
                        let e = e
                            .downcast_ref::<mcpwire_http::Error>()
                            .expect("an http error");
                        assert_eq!(e.authorization().map(|a| a.status), Some(403), "{e:?}");
                    }
                    _ => panic!("{status}: unexpected error {error:?}"),
                }
            }
            other => panic!("expected the call undelivered with {status}, got {other:?}"),
        }
        let gets = server.seen().iter().filter(|s| s.method == "GET").count();
        assert_eq!(gets, 1, "a {status} is not retried");
    }
}

/// A server that gives a session on `initialize`, answers
/// `notifications/initialized` with `initialized`, and answers `tools/list`.
async fn initialized_answered_with(initialized: u16) -> Server {
    Server::start(move |seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("initialize")) => {
                Reply::json(&init_result(0)).header("mcp-session-id", "s1")
            }
            ("POST", Some("notifications/initialized")) => {
                Reply::new(initialized).body("Session not found")
            }
            ("POST", Some("tools/list")) => Reply::json(&result(1, r#"{"tools":[]}"#)),
            ("GET", _) => Reply::sse().hold(),
            _ => Reply::new(500),
        }
    })
    .await
}

/// A notification's error answer is handled before the next frame is
/// posted: a 404 that ends the session means the next request goes without
/// the dead session id. And a failed `initialized` leaves no GET stream.
#[tokio::test]
async fn a_failed_notification_is_settled_before_the_next_post() {
    let server = initialized_answered_with(404).await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 0);
    tx.send(frame(INITIALIZED)).await.unwrap();
    tx.send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            frame: f,
            error: TransportError::SessionExpired,
        } => assert_eq!(f, INITIALIZED),
        other => panic!("expected initialized undelivered, got {other:?}"),
    }
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let seen = server.seen();
    let list = seen
        .iter()
        .find(|s| s.rpc_method().as_deref() == Some("tools/list"))
        .unwrap();
    assert_eq!(
        list.header("mcp-session-id"),
        None,
        "the dead session was sent"
    );
    // The GET goes out beside `initialized` (the session was known); once
    // `initialized` failed it was stopped, not opened again.
    assert!(
        seen.iter().filter(|s| s.method == "GET").count() <= 1,
        "a GET stream was opened again after initialized failed: {seen:#?}"
    );
}

/// A refused connection reached no server, so the POST is tried again: a
/// server that starts listening a moment later gets it.
#[tokio::test]
async fn a_refused_connection_is_retried_until_the_server_listens() {
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let late = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(60)).await;
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 8192];
        let mut got = Vec::new();
        // The request head and its (small) body.
        while !String::from_utf8_lossy(&got).contains("tools/list") {
            let n = tokio::io::AsyncReadExt::read(&mut stream, &mut buf)
                .await
                .unwrap();
            assert!(n > 0, "the client closed");
            got.extend_from_slice(&buf[..n]);
        }
        let body = result(1, "{}");
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        tokio::io::AsyncWriteExt::write_all(&mut stream, answer.as_bytes())
            .await
            .unwrap();
        stream
    });
    let mut t = HttpTransport::streamable(&client(), &format!("http://{addr}/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    drop(late.await.unwrap());
}

/// A server that gives a session on `initialize`, 202s notifications, and
/// answers its `GET`s with `gets` in turn (an open stream once they run out).
async fn listening_server(gets: &'static [u16]) -> Server {
    let count = Arc::new(AtomicUsize::new(0));
    Server::start(move |seen| {
        let count = count.clone();
        async move {
            match (seen.method.as_str(), seen.rpc_method().as_deref()) {
                ("POST", Some("initialize")) => {
                    Reply::json(&init_result(0)).header("mcp-session-id", "s1")
                }
                ("POST", _) => Reply::new(202),
                ("GET", _) => match gets.get(count.fetch_add(1, Ordering::SeqCst)) {
                    Some(&status) => Reply::new(status),
                    None => Reply::sse().hold(),
                },
                _ => Reply::new(500),
            }
        }
    })
    .await
}

/// Each `initialized` (a new session after the old one expired sends one
/// too) opens the GET stream unless one is open: a stream that ended (406)
/// is opened again, one that runs is not doubled. (A 405 is remembered
/// instead: see `a_405_to_get_is_remembered_by_the_client_for_its_later_sessions`.)
#[tokio::test]
async fn each_initialized_opens_the_get_stream_unless_one_runs() {
    let server = listening_server(&[406]).await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    let tx = t.sender();
    let gets = |server: &Server| server.seen().iter().filter(|s| s.method == "GET").count();
    for round in 1..=3 {
        tx.send(frame(INIT)).await.unwrap();
        assert_eq!(next_frame(&mut t).await["id"], 0);
        tx.send(frame(INITIALIZED)).await.unwrap();
        // A request behind it: the GET (if any) is answered before it goes.
        tx.send(frame(LIST)).await.unwrap();
        wait_seen(&server, |s| {
            s.iter()
                .filter(|r| r.rpc_method().as_deref() == Some("tools/list"))
                .count()
                == round
        })
        .await;
        let want = if round == 1 { 1 } else { 2 };
        assert_eq!(gets(&server), want, "GETs after initialized number {round}");
    }
}

/// Only a 404 or 400 that says the session is unknown, on a request that
/// carried one, ends the session: a 500 is an ordinary failure, and the
/// session goes on.
#[tokio::test]
async fn a_server_error_with_a_session_does_not_end_it() {
    let lists = Arc::new(AtomicUsize::new(0));
    let server = Server::start(move |seen| {
        let lists = lists.clone();
        async move {
            match seen.rpc_method().as_deref() {
                Some("initialize") => Reply::json(&init_result(0)).header("mcp-session-id", "s1"),
                Some("tools/list") if lists.fetch_add(1, Ordering::SeqCst) == 0 => {
                    Reply::new(500).body("Session not found")
                }
                Some("tools/list") => Reply::json(&result(1, "{}")),
                _ => Reply::new(405),
            }
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 0);
    tx.send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Http(s),
            ..
        } => assert_eq!(s.status, 500),
        other => panic!("expected an undelivered 500, got {other:?}"),
    }
    assert_eq!(t.session_id().as_deref(), Some("s1"));
    tx.send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let last = server.seen().pop().unwrap();
    assert_eq!(last.header("mcp-session-id"), Some("s1"));
}

/// A 200 with a blank JSON body (some servers answer a notification so) is
/// an acceptance, not a frame.
#[tokio::test]
async fn a_blank_json_answer_is_no_frame() {
    let server = Server::start(|seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("tools/list")) => Reply::json(&result(1, "{}")),
            ("POST", _) => Reply::json(" \r\n"),
            _ => Reply::new(405),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(INITIALIZED)).await.unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
}

/// A 400 ends the session only if its body says the session is unknown:
/// both "session" and a word like "invalid" must be there.
#[tokio::test]
async fn a_400_about_something_else_does_not_end_the_session() {
    for body in [
        "Bad Request: invalid params",
        "Bad Request: session header seen",
    ] {
        let server = Server::start(move |seen| async move {
            match seen.rpc_method().as_deref() {
                Some("initialize") => Reply::json(&init_result(0)).header("mcp-session-id", "s1"),
                Some("tools/list") => Reply::new(400).body(body),
                _ => Reply::new(405),
            }
        })
        .await;
        let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
        let tx = t.sender();
        tx.send(frame(INIT)).await.unwrap();
        assert_eq!(next_frame(&mut t).await["id"], 0);
        tx.send(frame(LIST)).await.unwrap();
        match next(&mut t).await {
            TransportEvent::Undelivered {
                error: TransportError::Http(s),
                ..
            } => assert_eq!(s.status, 400, "{body}"),
            other => panic!("expected a plain 400 for {body:?}, got {other:?}"),
        }
        assert_eq!(t.session_id().as_deref(), Some("s1"), "{body}");
    }
}

/// A session id must be visible ASCII: one with a space is not kept (nor
/// sent back).
#[tokio::test]
async fn a_session_id_that_is_not_visible_ascii_is_ignored() {
    let server = Server::start(|seen| async move {
        match seen.rpc_method().as_deref() {
            Some("initialize") => Reply::json(&init_result(0)).header("mcp-session-id", "a b"),
            Some("tools/list") => Reply::json(&result(1, "{}")),
            _ => Reply::new(405),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 0);
    assert_eq!(t.session_id(), None);
    tx.send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let last = server.seen().pop().unwrap();
    assert_eq!(last.header("mcp-session-id"), None);
}

/// A success answer of a content type we cannot read is refused, for a
/// notification whose body is not blank and for a request even when blank.
#[tokio::test]
async fn an_unreadable_success_answer_is_refused() {
    let server = Server::start(|seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("tools/list")) => Reply::new(200),
            ("POST", _) => Reply::new(200)
                .header("content-type", "text/plain")
                .body("hello"),
            _ => Reply::new(405),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    for sent in [INITIALIZED, LIST] {
        t.sender().send(frame(sent)).await.unwrap();
        match next(&mut t).await {
            TransportEvent::Undelivered {
                frame: f,
                error: TransportError::Other(e),
            } => {
                assert_eq!(f, sent);
                let e = e.downcast_ref::<mcpwire_http::Error>().unwrap();
                assert!(
                    matches!(e, mcpwire_http::Error::UnexpectedContentType(_)),
                    "{e:?}"
                );
            }
            other => panic!("expected {sent} refused, got {other:?}"),
        }
    }
}

/// Only the answer to `initialize` sets the protocol version: a later
/// answer that happens to carry a `protocolVersion` member changes nothing.
#[tokio::test]
async fn only_the_initialize_answer_sets_the_protocol_version() {
    let server = Server::start(|seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("initialize")) => Reply::json(&init_result(0)),
            ("POST", Some("tools/call")) => Reply::sse().event(
                Some("a1"),
                &result(2, r#"{"protocolVersion":"1999-01-01","content":[]}"#),
            ),
            ("POST", _) => Reply::json(&result(1, "{}")),
            _ => Reply::new(405),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 0);
    tx.send(frame(CALL)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 2);
    assert_eq!(t.protocol_version().as_deref(), Some("2025-06-18"));
    tx.send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let last = server.seen().pop().unwrap();
    assert_eq!(last.header("mcp-protocol-version"), Some("2025-06-18"));
}
