//! When a call starts a server: a lazy one on its first call, a manual one
//! never (it waits for `Manager::connect`), and a failed one only when the
//! call asks for a retry.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use mcpwire_manager::{ConnectPolicy, Error, Manager, ServerSpec};
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
