//! What a tool listing served from the response cache teaches the client
//! about its tools (their output schemas, replay safety, header
//! annotations), in the stateless era, whose listings are kept for the
//! time their caching hints give, across connections.

mod common;

use std::time::Duration;

use common::{answer_probe_as_stateless, factory, within};
use mcpwire_client::{Client, ClientConfig, ConnectionState, ErrorKind, Reconnect};
use mcpwire_test_support::{FakeServer, MemoryPeer};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Answers the probe of a new connection, as a stateless server whose
/// tools do not announce their changes (so no listening stream opens).
async fn next_server(peers: &mut mpsc::UnboundedReceiver<MemoryPeer>) -> FakeServer {
    let mut server = FakeServer::new(within(peers.recv()).await.expect("a new connection"));
    answer_probe_as_stateless(&mut server).await;
    server
}

/// A new connection makes the client forget what it learnt of the tools
/// (the server may be a new process), but not the response cache's
/// listing, which its hints keep for a minute. A call after the reconnect
/// lists the tools again from that cache: what it learns from that listing
/// must hold as if the server had sent it, here the tool's output schema,
/// which the call's answer breaks.
///
/// (The first listing is request 1, after the probe's 0: a listing whose
/// first page came from the cache has no request id, and must not be taken
/// for that first one, whose answer came before the reconnect.)
#[tokio::test]
async fn a_listing_from_the_cache_after_a_reconnect_still_validates_the_tools_output() {
    let (f, mut peers) = factory();
    let config = ClientConfig::new().reconnect(
        Reconnect::new()
            .initial_delay(Duration::from_millis(20))
            .max_delay(Duration::from_millis(100))
            .max_attempts(3),
    );
    let connect = tokio::spawn(Client::connect_with(f, config));
    let mut server = next_server(&mut peers).await;
    let client = within(connect).await.unwrap().unwrap();

    let c = client.clone();
    let listed = tokio::spawn(async move { c.list_all_tools().await });
    let list = server.expect_request("tools/list").await;
    let tools = json!({"resultType": "complete", "tools": [{
        "name": "sum",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}},
                         "required": ["sum"]}
    }], "ttlMs": 60_000, "cacheScope": "public"});
    server.respond(&list.id, tools).await;
    within(listed).await.unwrap().unwrap();

    // The connection drops and comes back: a second session.
    let mut sessions = client.sessions();
    server.crash(1, &[]).await;
    let mut server = next_server(&mut peers).await;
    within(sessions.wait_for(|n| *n == 2)).await.unwrap();
    let mut states = client.watch_state();
    within(states.wait_for(ConnectionState::is_ready))
        .await
        .unwrap();

    // The listing comes from the cache: the first request is the call.
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("sum", json!({})).await });
    let req = server.expect_request("tools/call").await;
    let answer: Value =
        json!({"resultType": "complete", "content": [], "structuredContent": {"sum": "three"}});
    server.respond(&req.id, answer).await;
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SchemaValidation, "{err:?}");
    client.close().await;
}
