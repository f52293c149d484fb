//! Reading a server's lists: at start, and again after a `list_changed` of
//! one kind, once the debounce has passed. Resource templates are optional
//! (a server without them answers "method not found"); any other failure
//! of a listing is a failure.

mod common;

use std::time::{Duration, Instant};

use common::*;
use mcpwire_client::ClientConfig;
use mcpwire_manager::{Event, Manager, ServerSpec};
use mcpwire_test_support::FakeServer;
use serde_json::{Value, json};

const DEBOUNCE: Duration = Duration::from_millis(300);

/// An `initialize` result with prompts and resources, no tools.
fn prompts_and_resources() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"prompts": {"listChanged": true}, "resources": {"listChanged": true}},
        "serverInfo": {"name": "fake", "version": "1.0.0"}
    })
}

fn prompts(names: &[&str]) -> Value {
    let list: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
    json!({ "prompts": list })
}

fn resources(uris: &[&str]) -> Value {
    let list: Vec<Value> = uris.iter().map(|u| json!({"uri": u, "name": u})).collect();
    json!({ "resources": list })
}

/// Answers the next `resources/templates/list` with "method not found",
/// as a server without templates does.
async fn no_templates(server: &mut FakeServer) {
    let r = server.expect_request("resources/templates/list").await;
    server
        .respond_error(&r.id, -32601, "Method not found")
        .await;
}

/// A manager of one server `a`, started: one prompt, one resource, and no
/// templates (answered "method not found"). Its client does not reconnect.
async fn started() -> (Manager, FakeServer) {
    let (a, mut peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .client_config(ClientConfig::new())
        .debounce(DEBOUNCE)
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = peers.next().await;
    server.handshake_with(prompts_and_resources()).await;
    let r = server.expect_request("prompts/list").await;
    server.respond(&r.id, prompts(&["p1"])).await;
    let r = server.expect_request("resources/list").await;
    server.respond(&r.id, resources(&["docs://one"])).await;
    no_templates(&mut server).await;
    let report = within(connect).await.unwrap().unwrap();
    assert_eq!(report.connected, ["a"], "{report:?}");
    (manager, server)
}

fn prompt_names(manager: &Manager) -> Vec<String> {
    manager
        .prompts()
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect()
}

fn resource_uris(manager: &Manager) -> Vec<String> {
    manager
        .resources()
        .into_iter()
        .map(|r| r.resource.uri)
        .collect()
}

/// Waits (bounded) until `done` holds.
async fn eventually(mut done: impl FnMut() -> bool) {
    within(async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

/// A server without resource templates starts: "method not found" to
/// `resources/templates/list` is an empty list, not a failure.
#[tokio::test]
async fn a_server_without_templates_starts_with_its_resources() {
    let (manager, _server) = started().await;
    assert!(manager.health("a").unwrap().is_ready());
    assert_eq!(resource_uris(&manager), ["docs://one"]);
    assert_eq!(prompt_names(&manager), ["a__p1"]);
    assert!(manager.resource_templates().is_empty());
    manager.close().await;
}

/// Any other error listing the templates fails the server's start: its
/// lists would be incomplete without anyone knowing.
#[tokio::test]
async fn a_template_listing_that_fails_otherwise_fails_the_start() {
    let (a, mut peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = peers.next().await;
    server.handshake_with(prompts_and_resources()).await;
    let r = server.expect_request("prompts/list").await;
    server.respond(&r.id, prompts(&[])).await;
    let r = server.expect_request("resources/list").await;
    server.respond(&r.id, resources(&["docs://one"])).await;
    let r = server.expect_request("resources/templates/list").await;
    server.respond_error(&r.id, -32603, "Internal error").await;
    let report = within(connect).await.unwrap().unwrap();
    assert_eq!(report.failed.len(), 1, "{report:?}");
    assert!(manager.health("a").unwrap().is_failed());
    assert!(resource_uris(&manager).is_empty());
    manager.close().await;
}

/// A `prompts/list_changed` alone re-reads the prompts (and nothing else),
/// not before the debounce has passed.
#[tokio::test]
async fn a_prompt_change_alone_relists_the_prompts_after_the_debounce() {
    let (manager, mut server) = started().await;
    let sent = Instant::now();
    server
        .notify("notifications/prompts/list_changed", json!({}))
        .await;
    let r = server.expect_request("prompts/list").await;
    assert!(
        sent.elapsed() >= DEBOUNCE,
        "listed {:?} after the change, within the {DEBOUNCE:?} debounce",
        sent.elapsed()
    );
    server.respond(&r.id, prompts(&["p1", "p2"])).await;
    eventually(|| prompt_names(&manager) == ["a__p1", "a__p2"]).await;
    assert_eq!(resource_uris(&manager), ["docs://one"]);
    manager.close().await;
}

/// A `resources/list_changed` alone re-reads the resources and their
/// templates; a server without templates still has none.
#[tokio::test]
async fn a_resource_change_alone_relists_the_resources() {
    let (manager, mut server) = started().await;
    server
        .notify("notifications/resources/list_changed", json!({}))
        .await;
    let r = server.expect_request("resources/list").await;
    server
        .respond(&r.id, resources(&["docs://one", "docs://two"]))
        .await;
    no_templates(&mut server).await;
    eventually(|| resource_uris(&manager) == ["docs://one", "docs://two"]).await;
    assert!(manager.health("a").unwrap().is_ready());
    assert_eq!(prompt_names(&manager), ["a__p1"]);
    manager.close().await;
}

/// A listing that fails after a change leaves the old lists and marks the
/// server degraded, saying why; the next listing that works makes it ready
/// again.
#[tokio::test]
async fn a_failed_relisting_degrades_the_server_until_one_works() {
    let (manager, mut server) = started().await;
    let mut health = manager.watch_health("a").unwrap();
    server
        .notify("notifications/prompts/list_changed", json!({}))
        .await;
    let r = server.expect_request("prompts/list").await;
    server.respond_error(&r.id, -32603, "Internal error").await;
    let degraded = within(health.wait_for(|h| !h.is_ready()))
        .await
        .unwrap()
        .clone();
    let cause = degraded.error().expect("a cause").to_string();
    assert!(!degraded.is_failed(), "{degraded:?}");
    assert!(cause.contains("a"), "{cause}");
    assert_eq!(prompt_names(&manager), ["a__p1"], "the old list is kept");

    server
        .notify("notifications/prompts/list_changed", json!({}))
        .await;
    let r = server.expect_request("prompts/list").await;
    server.respond(&r.id, prompts(&["p2"])).await;
    within(health.wait_for(|h| h.is_ready())).await.unwrap();
    assert_eq!(prompt_names(&manager), ["a__p2"]);
    manager.close().await;
}

/// A server that goes away for good (no reconnection policy) takes its
/// items out of the catalogue and is marked failed.
#[tokio::test]
async fn a_server_gone_for_good_leaves_the_catalogue() {
    let (manager, server) = started().await;
    let mut health = manager.watch_health("a").unwrap();
    server.crash(1, &["bye"]).await;
    within(health.wait_for(|h| h.is_failed())).await.unwrap();
    eventually(|| resource_uris(&manager).is_empty()).await;
    assert!(prompt_names(&manager).is_empty());
    assert!(manager.client("a").is_none());
    manager.close().await;
}

/// A server that goes away while its lists are read again is failed by
/// the closed connection, not degraded first by the listing it cut short:
/// one health change, to failed.
#[tokio::test]
async fn a_relisting_cut_by_the_close_is_no_listing_failure() {
    let (manager, mut server) = started().await;
    let mut events = manager.events();
    let mut health = manager.watch_health("a").unwrap();
    server
        .notify("notifications/prompts/list_changed", json!({}))
        .await;
    server.expect_request("prompts/list").await;
    server.crash(1, &["bye"]).await;
    within(health.wait_for(|h| h.is_failed())).await.unwrap();
    // The event follows the health change: wait for it too.
    let mut changes: Vec<String> = Vec::new();
    eventually(|| {
        changes.extend(drain(&mut events).into_iter().filter_map(|e| match e {
            Event::HealthChanged { health, .. } => Some(format!("{health:?}")),
            _ => None,
        }));
        !changes.is_empty()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    changes.extend(drain(&mut events).into_iter().filter_map(|e| match e {
        Event::HealthChanged { health, .. } => Some(format!("{health:?}")),
        _ => None,
    }));
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(changes[0].starts_with("Failed"), "{changes:?}");
    manager.close().await;
}
