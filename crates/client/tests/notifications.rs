//! Notification lanes: flood safety, coalescing, routing.

mod common;

use std::time::Duration;

use common::{connected, within};
use mcpwire_client::{ClientConfig, ListKind};
use serde_json::json;
use tokio::sync::broadcast::error::TryRecvError;

#[tokio::test]
async fn a_flood_nobody_reads_never_blocks_a_response_and_stays_bounded() {
    const FLOOD: usize = 100_000;
    const CAP: usize = 256;
    let (client, mut server) = connected(ClientConfig::new().notification_capacity(CAP)).await;
    // Subscribed but never read: the worst case for a queue.
    let logs = client.log_messages();
    let other = client.notifications();
    let mut updates = client.list_changed(ListKind::Tools);
    let c = client.clone();
    let call = tokio::spawn(async move { c.ping().await });
    let req = server.expect_request("ping").await;
    let frame = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"spam"}}"#;
    for i in 0..FLOOD {
        match i % 3 {
            0 => server.send_raw(&frame[..]).await,
            1 => server.notify("custom/tick", json!({ "i": i })).await,
            _ => {
                server
                    .notify("notifications/tools/list_changed", json!({}))
                    .await
            }
        }
    }
    server.respond(&req.id, json!({})).await;
    within(call).await.unwrap().unwrap();
    // Each queue holds at most its capacity: a reader finds it lagged, then
    // at most CAP entries. The rest were dropped and counted.
    let (held_logs, lagged_logs) = drain(logs);
    let (held_other, lagged_other) = drain(other);
    assert!(
        held_logs <= CAP && held_other <= CAP,
        "{held_logs} {held_other}"
    );
    assert!(lagged_logs > 0 && lagged_other > 0);
    let kept = (held_logs + held_other) as u64;
    let sent = (FLOOD - FLOOD / 3) as u64;
    assert_eq!(client.notification_drops(), sent - kept);
    // list_changed coalesced into one counter.
    assert!(updates.has_changed().unwrap());
    assert_eq!(*updates.borrow_and_update(), (FLOOD / 3) as u64);
}

#[tokio::test]
async fn a_lagging_log_reader_sees_the_loss_then_the_newest() {
    let (client, server) = connected(ClientConfig::new().notification_capacity(4)).await;
    let mut logs = client.log_messages();
    for i in 0..10 {
        server
            .notify(
                "notifications/message",
                json!({"level": "warning", "logger": "db", "data": {"i": i}}),
            )
            .await;
    }
    // Make sure all ten were routed before reading.
    let c = client.clone();
    let mut server = server;
    let ping = tokio::spawn(async move { c.ping().await });
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
    match logs.recv().await {
        Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => assert_eq!(n, 6),
        other => panic!("{other:?}"),
    }
    let m = logs.recv().await.unwrap();
    assert_eq!(m.data["i"], 6);
    assert_eq!(m.logger.as_deref(), Some("db"));
    assert_eq!(client.notification_drops(), 6);
}

#[tokio::test]
async fn resource_updates_reach_only_subscribers_of_that_uri() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let sub = tokio::spawn(async move { c.subscribe_resource("file:///a").await });
    let req = server.expect_request("resources/subscribe").await;
    let p: serde_json::Value = req.params.unwrap().deserialize().unwrap();
    assert_eq!(p["uri"], "file:///a");
    server.respond(&req.id, json!({})).await;
    let mut sub = within(sub).await.unwrap().unwrap();

    server
        .notify(
            "notifications/resources/updated",
            json!({"uri": "file:///b"}),
        )
        .await;
    server
        .notify(
            "notifications/resources/updated",
            json!({"uri": "file:///a/child", "_meta": {"k": 1}}),
        )
        .await;
    let update = within(sub.changed()).await.unwrap();
    assert_eq!(update.uri, "file:///a/child");
    assert!(
        tokio::time::timeout(Duration::from_millis(100), sub.changed())
            .await
            .is_err(),
        "file:///b is not ours"
    );

    let c = client.clone();
    let unsub = tokio::spawn(async move { c.unsubscribe_resource("file:///a").await });
    let req = server.expect_request("resources/unsubscribe").await;
    server.respond(&req.id, json!({})).await;
    within(unsub).await.unwrap().unwrap();
}

/// Reads everything queued: (entries held, entries reported lost).
fn drain<T: Clone>(mut rx: tokio::sync::broadcast::Receiver<T>) -> (usize, u64) {
    let (mut held, mut lagged) = (0, 0);
    loop {
        match rx.try_recv() {
            Ok(_) => held += 1,
            Err(TryRecvError::Lagged(n)) => lagged += n,
            Err(_) => return (held, lagged),
        }
    }
}

#[tokio::test]
async fn progress_that_comes_with_the_answer_reaches_the_callback_first() {
    use std::sync::{Arc, Mutex};

    use mcpwire_codec::jsonrpc::Id;

    let (client, mut server) = connected(ClientConfig::new()).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.request::<_, serde_json::Value>("x/work", Some(&json!({})))
            .on_progress(move |p| s.lock().unwrap().push(p.progress))
            .await
    });
    let req = server.expect_request("x/work").await;
    let Id::Number(n) = req.id else {
        panic!("a numeric id")
    };
    // The last progress and the answer in one batch: the driver routes
    // both before the caller runs, so the caller finds its answer ready.
    let batch = format!(
        r#"[{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{n},"progress":7}}}},{{"jsonrpc":"2.0","id":{n},"result":{{}}}}]"#
    );
    server.send_raw(batch.into_bytes()).await;
    within(call).await.unwrap().unwrap();
    assert_eq!(*seen.lock().unwrap(), [7.0]);
}
