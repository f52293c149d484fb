//! Case bodies that stdio and HTTP share: given a connected client, the
//! same fault and the same criterion, whatever the transport.

use std::time::Duration;

use mcpwire_client::{CancellationToken, Client, Deadline, ErrorKind, RequestOptions};
use serde_json::json;

use super::check::{chain, expect_err, ms, within};
use crate::client::{call, call_with, echo};
use crate::probe;

/// A `slow` tool of 8 steps of 250 ms, with a 1 s timeout reset by each
/// progress notification: it must not be cut.
pub(super) async fn long_tool_with_progress(client: &Client) -> Result<String, String> {
    let opts = RequestOptions::new()
        .timeout(Duration::from_secs(1))
        .deadline(Deadline::ResetOnProgress);
    let (r, took) = within(
        Duration::from_secs(5),
        "the long call",
        call_with(client, "slow", json!({"steps": 8, "ms": 250}), &opts),
    )
    .await?;
    let r = r.map_err(|e| format!("slow: {}", chain(&e)))?;
    if r.text() != "done 8" {
        return Err(format!("answer {:?}", r.text()));
    }
    Ok(format!("answered after {} ms", ms(took)))
}

/// A `block`ed call in flight while 10 echo calls succeed; then cancelled
/// by its token, it must fail with `Cancelled` at once.
pub(super) async fn blocked_while_others_run(client: &Client) -> Result<(), String> {
    let token = CancellationToken::new();
    let blocked = {
        let c = client.clone();
        let opts = RequestOptions::new().cancel_token(token.clone());
        tokio::spawn(async move { call_with(&c, "block", json!({}), &opts).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    for i in 0..10 {
        echo(client, &format!("while blocked {i}")).await?;
    }
    token.cancel();
    let (r, _) = within(Duration::from_secs(1), "the cancelled call", blocked).await?;
    expect_err(
        r.map_err(|e| e.to_string())?,
        ErrorKind::Cancelled,
        "blocked call",
    )?;
    Ok(())
}

/// 100,000 notifications to a subscribed reader that never reads, then
/// the answer: it must arrive, with RSS growth under 16 MiB.
pub(super) async fn flood(client: &Client) -> Result<String, String> {
    // Subscribed and never read: a paused consumer.
    let _logs = client.log_messages();
    echo(client, "warm").await?;
    let rss0 = probe::rss_kib();
    let (r, took) = within(
        Duration::from_secs(40),
        "the flood's answer",
        call(client, "flood", json!({"count": 100_000})),
    )
    .await?;
    let r = r.map_err(|e| format!("flood: {}", chain(&e)))?;
    if r.text() != "flooded 100000" {
        return Err(format!("answer {:?}", r.text()));
    }
    let grew = probe::rss_kib().saturating_sub(rss0);
    let drops = client.notification_drops();
    if grew > 16 * 1024 {
        return Err(format!("RSS grew by {grew} KiB"));
    }
    if drops < 90_000 {
        return Err(format!("only {drops} drops counted"));
    }
    Ok(format!(
        "answer after {} ms, {drops} drops counted, RSS +{grew} KiB",
        ms(took)
    ))
}
