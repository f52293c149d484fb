//! The rules that decide what is tried again: which tool calls may be
//! replayed after a lost session, and how many reconnection attempts an
//! outage gets. Mutation testing (`cargo xtask mutants client`) found both
//! unguarded at their edges.

mod common;

use std::time::Duration;

use common::{factory, within};
use mcpwire_client::types::Tool;
use mcpwire_client::{Client, ClientConfig, ConnectionState, Reconnect};
use mcpwire_test_support::{FakeServer, MemoryPeer};
use serde_json::{Value, json};
use tokio::sync::mpsc;

fn tool(annotations: Option<Value>) -> Tool {
    let mut t = json!({"name": "t", "inputSchema": {"type": "object"}});
    if let Some(a) = annotations {
        t["annotations"] = a;
    }
    serde_json::from_value(t).expect("a tool")
}

/// A call may be replayed when the tool is read-only or idempotent, either
/// one being enough; anything less is not replayed.
#[test]
fn a_tool_is_replay_safe_when_read_only_or_idempotent() {
    let safe = |a: Value| tool(Some(a)).is_replay_safe();
    assert!(safe(json!({"readOnlyHint": true})));
    assert!(safe(json!({"idempotentHint": true})));
    assert!(safe(json!({"readOnlyHint": true, "idempotentHint": false})));
    assert!(safe(json!({"readOnlyHint": false, "idempotentHint": true})));
    assert!(!safe(
        json!({"readOnlyHint": false, "idempotentHint": false})
    ));
    assert!(!safe(
        json!({"destructiveHint": false, "openWorldHint": false})
    ));
    assert!(!safe(json!({})));
    assert!(!tool(None).is_replay_safe());
}

async fn next_server(peers: &mut mpsc::UnboundedReceiver<MemoryPeer>) -> FakeServer {
    FakeServer::new(within(peers.recv()).await.expect("a new connection"))
}

/// The budget is per outage: a connection that became ready starts the
/// count over, so a server that crashes now and then is reconnected every
/// time, while one that never gets ready again uses the budget up.
#[tokio::test]
async fn each_outage_after_a_ready_connection_gets_the_whole_budget() {
    let (f, mut peers) = factory();
    let one_attempt = Reconnect::new()
        .initial_delay(Duration::from_millis(10))
        .max_delay(Duration::from_millis(20))
        .max_attempts(1);
    let connect = tokio::spawn(Client::connect_with(
        f,
        ClientConfig::new().reconnect(one_attempt),
    ));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    let mut states = client.watch_state();
    for _ in 0..3 {
        server.crash(1, &[]).await;
        server = next_server(&mut peers).await;
        server.handshake().await;
        within(states.wait_for(ConnectionState::is_ready))
            .await
            .unwrap();
    }
    // An outage whose one attempt never gets ready: the budget is spent.
    server.crash(1, &[]).await;
    let mut last = next_server(&mut peers).await;
    last.expect_request("initialize").await;
    last.crash(1, &[]).await;
    let s = within(states.wait_for(ConnectionState::is_closed))
        .await
        .unwrap()
        .clone();
    assert!(matches!(s, ConnectionState::Closed(Some(_))), "{s:?}");
    assert!(peers.try_recv().is_err(), "no attempt past the budget");
}
