//! How progress notifications reach a request's callback: while the
//! request still waits for its answer, each one once.

mod common;

use std::time::Duration;

use common::{connected, within};
use mcpwire_client::ClientConfig;
use mcpwire_codec::jsonrpc::Id;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// How long a progress notification may take to reach the callback: far
/// more than it needs, on a loaded machine too.
const REPORTED: Duration = Duration::from_secs(10);

/// Each progress notification reaches the callback as it arrives, while
/// the request is still waiting (a long task's progress is worth nothing
/// once it is done), and only once: a notification already reported is
/// not reported again while the request waits for the next.
#[tokio::test]
async fn each_progress_reaches_the_callback_once_while_the_request_waits() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let (tx, mut seen) = mpsc::unbounded_channel();
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.request::<_, Value>("x/work", Some(&json!({})))
            .on_progress(move |p| {
                let _ = tx.send(p.progress);
            })
            .await
    });
    let req = server.expect_request("x/work").await;
    let Id::Number(n) = req.id else {
        panic!("a numeric id")
    };
    for i in 1..=3_u8 {
        server
            .notify(
                "notifications/progress",
                json!({"progressToken": n, "progress": i}),
            )
            .await;
        // Reported before any answer is sent.
        let got = tokio::time::timeout(REPORTED, seen.recv())
            .await
            .expect("progress reported while the request waits")
            .expect("the callback is still held");
        assert_eq!(got, f64::from(i), "each progress once, in order");
    }
    server.respond(&req.id, json!({})).await;
    within(call).await.unwrap().unwrap();
    // The call is over and its callback dropped: what is left in the
    // channel was reported more than once.
    let mut again = Vec::new();
    while let Some(p) = seen.recv().await {
        again.push(p);
    }
    assert!(again.is_empty(), "reported again: {again:?}");
    client.close().await;
}
