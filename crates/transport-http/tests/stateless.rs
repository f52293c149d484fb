//! What the transport does for the stateless revision (2026-07-28): frame
//! metadata as request headers, JSON-RPC errors at 4xx as the request's
//! answer (a 404 with `-32601` is not an expired session), and the mode
//! settled without `initialize`.

mod support;

use std::sync::Arc;

use mcpwire_codec::jsonrpc::Id;
use mcpwire_http::{HttpMode, HttpTransport};
use mcpwire_transport::{FrameMeta, Outgoing, Transport, TransportError, TransportEvent};
use support::*;

const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}"#;

fn meta() -> Arc<FrameMeta> {
    Arc::new(
        FrameMeta::new()
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "server/discover")
            .header("Bad Header", "dropped, not fatal"),
    )
}

#[tokio::test]
async fn frame_metadata_becomes_headers_of_its_post_and_settles_the_mode() {
    let server = Server::start(|seen| async move {
        match seen.rpc_method().as_deref() {
            Some("server/discover") => {
                Reply::json(&result(7, r#"{"supportedVersions":["2026-07-28"]}"#))
            }
            _ => Reply::new(404),
        }
    })
    .await;
    // The automatic start: no initialize ever, yet the mode settles.
    let mut t = HttpTransport::new(&client(), &server.url("/mcp")).unwrap();
    t.sender()
        .send(Outgoing::from(frame(DISCOVER)).with_meta(Some(meta())))
        .await
        .unwrap();
    let answer = next_frame(&mut t).await;
    assert_eq!(answer["id"], 7);
    let post = &server.seen()[0];
    assert_eq!(post.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(post.header("mcp-method"), Some("server/discover"));
    assert_eq!(t.mode(), Some(HttpMode::StreamableHttp));
}

#[tokio::test]
async fn a_json_rpc_error_at_400_during_the_probe_is_the_answer_not_a_fallback() {
    let server = Server::start(|seen| async move {
        match seen.method.as_str() {
            "POST" => Reply::new(400)
                .header("content-type", "application/json")
                .body(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}"#),
            _ => Reply::new(500).body("no GET expected"),
        }
    })
    .await;
    let mut t = HttpTransport::new(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(DISCOVER)).await.unwrap();
    let answer = next_frame(&mut t).await;
    assert_eq!(answer["error"]["code"], -32022);
    assert!(
        server.seen().iter().all(|s| s.method == "POST"),
        "no legacy SSE probe"
    );
}

#[tokio::test]
async fn a_404_with_method_not_found_is_not_a_session_expiry() {
    let server = Server::start(|seen| async move {
        match seen.rpc_method().as_deref() {
            Some("initialize") => Reply::json(&init_result(0)).header("mcp-session-id", "s1"),
            Some("tools/list") => Reply::new(404)
                .header("content-type", "application/json")
                .body(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#),
            _ => Reply::new(202),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    tx.send(frame(LIST)).await.unwrap();
    let answer = next_frame(&mut t).await;
    assert_eq!(answer["error"]["code"], -32601);
    assert_eq!(t.session_id().as_deref(), Some("s1"), "the session stays");
    // An error for another id (or none) keeps the old meaning.
    let server = Server::start(|seen| async move {
        match seen.rpc_method().as_deref() {
            Some("initialize") => Reply::json(&init_result(0)).header("mcp-session-id", "s1"),
            Some("tools/list") => Reply::new(404)
                .body(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#),
            _ => Reply::new(202),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    tx.send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::SessionExpired,
            ..
        } => {}
        other => panic!("expected SessionExpired, got {other:?}"),
    }
}

#[tokio::test]
async fn abort_closes_the_answer_stream_and_frees_its_slot() {
    // The answer to request 9 streams until the client goes away; the test
    // keeps the feed, and sees it close when the server drops the body.
    let (feed_tx, feed_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let feed = Arc::new(std::sync::Mutex::new(Some(feed_rx)));
    let server = Server::start(move |seen| {
        let feed = feed.clone();
        async move {
            match seen.rpc_method().as_deref() {
                Some("tools/call") => {
                    let rx = feed.lock().unwrap().take().expect("one call");
                    Reply::sse().feed(rx)
                }
                _ => Reply::json(&result(10, "{}")),
            }
        }
    })
    .await;
    let config = quick_config().max_in_flight(1);
    let client = mcpwire_http::HttpClient::new(config).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}}"#;
    // Its metadata (a stateless-era request) arms the aborts.
    t.sender()
        .send(Outgoing::from(frame(call)).with_meta(Some(meta())))
        .await
        .unwrap();
    feed_tx
        .send(sse_message(None, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":1}}"#))
        .unwrap();
    assert_eq!(next_frame(&mut t).await["method"], "notifications/progress");
    assert!(t.sender().abort(&Id::Number(9)), "Streamable HTTP can");
    tokio::time::timeout(WAIT, feed_tx.closed())
        .await
        .expect("the server saw the stream closed");
    // The one in-flight slot is free again: the next request goes and is
    // answered; nothing at all came for the aborted one.
    t.sender()
        .send(frame(r#"{"jsonrpc":"2.0","id":10,"method":"tools/list"}"#))
        .await
        .unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 10);
    // A request aborted while still queued is never posted.
    let queued = r#"{"jsonrpc":"2.0","id":11,"method":"tools/list"}"#;
    assert!(t.sender().abort(&Id::Number(11)));
    t.sender()
        .send(Outgoing::from(frame(queued)).with_meta(Some(meta())))
        .await
        .unwrap();
    t.sender()
        .send(frame(r#"{"jsonrpc":"2.0","id":12,"method":"tools/list"}"#))
        .await
        .unwrap();
    let _ = next_frame(&mut t).await;
    let posted: Vec<_> = server
        .seen()
        .iter()
        .map(|s| s.body_str().to_owned())
        .collect();
    assert!(
        !posted.iter().any(|b| b.contains(r#""id":11"#)),
        "{posted:?}"
    );
}

#[tokio::test]
async fn without_metadata_no_request_can_be_aborted() {
    // The `initialize` era's requests carry no frame metadata: closing a
    // stream is not their cancellation, so the transport says it cannot
    // (the client then sends `notifications/cancelled`) and the request
    // runs to its answer.
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let release = Arc::new(std::sync::Mutex::new(Some(release_rx)));
    let server = Server::start(move |_seen| {
        let release = release.clone();
        async move {
            let rx = release.lock().unwrap().take();
            if let Some(rx) = rx {
                let _ = rx.await;
            }
            Reply::json(&result(4, "{}"))
        }
    })
    .await;
    let client = mcpwire_http::HttpClient::new(quick_config()).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender()
        .send(frame(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#))
        .await
        .unwrap();
    while server.seen().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(
        !t.sender().abort(&Id::Number(4)),
        "no metadata yet: the caller must cancel another way"
    );
    release_tx.send(()).unwrap();
    assert_eq!(
        next_frame(&mut t).await["id"],
        4,
        "the request ran to its answer"
    );
}
