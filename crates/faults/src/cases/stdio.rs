//! Misbehaving stdio servers.

use std::time::{Duration, Instant};

use mcpwire_client::{Client, ClientConfig, ErrorKind, RequestOptions};
use mcpwire_stdio::StdioConfig;
use mcpwire_transport::CloseReason;
use serde_json::json;

use super::check::{chain, describe, expect_err, ms, within};
use super::shared;
use crate::case;
use crate::client::{call, call_with, connect_stdio, echo, scripted_stdio};
use crate::probe;
use crate::runner::{Case, Ctx, Outcome};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "stdio-killed-mid-call",
            killed_mid_call,
            15,
            "SIGKILL with 3 calls in flight: all 3 fail with Closed within 1 s of the kill; no orphan"
        ),
        case!(
            "stdio-crash-mid-call",
            crash_mid_call,
            15,
            "server exits 9 mid-call: the call fails with Closed carrying exit status 9 and the stderr line, within 2 s"
        ),
        case!(
            "stdio-never-initializes",
            never_initializes,
            15,
            "no answer to initialize: connect fails with Timeout within init_timeout (1 s) + 1 s; the server is stopped"
        ),
        case!(
            "stdio-exits-before-answering",
            exits_before_answering,
            15,
            "exits 3 before initialize: connect fails with Closed within 2 s, with status 3 and the stderr tail"
        ),
        case!(
            "stdio-command-not-found",
            command_not_found,
            15,
            "a missing program: connect fails within 1 s and the error names the path"
        ),
        case!(
            "stdio-logs-on-stdout",
            logs_on_stdout,
            15,
            "plain-text lines on stdout between messages: 20 echo calls all succeed"
        ),
        case!(
            "stdio-notification-flood",
            notification_flood,
            60,
            "100,000 notifications to a paused reader: the answer arrives, drops are counted, RSS grows < 16 MiB"
        ),
        case!(
            "stdio-blocking-handler",
            blocking_handler,
            15,
            "a call the server never answers: 10 other calls succeed meanwhile; cancelling it reaches the server"
        ),
        case!(
            "stdio-timeout-then-usable",
            timeout_then_usable,
            15,
            "a 300 ms timeout fires within 1.3 s as Timeout, the server is told, the next call succeeds"
        ),
        case!(
            "stdio-long-tool-with-progress",
            long_tool_with_progress,
            15,
            "a 2 s tool reporting progress every 250 ms is not cut by a 1 s timeout reset on progress"
        ),
        case!(
            "stdio-frame-20mib",
            frame_20mib,
            30,
            "a 20 MiB answer over the 16 MiB limit: Closed (frame too long) within 10 s, memory bounded"
        ),
        case!(
            "stdio-grandchild-orphan",
            grandchild_orphan,
            20,
            "a server leaves a grandchild holding stdout: after close, neither is alive"
        ),
    ]
}

fn ok_server(ctx: &Ctx) -> StdioConfig {
    scripted_stdio(&ctx.exe, "ok")
}

/// A client of the scripted `ok` server.
async fn connect(ctx: &Ctx) -> Result<Client, String> {
    connect_stdio(ok_server(ctx), ClientConfig::new())
        .await
        .map_err(|e| format!("connect: {}", chain(&e)))
}

async fn killed_mid_call(ctx: &Ctx) -> Outcome {
    let client = connect(ctx).await?;
    let pid: i32 = call(&client, "pid", json!({}))
        .await
        .map_err(|e| format!("pid: {e}"))?
        .text()
        .parse()
        .map_err(|e| format!("pid: {e}"))?;
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let c = client.clone();
            tokio::spawn(async move { call(&c, "block", json!({})).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let killed = Instant::now();
    let pid = rustix::process::Pid::from_raw(pid).ok_or("bad pid")?;
    rustix::process::kill_process(pid, rustix::process::Signal::KILL)
        .map_err(|e| format!("kill: {e}"))?;
    for c in calls {
        let (r, _) = within(Duration::from_secs(1), "an in-flight call", c).await?;
        expect_err(
            r.map_err(|e| e.to_string())?,
            ErrorKind::Closed,
            "in-flight call",
        )?;
    }
    let after = killed.elapsed();
    client.close().await;
    Ok(format!(
        "3 calls failed with Closed {} ms after the kill",
        ms(after)
    ))
}

async fn crash_mid_call(ctx: &Ctx) -> Outcome {
    let client = connect(ctx).await?;
    let (r, took) = within(
        Duration::from_secs(2),
        "the crashing call",
        call(&client, "crash", json!({})),
    )
    .await?;
    let e = expect_err(r, ErrorKind::Closed, "crashing call")?;
    let status = match e.close_reason() {
        Some(CloseReason::Exited(info)) => info.code,
        other => return Err(format!("close reason {other:?}, not an exit")),
    };
    if status != Some(9) {
        return Err(format!("exit status {status:?}, not 9"));
    }
    if !e
        .stderr_tail()
        .iter()
        .any(|l| l.contains("crashing on purpose"))
    {
        return Err(format!(
            "stderr tail {:?} lacks the server's line",
            e.stderr_tail()
        ));
    }
    client.close().await;
    Ok(format!("Closed after {} ms: {e}", ms(took)))
}

async fn never_initializes(ctx: &Ctx) -> Outcome {
    let config = ClientConfig::new().init_timeout(Duration::from_secs(1));
    let (r, took) = within(
        Duration::from_secs(2),
        "connect",
        connect_stdio(scripted_stdio(&ctx.exe, "silent"), config),
    )
    .await?;
    let e = expect_err(r, ErrorKind::Timeout, "connect")?;
    Ok(describe(&e, took))
}

async fn exits_before_answering(ctx: &Ctx) -> Outcome {
    let (r, took) = within(
        Duration::from_secs(2),
        "connect",
        connect_stdio(scripted_stdio(&ctx.exe, "exit-early"), ClientConfig::new()),
    )
    .await?;
    let e = expect_err(r, ErrorKind::Closed, "connect")?;
    match e.close_reason() {
        Some(CloseReason::Exited(info)) if info.code == Some(3) => {}
        other => return Err(format!("close reason {other:?}, not exit status 3")),
    }
    let text = format!("{} {:?}", chain(&e), e.stderr_tail());
    if !text.contains("missing configuration FAULTS_CONFIG") {
        return Err(format!("the error does not show the stderr tail: {text}"));
    }
    Ok(format!("Closed after {} ms: {e}", ms(took)))
}

async fn command_not_found(_ctx: &Ctx) -> Outcome {
    let path = "/nonexistent/faults/mcp-server";
    let (r, took) = within(
        Duration::from_secs(1),
        "connect",
        connect_stdio(StdioConfig::new(path), ClientConfig::new()),
    )
    .await?;
    let e = match r {
        Ok(_) => return Err("connected to a missing program".into()),
        Err(e) => e,
    };
    let text = chain(&e);
    if !text.contains(path) {
        return Err(format!("the error does not name {path}: {text}"));
    }
    Ok(format!("{:?} after {} ms: {text}", e.kind(), ms(took)))
}

async fn logs_on_stdout(ctx: &Ctx) -> Outcome {
    let client = connect_stdio(scripted_stdio(&ctx.exe, "stdout-logs"), ClientConfig::new())
        .await
        .map_err(|e| format!("connect: {}", chain(&e)))?;
    for i in 0..20 {
        echo(&client, &format!("m{i}")).await?;
    }
    client.close().await;
    Ok("20 calls answered between log lines".into())
}

async fn notification_flood(ctx: &Ctx) -> Outcome {
    let client = connect(ctx).await?;
    let out = shared::flood(&client).await;
    client.close().await;
    out
}

async fn blocking_handler(ctx: &Ctx) -> Outcome {
    let client = connect(ctx).await?;
    shared::blocked_while_others_run(&client).await?;
    let seen = call(&client, "cancelled", json!({}))
        .await
        .map_err(|e| format!("cancelled: {e}"))?
        .text();
    let ids: Vec<serde_json::Value> = serde_json::from_str(&seen).map_err(|e| e.to_string())?;
    client.close().await;
    if ids.len() != 1 {
        return Err(format!(
            "the server saw cancellations {ids:?}, expected one"
        ));
    }
    Ok(format!(
        "10 calls answered meanwhile; the server saw the cancellation of {}",
        ids[0]
    ))
}

async fn timeout_then_usable(ctx: &Ctx) -> Outcome {
    let client = connect(ctx).await?;
    let opts = RequestOptions::new().timeout(Duration::from_millis(300));
    let (r, took) = within(
        Duration::from_millis(1300),
        "the blocked call",
        call_with(&client, "block", json!({}), &opts),
    )
    .await?;
    expect_err(r, ErrorKind::Timeout, "blocked call")?;
    let seen = call(&client, "cancelled", json!({}))
        .await
        .map_err(|e| format!("cancelled: {e}"))?
        .text();
    echo(&client, "after").await?;
    client.close().await;
    if seen == "[]" {
        return Err("the server was not told of the timeout".into());
    }
    Ok(format!(
        "Timeout after {} ms; server saw cancellation {seen}",
        ms(took)
    ))
}

async fn long_tool_with_progress(ctx: &Ctx) -> Outcome {
    let client = connect(ctx).await?;
    let out = shared::long_tool_with_progress(&client).await;
    client.close().await;
    out
}

async fn frame_20mib(ctx: &Ctx) -> Outcome {
    let client = connect(ctx).await?;
    let rss0 = probe::rss_kib();
    let (r, took) = within(
        Duration::from_secs(10),
        "the 20 MiB call",
        call(&client, "big", json!({"bytes": 20 << 20})),
    )
    .await?;
    let e = expect_err(r, ErrorKind::Closed, "20 MiB call")?;
    if !matches!(e.close_reason(), Some(CloseReason::FrameTooLong { .. })) {
        return Err(format!("close reason {:?}", e.close_reason()));
    }
    let grew = probe::rss_kib().saturating_sub(rss0);
    client.close().await;
    if grew > 40 * 1024 {
        return Err(format!("RSS grew by {grew} KiB"));
    }
    Ok(format!(
        "Closed after {} ms ({e}), RSS +{grew} KiB",
        ms(took)
    ))
}

async fn grandchild_orphan(ctx: &Ctx) -> Outcome {
    let client = connect(ctx).await?;
    let pid: i32 = call(&client, "grandchild", json!({}))
        .await
        .map_err(|e| format!("grandchild: {e}"))?
        .text()
        .parse()
        .map_err(|e| format!("grandchild pid: {e}"))?;
    // Seen running (its environment readable, between fork and exec it
    // may not be) within a second.
    let mut running = false;
    for _ in 0..20 {
        if probe::leftovers().iter().any(|l| l.pid == pid) {
            running = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !running {
        return Err(format!("the grandchild {pid} is not running"));
    }
    let (_, took) = within(Duration::from_secs(8), "close", client.close()).await?;
    Ok(format!(
        "closed in {} ms; grandchild {pid} checked by the leak check",
        ms(took)
    ))
}
