//! When a call starts a server: a lazy one on its first call, a manual one
//! never (it waits for `Manager::connect`), and a failed one only when the
//! call asks for a retry.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use mcpwire_manager::{
    Collisions, ConnectPolicy, Error, Manager, Naming, SavedCatalogue, ServerCatalogue, ServerSpec,
};
use serde_json::json;

#[tokio::test]
async fn a_lazy_server_starts_on_its_first_call() {
    let (lazy, mut peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("l", lazy).connect(ConnectPolicy::Lazy))
        .build()
        .unwrap();
    let report = within(manager.connect_all()).await.unwrap();
    assert_eq!(report.deferred, ["l"]);
    assert!(!peers.opened(), "not started by connect_all");

    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("l__echo", &json!({})).await }
    });
    let mut requests = serve(peers.next().await, "l", &["echo"]);
    let result = within(call).await.unwrap().unwrap();
    assert_eq!(result.text(), "l:echo");
    assert_eq!(seen(&mut requests), ["tools/list", "tools/call echo"]);
    manager.close().await;
}

#[tokio::test]
async fn a_failed_manual_server_is_retried_only_on_request() {
    let (refused, attempts) = refused();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("m", refused).connect(ConnectPolicy::Manual))
        .build()
        .unwrap();
    // Not connected yet: asking for a retry of a failure does not start it.
    let err = manager
        .call_tool("m__x", &json!({}))
        .retry_failed()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotConnected { .. }), "{err:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 0);

    let err = within(manager.connect("m")).await.unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 1);

    // Failed, and it says so (not "not connected"), without a new attempt.
    let err = manager.call_tool("m__x", &json!({})).await.unwrap_err();
    assert!(matches!(err, Error::ServerFailed { .. }), "{err:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 1, "no retry unasked");

    let err = manager
        .call_tool("m__x", &json!({}))
        .retry_failed()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 2, "one retry, on request");
    manager.close().await;
}

/// A call routed by a lazy server's saved list goes where the catalogue
/// says once that server is up: here its live list no longer has the tool,
/// and the call goes to the other server offering it.
#[tokio::test]
async fn a_call_follows_the_catalogue_after_a_lazy_start_moves_the_name() {
    let (lazy, mut lazy_peers) = memory();
    let (eager, mut eager_peers) = memory();
    let mut saved = SavedCatalogue::new();
    let mut lists = ServerCatalogue::default();
    lists.tools = serde_json::from_value(tool_list(&["x"])["tools"].clone()).unwrap();
    saved.servers.insert("a".into(), lists);
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", lazy).connect(ConnectPolicy::Lazy))
        .server(ServerSpec::with_connector("b", eager))
        .naming(Naming::Bare)
        .collisions(Collisions::FirstWins)
        .saved_catalogue(saved)
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut b_seen = serve(eager_peers.next().await, "b", &["x"]);
    within(connect).await.unwrap().unwrap();
    assert_eq!(manager.route("x").unwrap(), ("a".into(), "x".into()));

    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("x", &json!({})).await }
    });
    let mut a_seen = serve(lazy_peers.next().await, "a", &["y"]);
    assert_eq!(within(call).await.unwrap().unwrap().text(), "b:x");
    assert_eq!(seen(&mut a_seen), ["tools/list"]);
    assert_eq!(seen(&mut b_seen), ["tools/list", "tools/call x"]);
    manager.close().await;
}
