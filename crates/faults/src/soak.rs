//! The soak: many short sessions, with a crash or a disconnect injected
//! every 50th, and afterwards nothing left behind.
//!
//! Each stdio cycle spawns the scripted `ok` server, initializes, calls
//! `echo` and closes; every 50th calls `crash` instead (the server exits
//! mid-call) and must fail with `Closed`. Each HTTP cycle connects to the
//! scripted Streamable HTTP server through a fault proxy, calls and closes;
//! every 50th has the proxy reset the connection as the answer starts, and
//! the call must fail with a typed error. The soak passes when every cycle
//! did what it should, no process of the run is left, descriptors are back
//! to their count at the start, and resident memory at the end is within
//! 10% of what it was after the first 100 cycles of each kind.

use std::time::{Duration, Instant};

use mcpwire_client::{ClientConfig, ErrorKind};
use serde_json::json;

use crate::client::{call, connect_http, connect_stdio, echo, http_config, scripted_stdio};
use crate::http_server::{Behaviour, McpHttp};
use crate::probe;
use crate::proxy::{Fault, FaultProxy};
use crate::runner::Ctx;

/// How a soak runs.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Cycles of each kind, at least.
    pub cycles: usize,
    /// Keep cycling (both kinds, in turns) until this much time has passed.
    pub at_least: Duration,
}

/// What one kind of cycle did.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Cycles run.
    pub cycles: usize,
    /// Faults injected (and seen to fail as they should).
    pub injected: usize,
    /// Cycles that did not do what they should, with the first reasons.
    pub failures: Vec<String>,
    /// Resident memory after the first 100 cycles, KiB.
    pub rss_at_100: Option<u64>,
    /// Wall time spent.
    pub elapsed: Duration,
}

/// The soak's figures and verdict.
#[derive(Debug)]
pub struct Report {
    /// stdio cycles.
    pub stdio: Tally,
    /// Streamable HTTP cycles.
    pub http: Tally,
    /// Descriptors open before the first cycle.
    pub fds_start: usize,
    /// Descriptors open after the last (once settled).
    pub fds_end: usize,
    /// Processes of the run still alive (or unreaped) at the end.
    pub leftovers: usize,
    /// Resident memory at the end, KiB.
    pub rss_end: u64,
}

impl Report {
    /// The reasons the soak failed; empty if it passed.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, t) in [("stdio", &self.stdio), ("http", &self.http)] {
            if !t.failures.is_empty() {
                out.push(format!(
                    "{name}: {} cycles failed, first: {}",
                    t.failures.len(),
                    t.failures[0]
                ));
            }
        }
        if self.fds_end > self.fds_start {
            out.push(format!(
                "descriptors: {} at the start, {} at the end",
                self.fds_start, self.fds_end
            ));
        }
        if self.leftovers > 0 {
            out.push(format!("{} processes left behind", self.leftovers));
        }
        let base = self
            .stdio
            .rss_at_100
            .into_iter()
            .chain(self.http.rss_at_100)
            .max()
            .unwrap_or(0);
        if base > 0 && self.rss_end * 10 > base * 11 {
            out.push(format!(
                "RSS {} KiB at the end, over 110% of {base} KiB after the first 100 cycles",
                self.rss_end
            ));
        }
        out
    }
}

/// Runs the soak.
pub async fn run(ctx: &Ctx, plan: Plan) -> Report {
    let _ = tokio::process::Command::new("true").status().await;
    if let Some(why) = probe::unavailable() {
        println!("note: {why}");
    }
    let fds_start = probe::fd_count();
    let server = McpHttp::start(Behaviour::default()).await;
    let proxy = FaultProxy::start(server.addr())
        .await
        .expect("a proxy on loopback");
    let mut stdio = Tally::default();
    let mut http = Tally::default();
    let started = Instant::now();
    // In turns, 100 cycles at a time, until both counts and the time are
    // reached.
    while stdio.cycles < plan.cycles
        || http.cycles < plan.cycles
        || started.elapsed() < plan.at_least
    {
        let t = Instant::now();
        for _ in 0..100 {
            stdio_cycle(ctx, &mut stdio).await;
        }
        stdio.elapsed += t.elapsed();
        let t = Instant::now();
        for _ in 0..100 {
            http_cycle(&proxy, &mut http).await;
        }
        http.elapsed += t.elapsed();
        // The scripted server records every request; that is the test's
        // memory, not the client's.
        server.clear_seen();
    }
    drop(proxy);
    drop(server);
    // Let the last processes be reaped and connections end.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline
        && (probe::fd_count() > fds_start || !probe::leftovers().is_empty())
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Report {
        stdio,
        http,
        fds_start,
        fds_end: probe::fd_count(),
        leftovers: probe::leftovers().len(),
        rss_end: probe::rss_kib(),
    }
}

/// Waits for one cycle, at most 10 s, and notes its outcome.
async fn finish(t: &mut Tally, outcome: impl std::future::Future<Output = Result<bool, String>>) {
    let outcome = tokio::time::timeout(Duration::from_secs(10), outcome)
        .await
        .unwrap_or_else(|_| Err("did not finish within 10 s".into()));
    note(t, outcome);
}

fn note(t: &mut Tally, outcome: Result<bool, String>) {
    t.cycles += 1;
    match outcome {
        Ok(true) => t.injected += 1,
        Ok(false) => {}
        Err(e) if t.failures.len() < 10 => t.failures.push(format!("cycle {}: {e}", t.cycles)),
        Err(_) => t.failures.push(String::new()),
    }
    if t.cycles == 100 {
        t.rss_at_100 = Some(probe::rss_kib());
    }
}

/// One stdio cycle; `Ok(true)` when a crash was injected and seen.
async fn stdio_cycle(ctx: &Ctx, t: &mut Tally) {
    let inject = (t.cycles + 1).is_multiple_of(50);
    let outcome = async {
        let client = connect_stdio(scripted_stdio(&ctx.exe, "ok"), ClientConfig::new())
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let out = if inject {
            match call(&client, "crash", json!({})).await {
                Err(e) if e.kind() == ErrorKind::Closed => Ok(true),
                other => Err(format!("a crash mid-call gave {other:?}")),
            }
        } else {
            echo(&client, "soak").await.map(|()| false)
        };
        client.close().await;
        out
    };
    finish(t, outcome).await;
}

/// One HTTP cycle; `Ok(true)` when a reset was injected and seen.
async fn http_cycle(proxy: &FaultProxy, t: &mut Tally) {
    let inject = (t.cycles + 1).is_multiple_of(50);
    let outcome = async {
        let client = connect_http(&proxy.url("/mcp"), http_config(), ClientConfig::new())
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let out = if inject {
            proxy.set(Fault::ResetAfter(0));
            let r = call(&client, "echo", json!({"message": "x"})).await;
            proxy.set(Fault::Pass);
            match r {
                Err(e) if matches!(e.kind(), ErrorKind::Transport | ErrorKind::Closed) => Ok(true),
                other => Err(format!("a reset mid-call gave {other:?}")),
            }
        } else {
            echo(&client, "soak").await.map(|()| false)
        };
        client.close().await;
        out
    };
    finish(t, outcome).await;
}
