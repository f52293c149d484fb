//! The legacy HTTP+SSE transport, the receive-only SSE transport and the
//! automatic fallback, against the scripted test server.

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcpwire_http::{EndpointError, HttpMode, HttpTransport};
use mcpwire_transport::{CloseReason, SendError, Transport, TransportError, TransportEvent};
use support::*;
use tokio::sync::mpsc;

/// A legacy server: each `GET /sse` announces `/messages?sid=N` for a new
/// session N; each POST there is answered on that session's event stream with
/// a result carrying the request's id. A POST to `/sse` itself answers 405
/// (what the fallback's probe meets).
async fn legacy_server() -> Server {
    type Feeds = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<String>>>>;
    let feeds: Feeds = Arc::default();
    Server::start(move |seen| {
        let feeds = feeds.clone();
        async move {
            match (seen.method.as_str(), seen.path.as_str()) {
                ("GET", "/sse") => {
                    let (tx, rx) = mpsc::unbounded_channel();
                    let mut feeds = feeds.lock().unwrap();
                    let sid = (feeds.len() + 1).to_string();
                    feeds.insert(sid.clone(), tx);
                    Reply::sse()
                        .body(&format!("event: endpoint\ndata: /messages?sid={sid}\n\n"))
                        .feed(rx)
                }
                ("POST", path) if path.starts_with("/messages?sid=") => {
                    let sid = &path["/messages?sid=".len()..];
                    let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
                    if let Some(id) = v.get("id") {
                        let answer = if v["method"] == "initialize" {
                            init_result(id.as_u64().unwrap())
                        } else {
                            result(id.as_u64().unwrap(), r#"{"tools":[]}"#)
                        };
                        let tx = feeds.lock().unwrap().get(sid).cloned().unwrap();
                        tx.send(sse_message(None, &answer)).unwrap();
                    }
                    Reply::new(202).body("Accepted")
                }
                ("POST", "/sse") => Reply::new(405),
                _ => Reply::new(404),
            }
        }
    })
    .await
}

#[tokio::test]
async fn legacy_sse_posts_to_the_endpoint_and_reads_answers_from_the_stream() {
    let server = legacy_server().await;
    let mut t = HttpTransport::legacy_sse(&client(), &server.url("/sse")).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 0);
    tx.send(frame(INITIALIZED)).await.unwrap();
    tx.send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    assert_eq!(t.mode(), Some(HttpMode::LegacySse));
    assert_eq!(t.info().kind, "sse");
    let posts: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 3);
    assert!(posts.iter().all(|p| p.path == "/messages?sid=1"));
    assert!(
        posts
            .iter()
            .all(|p| p.header("content-type") == Some("application/json"))
    );
}

#[tokio::test]
async fn the_fallback_finds_a_legacy_server_and_caches_the_outcome() {
    let server = legacy_server().await;
    let client = client();
    let url = server.url("/sse");
    let mut t = HttpTransport::new(&client, &url).unwrap();
    assert_eq!(t.mode(), None);
    t.sender().send(frame(INIT)).await.unwrap();
    let init = next_frame(&mut t).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(t.mode(), Some(HttpMode::LegacySse));
    assert_eq!(client.cached_mode(&url), Some(HttpMode::LegacySse));
    let probes = server
        .seen()
        .iter()
        .filter(|r| r.path == "/sse" && r.method == "POST")
        .count();
    assert_eq!(probes, 1);

    // A second transport to the same URL skips the probe.
    let mut t2 = HttpTransport::new(&client, &url).unwrap();
    t2.sender().send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut t2).await["id"], 0);
    let probes = server
        .seen()
        .iter()
        .filter(|r| r.path == "/sse" && r.method == "POST")
        .count();
    assert_eq!(probes, 1);
}

#[tokio::test]
async fn the_fallback_stays_streamable_and_reports_both_refusals_when_get_has_no_endpoint() {
    let server = Server::start(|_| async { Reply::new(405).body("no") }).await;
    let mut t = HttpTransport::new(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(INIT)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            frame: f,
            error: TransportError::Other(e),
        } => {
            assert_eq!(f, INIT);
            let e = e
                .downcast_ref::<mcpwire_http::Error>()
                .expect("the transport's error");
            assert_eq!(e.status().map(|s| s.status), Some(405));
            assert!(matches!(e, mcpwire_http::Error::NoEndpoint { .. }), "{e:?}");
            let cause = std::error::Error::source(e).expect("what the GET found");
            assert!(cause.to_string().contains("HTTP status 405"), "{cause}");
        }
        other => panic!("expected the refusals back, got {other:?}"),
    }
    let methods: Vec<_> = server.seen().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["POST", "GET"]);
}

#[tokio::test]
async fn the_fallback_uses_streamable_http_when_the_post_succeeds() {
    let server =
        Server::start(|_| async { Reply::json(&init_result(0)).header("mcp-session-id", "abc") })
            .await;
    let client = client();
    let url = server.url("/mcp");
    let mut t = HttpTransport::new(&client, &url).unwrap();
    t.sender().send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    assert_eq!(t.mode(), Some(HttpMode::StreamableHttp));
    assert_eq!(client.cached_mode(&url), Some(HttpMode::StreamableHttp));
    assert_eq!(t.session_id().as_deref(), Some("abc"));
}

#[tokio::test]
async fn a_retried_legacy_post_is_built_like_the_first() {
    let posts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = Server::start(move |seen| {
        let posts = posts.clone();
        async move {
            match (seen.method.as_str(), seen.path.as_str()) {
                ("GET", "/sse") => Reply::sse()
                    .body("event: endpoint\ndata: /messages?sid=1\n\n")
                    .hold(),
                ("POST", "/messages?sid=1") => {
                    // Busy once, then accepted.
                    if posts.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                        Reply::new(503).header("retry-after", "0")
                    } else {
                        Reply::new(202)
                    }
                }
                _ => Reply::new(404),
            }
        }
    })
    .await;
    let t = HttpTransport::legacy_sse(&client(), &server.url("/sse")).unwrap();
    // A version the client set after negotiating: legacy POSTs never carry
    // it, retried or not.
    t.set_protocol_version("2024-11-05").unwrap();
    t.sender().send(frame(INITIALIZED)).await.unwrap();
    let seen = wait_seen(&server, |s| {
        s.iter().filter(|r| r.method == "POST").count() == 2
    })
    .await;
    let posts: Vec<_> = seen.iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts[0].path, posts[1].path);
    assert_eq!(posts[0].body, posts[1].body);
    for post in &posts {
        assert_eq!(post.header("mcp-protocol-version"), None, "{post:?}");
        assert_eq!(post.header("content-type"), Some("application/json"));
    }
    let names = |r: &support::Seen| {
        let mut n: Vec<String> = r.headers.keys().map(|k| k.to_string()).collect();
        n.sort();
        n
    };
    assert_eq!(names(posts[0]), names(posts[1]));
}

#[tokio::test]
async fn an_endpoint_on_another_origin_is_refused() {
    let server = Server::start(|_| async {
        Reply::sse()
            .body("event: endpoint\ndata: http://example.com/messages\n\n")
            .hold()
    })
    .await;
    let mut t = HttpTransport::legacy_sse(&client(), &server.url("/sse")).unwrap();
    match next(&mut t).await {
        TransportEvent::Closed(CloseReason::Error(TransportError::Other(e))) => {
            // The endpoint problem is typed, and chained under its layer.
            let e = e
                .downcast_ref::<mcpwire_http::Error>()
                .expect("an HTTP error");
            match e {
                mcpwire_http::Error::Endpoint(EndpointError::OtherOrigin { endpoint }) => {
                    assert_eq!(endpoint, "http://example.com/messages");
                }
                other => panic!("expected another origin, got {other:?}"),
            }
            let source = std::error::Error::source(e).expect("the endpoint error");
            assert!(source.to_string().contains("origin"), "{source}");
        }
        other => panic!("expected a refused endpoint, got {other:?}"),
    }
}

#[tokio::test]
async fn receive_only_sse_delivers_events_and_refuses_to_send() {
    let server = Server::start(|_| async {
        Reply::sse()
            .event(Some("1"), r#"{"jsonrpc":"2.0","method":"a"}"#)
            .event(Some("2"), r#"{"jsonrpc":"2.0","method":"b"}"#)
            .hold()
    })
    .await;
    let mut t = HttpTransport::receive_only_sse(&client(), &server.url("/events")).unwrap();
    assert_eq!(next_frame(&mut t).await["method"], "a");
    assert_eq!(next_frame(&mut t).await["method"], "b");
    match t.sender().send(frame(LIST)).await {
        Err(SendError::NotSupported(f)) => assert_eq!(f.frame, LIST),
        other => panic!("expected NotSupported at send time, got {other:?}"),
    }
    assert_eq!(t.mode(), Some(HttpMode::ReceiveOnlySse));
}

#[tokio::test]
async fn a_lost_legacy_stream_reconnects_and_reports_the_new_session() {
    let gets = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = Server::start({
        let gets = gets.clone();
        move |seen| {
            let gets = gets.clone();
            async move {
                if seen.method == "POST" {
                    return Reply::new(202);
                }
                match gets.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                    0 => Reply::sse()
                        .body("event: endpoint\ndata: /messages?sid=1\n\n")
                        .event(Some("7"), r#"{"jsonrpc":"2.0","method":"a"}"#)
                        .delay(20)
                        .abort(),
                    _ => Reply::sse()
                        .body("event: endpoint\ndata: /messages?sid=2\n\n")
                        .event(None, r#"{"jsonrpc":"2.0","method":"b"}"#)
                        .hold(),
                }
            }
        }
    })
    .await;
    let mut t = HttpTransport::legacy_sse(&client(), &server.url("/sse")).unwrap();
    assert_eq!(next_frame(&mut t).await["method"], "a");
    t.set_active(mcpwire_transport::Active::Many(
        std::num::NonZeroU32::new(5).unwrap(),
    ));
    let (mut expired, mut b) = (false, false);
    while !(expired && b) {
        match next(&mut t).await {
            TransportEvent::Error(TransportError::SessionExpired) => expired = true,
            TransportEvent::Frame(f) => {
                assert!(std::str::from_utf8(&f).unwrap().contains(r#""b""#));
                b = true;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    let seen = server.seen();
    assert_eq!(seen[1].header("last-event-id"), Some("7"));
    t.sender().send(frame(LIST)).await.unwrap();
    let seen = wait_seen(&server, |s| s.iter().any(|r| r.method == "POST")).await;
    let post = seen.iter().find(|r| r.method == "POST").unwrap();
    assert_eq!(post.path, "/messages?sid=2");
}

#[tokio::test]
async fn a_legacy_stream_that_cannot_come_back_closes_the_transport() {
    let gets = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = Server::start({
        let gets = gets.clone();
        move |_| {
            let first = gets.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
            async move {
                if first {
                    Reply::sse().body("event: endpoint\ndata: /m\n\n")
                } else {
                    Reply::new(503)
                }
            }
        }
    })
    .await;
    let mut t = HttpTransport::legacy_sse(&client(), &server.url("/sse")).unwrap();
    match next(&mut t).await {
        TransportEvent::Closed(CloseReason::Error(e)) => {
            assert!(format!("{e:?}").contains("RetriesExhausted"), "{e:?}");
        }
        other => panic!("expected Closed(Error), got {other:?}"),
    }
    assert!(
        mcpwire_transport::TransportExt::next_event(&mut t)
            .await
            .is_none()
    );
    // One stream, then five reconnect attempts (the quick policy's budget).
    assert_eq!(server.seen().len(), 6);
}
