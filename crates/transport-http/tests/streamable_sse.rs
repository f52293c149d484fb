//! Streamable HTTP with SSE answers and the GET stream: interleaved server
//! messages, resumption with Last-Event-ID, `retry:`, the retry budget and
//! active-once flow control.

mod support;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcpwire_http::{HttpClient, HttpTransport, RetryPolicy};
use mcpwire_transport::{Active, Transport, TransportError, TransportEvent};
use support::*;

const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}"#;
const PROGRESS: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#;
const SAMPLING: &str =
    r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}"#;

#[tokio::test]
async fn an_sse_answer_delivers_server_messages_before_the_response_in_order() {
    let server = Server::start(|seen| async move {
        match seen.method.as_str() {
            "POST" => Reply::sse()
                .body("id: p0\ndata:\n\n")
                .event(Some("p1"), PROGRESS)
                .delay(20)
                .event(Some("p2"), SAMPLING)
                .event(Some("p3"), &result(2, r#"{"content":[]}"#)),
            _ => Reply::new(405),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["method"], "notifications/progress");
    assert_eq!(next_frame(&mut t).await["id"], "s1");
    assert_eq!(next_frame(&mut t).await["id"], 2);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        server.seen().len(),
        1,
        "a complete answer needs no resumption"
    );
}

#[tokio::test]
async fn a_broken_answer_stream_resumes_with_last_event_id_without_loss_or_duplicates() {
    let server = Server::start(|seen| async move {
        match (seen.method.as_str(), seen.header("last-event-id")) {
            ("POST", _) => Reply::sse()
                .event(Some("e1"), PROGRESS)
                .event(Some("e2"), SAMPLING)
                .delay(20)
                .abort(),
            ("GET", Some("e2")) => Reply::sse().event(Some("e3"), &result(2, "{}")),
            _ => Reply::new(400).body("unexpected"),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["method"], "notifications/progress");
    assert_eq!(next_frame(&mut t).await["id"], "s1");
    assert_eq!(next_frame(&mut t).await["id"], 2);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].method, "GET");
    assert_eq!(seen[1].header("accept"), Some("text/event-stream"));
    // Nothing else arrives: no duplicate, no stray event.
    t.set_active(Active::Once);
    assert!(
        tokio::time::timeout(
            Duration::from_millis(200),
            mcpwire_transport::TransportExt::next_event(&mut t)
        )
        .await
        .is_err()
    );
}

#[tokio::test]
async fn a_polling_server_is_resumed_after_its_retry_interval() {
    let server = Server::start(|seen| async move {
        match (seen.method.as_str(), seen.header("last-event-id")) {
            // The server primes, asks for 400 ms, and closes the connection
            // gracefully without ending the stream.
            ("POST", _) => Reply::sse().body("id: prime-1\nretry: 400\ndata:\n\n"),
            ("GET", Some("prime-1")) => Reply::sse().event(Some("r"), &result(2, "{}")),
            _ => Reply::new(400),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 2);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[1].at - seen[0].at >= Duration::from_millis(390),
        "retry: not honoured"
    );
}

#[tokio::test]
async fn an_answer_stream_without_ids_that_ends_early_gives_the_frame_back() {
    let server = Server::start(|_| async { Reply::sse().event(None, PROGRESS) }).await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    // Non-frame events do not wait for grants, so the frame that came first
    // on the wire may be reported after the undelivered request.
    t.set_active(Active::Many(NonZeroU32::new(10).unwrap()));
    let (mut progress, mut undelivered) = (false, false);
    for _ in 0..2 {
        match next(&mut t).await {
            TransportEvent::Frame(f) => {
                progress = std::str::from_utf8(&f).unwrap().contains("progress")
            }
            TransportEvent::Undelivered { frame: f, error } => {
                assert_eq!(f, CALL);
                // Taken by the server, its answer lost: outcome unknown.
                assert!(matches!(error, TransportError::Lost(_)), "{error:?}");
                undelivered = true;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(progress && undelivered);
}

/// Initializes against `server` (which must answer initialize and 202 the
/// rest of the POSTs), which opens the GET stream.
async fn initialized(server: &Server, client: &HttpClient) -> HttpTransport {
    let mut t = HttpTransport::streamable(client, &server.url("/mcp")).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    tx.send(frame(INITIALIZED)).await.unwrap();
    t
}

fn post_reply(seen: &Seen) -> Reply {
    match seen.rpc_method().as_deref() {
        Some("initialize") => Reply::json(&init_result(0)).header("mcp-session-id", "s"),
        _ => Reply::new(202),
    }
}

#[tokio::test]
async fn the_get_stream_delivers_server_messages_and_resumes_after_a_break() {
    let gets = Arc::new(AtomicUsize::new(0));
    let server = Server::start({
        let gets = gets.clone();
        move |seen| {
            let gets = gets.clone();
            async move {
                if seen.method != "GET" {
                    return post_reply(&seen);
                }
                match gets.fetch_add(1, Ordering::SeqCst) {
                    0 => Reply::new(409),
                    1 => Reply::sse().event(Some("g1"), PROGRESS).delay(20).abort(),
                    _ if seen.header("last-event-id") == Some("g1") => {
                        Reply::sse().event(Some("g2"), SAMPLING).hold()
                    }
                    _ => Reply::new(400).body("no last event id"),
                }
            }
        }
    })
    .await;
    let mut t = initialized(&server, &client()).await;
    assert_eq!(next_frame(&mut t).await["method"], "notifications/progress");
    assert_eq!(next_frame(&mut t).await["id"], "s1");
    let seen = server.seen();
    let gets: Vec<_> = seen.iter().filter(|r| r.method == "GET").collect();
    assert_eq!(gets.len(), 3);
    assert_eq!(gets[2].header("mcp-session-id"), Some("s"));
}

#[tokio::test]
async fn a_server_that_closes_gracefully_forever_is_stopped_by_the_budget() {
    let server = Server::start(|seen| async move {
        if seen.method == "GET" {
            // A priming event is not progress.
            Reply::sse().body("id: x\ndata:\n\n")
        } else {
            post_reply(&seen)
        }
    })
    .await;
    let config = quick_config().retry(
        RetryPolicy::default()
            .initial_delay(Duration::from_millis(10))
            .max_delay(Duration::from_millis(20))
            .max_attempts(3),
    );
    let mut t = initialized(&server, &HttpClient::new(config).unwrap()).await;
    match next(&mut t).await {
        TransportEvent::Error(TransportError::Other(e)) => {
            assert!(e.to_string().contains("retry budget"), "{e}");
        }
        other => panic!("expected the budget error, got {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let gets = server.seen().iter().filter(|r| r.method == "GET").count();
    assert_eq!(gets, 4, "one attempt plus three retries");
}

#[tokio::test]
async fn a_paused_consumer_gets_no_frames_and_then_all_of_them_in_order() {
    let server = Server::start(|_| async {
        let mut reply = Reply::sse();
        for i in 0..50 {
            let n = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progress":{i}}}}}"#
            );
            reply = reply.event(Some(&i.to_string()), &n);
        }
        reply.event(Some("end"), &result(2, "{}"))
    })
    .await;
    let client = HttpClient::new(quick_config().read_ahead(2)).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    // Paused: nothing is delivered.
    let idle = tokio::time::timeout(
        Duration::from_millis(300),
        mcpwire_transport::TransportExt::next_event(&mut t),
    )
    .await;
    assert!(idle.is_err(), "an event arrived while paused: {idle:?}");
    assert_eq!(next_frame(&mut t).await["params"]["progress"], 0);
    t.set_active(Active::Many(NonZeroU32::new(100).unwrap()));
    for i in 1..50 {
        match next(&mut t).await {
            TransportEvent::Frame(f) => {
                let v: serde_json::Value = serde_json::from_slice(&f).unwrap();
                assert_eq!(v["params"]["progress"], i);
            }
            other => panic!("expected frame {i}, got {other:?}"),
        }
    }
    match next(&mut t).await {
        TransportEvent::Frame(f) => assert!(std::str::from_utf8(&f).unwrap().contains(r#""id":2"#)),
        other => panic!("expected the response, got {other:?}"),
    }
}

#[tokio::test]
async fn a_paused_consumer_pushes_the_server_back_through_tcp() {
    const EVENTS: usize = 300;
    let payload = "x".repeat(64 << 10);
    let server = Server::start(move |_| {
        let payload = payload.clone();
        async move {
            let mut reply = Reply::sse();
            for i in 0..EVENTS {
                let n = format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"i":{i},"pad":"{payload}"}}}}"#
                );
                reply = reply.event(None, &n);
            }
            reply.event(None, &result(2, "{}"))
        }
    })
    .await;
    let client = HttpClient::new(quick_config().read_ahead(2)).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    // 19 MB cannot all sit in loopback socket buffers: the server must stall
    // (about 4.5 MB got out in the runs seen).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let sent_while_paused = server.chunks_sent();
    eprintln!("sent while paused: {sent_while_paused}");
    assert!(
        sent_while_paused < EVENTS,
        "the server sent all {sent_while_paused} events to a paused consumer"
    );
    t.set_active(Active::Many(NonZeroU32::new(1000).unwrap()));
    for i in 0..EVENTS {
        match next(&mut t).await {
            TransportEvent::Frame(f) => {
                let v: serde_json::Value = serde_json::from_slice(&f).unwrap();
                assert_eq!(v["params"]["i"], i);
            }
            other => panic!("expected frame {i}, got {other:?}"),
        }
    }
    assert!(matches!(next(&mut t).await, TransportEvent::Frame(_)));
}

#[tokio::test]
async fn an_oversized_event_is_reported_and_skipped_and_the_stream_goes_on() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"pad":"{}"}}}}"#,
        "y".repeat(200 << 10)
    );
    let server = Server::start(move |_| {
        let big = big.clone();
        async move {
            Reply::sse()
                .event(Some("1"), PROGRESS)
                .event(Some("2"), &big)
                .event(Some("3"), &result(2, "{}"))
        }
    })
    .await;
    let client = HttpClient::new(quick_config().max_frame_len(64 << 10)).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    t.set_active(Active::Many(NonZeroU32::new(10).unwrap()));
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match next(&mut t).await {
            TransportEvent::Frame(f) => {
                let v: serde_json::Value = serde_json::from_slice(&f).unwrap();
                seen.push(if v.get("id").is_some() {
                    "response"
                } else {
                    "progress"
                });
            }
            TransportEvent::Error(TransportError::Frame(e)) => {
                assert!(e.to_string().contains("exceeds"), "{e}");
                seen.push("too long");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    seen.sort();
    assert_eq!(seen, ["progress", "response", "too long"]);
}

#[tokio::test]
async fn a_notification_answered_with_an_endless_stream_does_not_hold_later_frames() {
    let server = Server::start(|seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("notifications/progress")) => Reply::sse()
                .event(None, r#"{"jsonrpc":"2.0","method":"odd"}"#)
                .hold(),
            ("POST", _) => Reply::json(&result(2, "{}")),
            _ => Reply::new(405),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(PROGRESS)).await.unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    t.set_active(Active::Many(NonZeroU32::new(10).unwrap()));
    let mut ids = Vec::new();
    for _ in 0..2 {
        match next(&mut t).await {
            TransportEvent::Frame(f) => {
                let v: serde_json::Value = serde_json::from_slice(&f).unwrap();
                ids.push(v.get("id").cloned().unwrap_or_else(|| v["method"].clone()));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(ids.contains(&serde_json::json!(2)), "{ids:?}");
    assert!(ids.contains(&serde_json::json!("odd")), "{ids:?}");
}

#[tokio::test]
async fn a_session_that_expired_while_resuming_gives_the_request_back_as_expired() {
    let server = Server::start(|seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("initialize")) => {
                Reply::json(&init_result(0)).header("mcp-session-id", "s")
            }
            ("POST", _) => Reply::sse().event(Some("a1"), PROGRESS).abort(),
            _ => Reply::new(404),
        }
    })
    .await;
    let client = HttpClient::new(quick_config().listen(false)).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    t.set_protocol_version("2025-03-26").unwrap();
    t.sender().send(frame(CALL)).await.unwrap();
    t.set_active(Active::Many(NonZeroU32::new(10).unwrap()));
    let mut expired = false;
    while !expired {
        match next(&mut t).await {
            TransportEvent::Frame(_) => {}
            TransportEvent::Undelivered {
                frame: f,
                error: TransportError::SessionExpired,
            } => {
                assert_eq!(f, CALL);
                expired = true;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(t.session_id(), None);
    let seen = server.seen();
    let get = seen.iter().find(|r| r.method == "GET").unwrap();
    assert_eq!(get.header("last-event-id"), Some("a1"));
    assert_eq!(get.header("mcp-session-id"), Some("s"));
    // The protocol version set by the client replaced the captured one.
    assert_eq!(get.header("mcp-protocol-version"), Some("2025-03-26"));
}

#[tokio::test]
async fn a_resume_refused_for_a_while_is_tried_again_and_keeps_the_session() {
    let gets = Arc::new(AtomicUsize::new(0));
    let server = Server::start({
        let gets = gets.clone();
        move |seen| {
            let gets = gets.clone();
            async move {
                match (seen.method.as_str(), seen.rpc_method().as_deref()) {
                    ("POST", Some("initialize")) => {
                        Reply::json(&init_result(0)).header("mcp-session-id", "s")
                    }
                    ("POST", _) => Reply::sse().event(Some("a1"), PROGRESS).abort(),
                    // Busy at first: not a lost session, though one is open.
                    ("GET", _) if gets.fetch_add(1, Ordering::SeqCst) == 0 => Reply::new(503),
                    ("GET", _) => Reply::sse().event(Some("a2"), &result(2, "{}")),
                    _ => Reply::new(400).body("unexpected"),
                }
            }
        }
    })
    .await;
    let client = HttpClient::new(quick_config().listen(false)).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    t.sender().send(frame(CALL)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["method"], "notifications/progress");
    assert_eq!(next_frame(&mut t).await["id"], 2);
    assert_eq!(gets.load(Ordering::SeqCst), 2);
    assert_eq!(t.session_id().as_deref(), Some("s"));
}

/// A server that answers the GET stream after `get_delay` and everything
/// else at once.
async fn slow_get_server(get_delay: Duration) -> Server {
    Server::start(move |seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("GET", _) => {
                tokio::time::sleep(get_delay).await;
                Reply::sse().hold()
            }
            (_, Some("tools/list")) => Reply::json(&result(1, r#"{"tools":[]}"#)),
            _ => post_reply(&seen),
        }
    })
    .await
}

#[tokio::test]
async fn the_get_stream_is_answered_before_the_next_frame_is_posted() {
    let server = slow_get_server(Duration::from_millis(300)).await;
    let mut t = initialized(&server, &client()).await;
    // Queued at once, but posted only once the GET stream has its answer.
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let seen = server.seen();
    let get = seen.iter().position(|r| r.method == "GET").expect("a GET");
    let list = seen
        .iter()
        .position(|r| r.rpc_method().as_deref() == Some("tools/list"))
        .expect("the tools/list POST");
    assert!(
        get < list,
        "tools/list was posted before the GET: {seen:#?}"
    );
    assert!(
        seen[list].at - seen[get].at >= Duration::from_millis(290),
        "tools/list did not wait for the GET's answer"
    );
}

#[tokio::test]
async fn a_get_stream_that_never_answers_delays_the_next_frame_only_briefly() {
    let server = slow_get_server(Duration::from_secs(3600)).await;
    let mut t = initialized(&server, &client()).await;
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
}

#[tokio::test]
async fn the_get_stream_opens_beside_initialized_not_after_it() {
    // `initialized` is answered after 300 ms, the GET at once.
    let server = Server::start(move |seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("GET", _) => Reply::sse().hold(),
            (_, Some("notifications/initialized")) => {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Reply::new(202)
            }
            (_, Some("tools/list")) => Reply::json(&result(1, r#"{"tools":[]}"#)),
            _ => post_reply(&seen),
        }
    })
    .await;
    let mut t = initialized(&server, &client()).await;
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let seen = server.seen();
    let at = |pick: &dyn Fn(&Seen) -> bool| seen.iter().find(|r| pick(r)).expect("seen").at;
    let initialized = at(&|r| r.rpc_method().as_deref() == Some("notifications/initialized"));
    let get = at(&|r| r.method == "GET");
    let list = at(&|r| r.rpc_method().as_deref() == Some("tools/list"));
    // The GET did not wait for `initialized` to be answered...
    assert!(
        get < initialized + Duration::from_millis(250),
        "the GET waited for initialized: {seen:#?}"
    );
    // ...and the next frame still waited for both.
    assert!(
        list >= initialized + Duration::from_millis(290),
        "tools/list did not wait for initialized: {seen:#?}"
    );
}

#[tokio::test]
async fn without_a_session_the_next_frame_waits_for_the_get_and_reuses_its_connection() {
    // No session id: the GET goes after `initialized` and is answered 405.
    let server = Server::start(move |seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("GET", _) => {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Reply::new(405)
            }
            (_, Some("initialize")) => Reply::json(&init_result(0)),
            (_, Some("tools/list")) => Reply::json(&result(1, r#"{"tools":[]}"#)),
            _ => Reply::new(202),
        }
    })
    .await;
    let mut t = initialized(&server, &client()).await;
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let seen = server.seen();
    let at = |pick: &dyn Fn(&Seen) -> bool| seen.iter().find(|r| pick(r)).expect("seen").at;
    let get = at(&|r| r.method == "GET");
    let list = at(&|r| r.rpc_method().as_deref() == Some("tools/list"));
    // Posted at once, tools/list would have needed a connection of its own
    // while the GET held the first.
    assert!(
        list >= get + Duration::from_millis(290),
        "tools/list did not wait for the GET's answer: {seen:#?}"
    );
    assert_eq!(server.connections(), 1, "a second connection was opened");
}
