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

/// The answer of a server that returns, for `tools/list` with id `n`, a JSON
/// body of exactly `len(n)` bytes, sent in two pieces.
async fn sized_answers(len: fn(u64) -> usize) -> Server {
    Server::start(move |seen| async move {
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        let id = v["id"].as_u64().unwrap();
        let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"pad":""#);
        let tail = r#""}}"#;
        let pad = "p".repeat(len(id) - head.len() - tail.len());
        let body = format!("{head}{pad}{tail}");
        let (a, b) = body.split_at(body.len() / 2);
        Reply::new(200)
            .header("content-type", "application/json")
            .body(a)
            .delay(5)
            .body(b)
    })
    .await
}

const MAX: usize = 4096;

/// A JSON answer of exactly the maximum frame length is delivered; one byte
/// more is refused with a typed error naming the limit.
#[tokio::test]
async fn a_json_answer_at_the_limit_is_delivered_and_one_byte_over_is_not() {
    let server = sized_answers(|id| if id == 1 { MAX } else { MAX + 1 }).await;
    let client = HttpClient::new(quick_config().max_frame_len(MAX)).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    t.set_active(Active::Once);
    match next(&mut t).await {
        TransportEvent::Frame(f) => assert_eq!(f.len(), MAX),
        other => panic!("expected the answer at the limit, got {other:?}"),
    }
    let over = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    t.sender().send(frame(over)).await.unwrap();
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
        other => panic!("expected the answer over the limit refused, got {other:?}"),
    }
}
