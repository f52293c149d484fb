//! The lifetime of the handlers of server requests: a request that waited
//! for a handler slot gives its place in the queue back once it runs, and
//! a handler still running when the connection is gone is stopped.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{connected, within};
use mcpwire_client::types::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
};
use mcpwire_client::{ClientConfig, RequestContext};
use mcpwire_codec::jsonrpc::Id;
use serde_json::json;
use tokio::sync::{Notify, mpsc};

/// Sets its flag when dropped: the handler's future holding it was
/// stopped.
struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A handler still at work when the connection is lost is stopped: its
/// answer could never be sent, and whatever it holds (a person's prompt,
/// a model call) is let go rather than kept until it ends on its own.
#[tokio::test]
async fn a_handler_still_running_when_the_connection_is_lost_is_stopped() {
    let dropped = Arc::new(AtomicBool::new(false));
    let started = Arc::new(Notify::new());
    let (d, s) = (dropped.clone(), started.clone());
    let config = ClientConfig::new().elicitation(move |_p: ElicitParams, _cx: RequestContext| {
        let flag = Flag(d.clone());
        let s = s.clone();
        async move {
            let _flag = flag;
            s.notify_one();
            std::future::pending::<()>().await;
            Ok(ElicitResult::new(ElicitAction::Cancel, None))
        }
    });
    let (client, server) = connected(config).await;
    server
        .request(
            "e",
            "elicitation/create",
            json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}}),
        )
        .await;
    within(started.notified()).await;
    // The server goes away with the request unanswered.
    drop(server);
    within(async {
        while !dropped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    client.close().await;
}

/// With one handler slot and one place in the queue, a request that
/// waited for the slot leaves the queue when it gets it: a later request
/// finds the place free and waits its turn, rather than being refused as
/// if the queue were still full.
#[tokio::test]
async fn a_request_that_waited_for_a_slot_gives_its_queue_place_back() {
    let gate = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let g = gate.clone();
    let config = ClientConfig::new()
        .max_concurrent_handlers(1)
        .max_queued_handlers(1)
        .sampling(move |_p: CreateMessageParams, _cx: RequestContext| {
            let (gate, started) = (g.clone(), started_tx.clone());
            async move {
                let _ = started.send(());
                gate.notified().await;
                Ok(CreateMessageResult::text("m", "done"))
            }
        });
    let (client, mut server) = connected(config).await;
    let sample = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
        "maxTokens": 10
    });
    // 1 takes the slot, 2 the place in the queue.
    server
        .request(1, "sampling/createMessage", sample.clone())
        .await;
    within(started.recv()).await.unwrap();
    server
        .request(2, "sampling/createMessage", sample.clone())
        .await;
    // 1 ends and 2 gets the slot: the queue is empty again.
    gate.notify_one();
    let r = server.expect_response(&Id::Number(1)).await;
    assert!(r.outcome.is_ok(), "1 answered");
    within(started.recv()).await.unwrap();
    server.request(3, "sampling/createMessage", sample).await;
    // 3 waited in the queue: it is answered after 2, not refused at once.
    gate.notify_one();
    let r = server.expect_response(&Id::Number(2)).await;
    assert!(r.outcome.is_ok(), "2 answered");
    within(started.recv()).await.unwrap();
    gate.notify_one();
    let r = server.expect_response(&Id::Number(3)).await;
    assert!(r.outcome.is_ok(), "3 answered, not refused");
    client.close().await;
}
