//! The edges of the retry conditions and of the body limit, held by tests
//! because mutation testing (`cargo xtask mutants transport-http`) found
//! them unguarded: each test here fails if its condition is loosened or
//! tightened by one step.

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
        if id % 2 == 0 {
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
