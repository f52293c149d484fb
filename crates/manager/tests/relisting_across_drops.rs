//! A list change that falls due while the connection is down, held here
//! because mutation testing (`cargo xtask mutants manager`) found it
//! unguarded (`monitor` in `src/start.rs`): a relisting waits for the
//! connection to be ready, and a change whose debounce passed while it was
//! not is read as soon as the new session is up, not one more debounce
//! later; and a relisting answered just before the connection drops does
//! not report the server ready again.

mod common;

use std::time::Duration;

use common::*;
use mcpwire_client::{ClientConfig, Reconnect};
use mcpwire_manager::{Event, Health, Manager, ServerSpec};
use serde_json::json;
use tokio::time::Instant;

const DEBOUNCE: Duration = Duration::from_millis(600);

#[tokio::test]
async fn a_change_due_while_the_connection_is_down_is_read_once_it_is_back() {
    let (c, mut peers) = memory();
    let reconnect = Reconnect::new()
        .initial_delay(Duration::from_millis(20))
        .max_delay(Duration::from_millis(50));
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("s", c))
        .client_config(ClientConfig::new().reconnect(reconnect))
        .debounce(DEBOUNCE)
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = peers.next().await;
    up(&mut server, &["old"]).await;
    within(connect).await.unwrap().unwrap();

    // A change, then the connection drops before its debounce is over.
    let changed = Instant::now();
    server
        .notify("notifications/tools/list_changed", json!({}))
        .await;
    server.crash(1, &["boom"]).await;
    // The client connects again; the new server holds its handshake until
    // the change is well past due.
    let mut server = peers.next().await;
    tokio::time::sleep_until(changed + DEBOUNCE + Duration::from_millis(300)).await;
    server.handshake_with(tools_only()).await;
    let back = Instant::now();
    let list = server.expect_request("tools/list").await;
    let waited = back.elapsed();
    assert!(
        waited < DEBOUNCE / 2,
        "the overdue change was read {waited:?} after the session was up"
    );
    server.respond(&list.id, tool_list(&["new"])).await;
    within(async {
        while manager.route("s__new").is_err() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(manager.route("s__old").is_err(), "no stale tools");
    manager.close().await;
}

#[tokio::test]
async fn a_relisting_answered_as_the_connection_drops_leaves_a_degraded_server_unready() {
    let (c, mut peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("s", c))
        // No reconnection: the drop fails the server.
        .client_config(ClientConfig::new())
        .debounce(Duration::from_millis(10))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = peers.next().await;
    up(&mut server, &["old"]).await;
    within(connect).await.unwrap().unwrap();
    let mut health = manager.watch_health("s").unwrap();

    // Degraded by a relisting that fails.
    server
        .notify("notifications/tools/list_changed", json!({}))
        .await;
    let list = server.expect_request("tools/list").await;
    server
        .respond_error(&list.id, -32603, "Internal error")
        .await;
    within(health.wait_for(|h| matches!(h, Health::Degraded(_))))
        .await
        .unwrap();

    // The next relisting is answered, and the server is gone right after:
    // the answer and the drop are both queued before the client's tasks
    // run (the test's runtime has one thread), so the client has seen the
    // drop by the time the relisting's caller resumes. If it had not, the
    // server would be ready again and this test would fail, not pass.
    let mut events = manager.events();
    server
        .notify("notifications/tools/list_changed", json!({}))
        .await;
    let list = server.expect_request("tools/list").await;
    server.respond(&list.id, tool_list(&["new"])).await;
    server.crash(1, &["boom"]).await;
    within(health.wait_for(Health::is_failed)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let changes: Vec<&str> = drain(&mut events)
        .iter()
        .filter_map(|e| match e {
            Event::HealthChanged { health, .. } => Some(health.name()),
            _ => None,
        })
        .collect();
    assert_eq!(changes, ["failed"], "a lost server was reported ready");
    manager.close().await;
}
