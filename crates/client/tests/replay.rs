//! What is sent again when the session expires under a request: a call of
//! a tool the server annotated read-only or idempotent, and any request
//! whose caller allowed it (`Replay::Allow`). Everything else fails with
//! `OutcomeUnknown`, because the server may already have acted on it.

mod common;

use bytes::Bytes;
use common::{factory, within};
use mcpwire_client::{Client, ClientConfig, ErrorKind, Replay};
use mcpwire_codec::jsonrpc::{Id, Message};
use mcpwire_test_support::{FakeServer, MemoryPeer};
use mcpwire_transport::TransportError;
use serde_json::{Value, json};
use tokio::sync::mpsc;

async fn next_server(peers: &mut mpsc::UnboundedReceiver<MemoryPeer>) -> FakeServer {
    FakeServer::new(within(peers.recv()).await.expect("a new connection"))
}

/// A client whose session the fake server can expire, and the server.
async fn session() -> (Client, FakeServer) {
    let (f, mut peers) = factory();
    let connect = tokio::spawn(Client::connect_with(f, ClientConfig::new()));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    (client, server)
}

/// Lists `tools` to the client, so that its calls know their annotations.
async fn list_tools(client: &Client, server: &mut FakeServer, tools: Value) {
    let c = client.clone();
    let listed = tokio::spawn(async move { c.list_all_tools().await });
    let list = server.expect_request("tools/list").await;
    server.respond(&list.id, json!({ "tools": tools })).await;
    within(listed).await.unwrap().unwrap();
}

fn request_id(frame: &Bytes) -> Id {
    match Message::parse(frame.clone()).expect("a JSON-RPC frame") {
        Message::Request(r) => r.id,
        other => panic!("expected a request, got {other:?}"),
    }
}

/// Expires the session under `frame` (a request just sent) and completes
/// the new handshake.
async fn expire_under(server: &mut FakeServer, frame: Bytes) {
    server
        .undeliver(frame, TransportError::SessionExpired)
        .await;
    server.handshake().await;
}

/// Checks the server gets nothing more than a ping from now on: what
/// expired was not sent again.
async fn nothing_resent(client: &Client, server: &mut FakeServer) {
    let c = client.clone();
    let ping = tokio::spawn(async move { c.ping().await });
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
}

/// The frame the client sends next, failing at once (not at a timeout) if
/// the call ends first: a call that is not replayed fails as soon as the
/// new session is ready.
async fn resent<T: std::fmt::Debug>(
    server: &mut FakeServer,
    call: &mut tokio::task::JoinHandle<T>,
) -> Bytes {
    tokio::select! {
        frame = server.recv_frame() => frame.expect("the client is open"),
        ended = call => panic!("the call ended without being sent again: {ended:?}"),
    }
}

fn ok_result() -> Value {
    json!({"content": [{"type": "text", "text": "done"}]})
}

/// A tool annotated read-only, or idempotent, is called again on the new
/// session with the same frame, and the caller gets the second answer.
#[tokio::test]
async fn a_call_of_a_tool_annotated_safe_is_replayed_on_the_new_session() {
    for annotations in [
        json!({"readOnlyHint": true}),
        json!({"idempotentHint": true, "readOnlyHint": false}),
    ] {
        let (client, mut server) = session().await;
        let tool = json!({"name": "lookup", "inputSchema": {"type": "object"}, "annotations": annotations});
        list_tools(&client, &mut server, json!([tool])).await;

        let c = client.clone();
        let mut call = tokio::spawn(async move { c.call_tool("lookup", json!({"q": 1})).await });
        let frame = server.recv_frame().await.unwrap();
        expire_under(&mut server, frame.clone()).await;
        let again = resent(&mut server, &mut call).await;
        assert_eq!(again, frame, "{annotations}: replayed as is");
        server.respond(&request_id(&frame), ok_result()).await;
        let result = within(call).await.unwrap();
        assert_eq!(result.expect("answered").text(), "done", "{annotations}");
    }
}

/// A tool listed without a safe annotation is not called twice: the call
/// fails with `OutcomeUnknown`, not to be retried blindly.
#[tokio::test]
async fn a_call_of_a_tool_not_annotated_safe_is_not_replayed() {
    let (client, mut server) = session().await;
    let tools = json!([{"name": "delete", "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": false, "destructiveHint": true}}]);
    list_tools(&client, &mut server, tools).await;

    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("delete", json!({})).await });
    let frame = server.recv_frame().await.unwrap();
    expire_under(&mut server, frame).await;
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown);
    assert!(!err.is_retryable());
    nothing_resent(&client, &mut server).await;
}

/// A caller's `Replay::Allow` makes any request replayable: here a call of
/// a tool with no annotations, which would otherwise fail.
#[tokio::test]
async fn a_caller_allowing_replay_has_an_unannotated_call_sent_again() {
    let (client, mut server) = session().await;
    let tools = json!([{"name": "delete", "inputSchema": {"type": "object"}}]);
    list_tools(&client, &mut server, tools).await;

    let c = client.clone();
    let mut call = tokio::spawn(async move {
        c.call_tool("delete", json!({"path": "/tmp/x"}))
            .replay(Replay::Allow)
            .await
    });
    let frame = server.recv_frame().await.unwrap();
    expire_under(&mut server, frame.clone()).await;
    let again = resent(&mut server, &mut call).await;
    assert_eq!(again, frame, "the caller allowed it");
    server.respond(&request_id(&frame), ok_result()).await;
    assert_eq!(within(call).await.unwrap().unwrap().text(), "done");
}

/// `Replay::ByMethod` (the default, said explicitly) leaves a read-only
/// tool replayable: the caller's option adds permission, never removes
/// the method's.
#[tokio::test]
async fn replay_by_method_keeps_a_safe_tool_replayable() {
    let (client, mut server) = session().await;
    let tools = json!([{"name": "lookup", "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": true}}]);
    list_tools(&client, &mut server, tools).await;

    let c = client.clone();
    let mut call = tokio::spawn(async move {
        c.call_tool("lookup", json!({}))
            .replay(Replay::ByMethod)
            .await
    });
    let frame = server.recv_frame().await.unwrap();
    expire_under(&mut server, frame.clone()).await;
    assert_eq!(resent(&mut server, &mut call).await, frame);
    server.respond(&request_id(&frame), ok_result()).await;
    assert_eq!(within(call).await.unwrap().unwrap().text(), "done");
}

/// The extensions' reads (`tasks/get`, `skills/get`,
/// `resources/directory/read`) are sent again on the new session; a
/// `tasks/update`, which acts, is not.
#[tokio::test]
async fn the_extensions_reads_are_replayed_and_their_writes_are_not() {
    type Read = fn(Client) -> tokio::task::JoinHandle<Result<(), mcpwire_client::Error>>;
    let reads: [(Read, Value); 3] = [
        (
            |c| tokio::spawn(async move { c.tasks().get("t").await.map(drop) }),
            json!({"taskId": "t", "status": "working"}),
        ),
        (
            |c| tokio::spawn(async move { c.skills().get("skill://a/SKILL.md").await.map(drop) }),
            json!({"skill": {"uri": "skill://a/SKILL.md", "resources": "dynamic"}}),
        ),
        (
            |c| {
                tokio::spawn(
                    async move { c.skills().read_directory("skill://a", None).await.map(drop) },
                )
            },
            json!({"resources": []}),
        ),
    ];
    for (read, answer) in reads {
        let (client, mut server) = session().await;
        let mut call = read(client.clone());
        let frame = server.recv_frame().await.unwrap();
        expire_under(&mut server, frame.clone()).await;
        assert_eq!(resent(&mut server, &mut call).await, frame);
        server.respond(&request_id(&frame), answer).await;
        within(call).await.unwrap().unwrap();
    }

    let (client, mut server) = session().await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.tasks().update("t", serde_json::Map::new()).await });
    let frame = server.recv_frame().await.unwrap();
    expire_under(&mut server, frame).await;
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown, "{err}");
    nothing_resent(&client, &mut server).await;
}
