//! A task that serves a fleet without keeping it alive: `WeakManager`
//! upgrades only while a `Manager` is held, and `closed` resolves when the
//! fleet is closed or dropped.

mod common;

use std::time::Duration;

use common::*;
use mcpwire_manager::{ConnectPolicy, Manager, ServerSpec};

fn manager() -> Manager {
    let (connector, _peers) = memory();
    let spec = ServerSpec::with_connector("a", connector).connect(ConnectPolicy::Manual);
    Manager::builder().server(spec).build().unwrap()
}

#[tokio::test]
async fn closed_resolves_on_close_and_not_before() {
    let manager = manager();
    let closed = tokio::spawn(manager.closed());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!closed.is_finished(), "nothing closed it yet");
    assert!(!manager.is_closed());
    manager.close().await;
    assert!(manager.is_closed());
    within(closed).await.unwrap();
}

#[tokio::test]
async fn a_weak_manager_does_not_keep_the_fleet_alive() {
    let manager = manager();
    let weak = manager.downgrade();
    assert!(format!("{weak:?}").starts_with("WeakManager"), "{weak:?}");
    let closed = tokio::spawn(manager.closed());
    let again = weak.upgrade().expect("the fleet is held");
    assert_eq!(again.servers(), ["a"]);
    drop(again);
    drop(manager);
    assert!(weak.upgrade().is_none(), "dropped with its last manager");
    // Dropped is closed too.
    within(closed).await.unwrap();
}
