//! The third form: the mcpwire client against a server already running at
//! a URL, which `cargo xtask bench --serve` started (the benchmark server
//! itself, or `mcpwire serve --http` in front of it). It makes W1, W2 or
//! W3 on one session, or opens sessions one after another and holds them
//! while it reads another process's memory: serve's, whose pid it is given.
//!
//! The bearer token comes from `$MCPWIRE_BENCH_BEARER`, not the command
//! line, where other users of the machine could read it (`ps`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcpwire::client::EraChoice;
use mcpwire::{Client, ClientConfig, HttpClient, Server};
use serde::Serialize;
use serde_json::json;

use crate::workload::{Caller, Plan, Samples, Workload, connect_loop, drive};

/// The environment variable holding the bearer token, if the server wants
/// one.
pub(crate) const BEARER_ENV: &str = "MCPWIRE_BENCH_BEARER";

/// A session on the server at a URL, calling one tool by name.
#[derive(Clone)]
pub(crate) struct AtUrl {
    client: Client,
    /// `echo` on the benchmark server, `bench__echo` through serve.
    tool: Arc<str>,
}

impl AtUrl {
    /// Opens a session on `url` through the shared `http` client.
    pub(crate) async fn connect(
        http: &HttpClient,
        url: &str,
        bearer: Option<&str>,
        tool: Arc<str>,
    ) -> Result<Self, String> {
        let mut server = Server::http(url).client(http.clone());
        if let Some(token) = bearer {
            server = server
                .bearer_token(token.to_owned())
                .map_err(|e| e.to_string())?;
        }
        // The `initialize` era, as the bench server speaks it: a direct
        // run and one through `serve` then compare the same protocol, and
        // `--hold` holds sessions (a stateless client would hold none).
        let config = ClientConfig::new().era(EraChoice::Legacy);
        let client = mcpwire::connect(server, config)
            .await
            .map_err(|e| e.to_string())?;
        Ok(AtUrl { client, tool })
    }
}

impl Caller for AtUrl {
    async fn echo(&self, message: &str) -> Result<usize, String> {
        let result = self
            .client
            .call_tool(&self.tool, &json!({ "message": message }))
            .await
            .map_err(|e| e.to_string())?;
        Ok(result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map_or(0, str::len))
    }

    async fn close(self) {
        self.client.close().await;
    }
}

/// What a process other than this one has used so far: serve's CPU time
/// and memory, read from `/proc/PID`. Linux only, as the whole benchmark
/// is (its own figures come from `/proc/self`, and the rows it writes were
/// all measured on Linux); elsewhere `--watch-pid` is refused with that
/// reason rather than read from some other source whose figures would not
/// compare.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Watched {
    pid: u32,
}

/// One reading of the watched process.
#[derive(Debug, Clone, Copy, Default)]
struct Reading {
    cpu: Duration,
    rss_kib: u64,
    fds: usize,
}

impl Watched {
    pub(crate) fn new(pid: u32) -> Self {
        Watched { pid }
    }

    #[cfg(not(target_os = "linux"))]
    fn read(self) -> Result<Reading, String> {
        Err(format!(
            "--watch-pid {} reads /proc, which only Linux has",
            self.pid
        ))
    }

    #[cfg(target_os = "linux")]
    fn read(self) -> Result<Reading, String> {
        let dir = format!("/proc/{}", self.pid);
        let stat = std::fs::read_to_string(format!("{dir}/stat"))
            .map_err(|e| format!("cannot read {dir}/stat: {e}"))?;
        let status = std::fs::read_to_string(format!("{dir}/status"))
            .map_err(|e| format!("cannot read {dir}/status: {e}"))?;
        let fds = std::fs::read_dir(format!("{dir}/fd"))
            .map_err(|e| format!("cannot read {dir}/fd: {e}"))?
            .count();
        Ok(Reading {
            cpu: crate::measure::cpu_time_of(&stat),
            rss_kib: crate::measure::status_kib(&status, "VmRSS:").unwrap_or(0),
            fds,
        })
    }
}

/// A run of W1, W2 or W3 at the URL, with the watched process's CPU per
/// call when there is one.
#[derive(Debug, Serialize)]
pub(crate) struct UrlOutcome {
    #[serde(flatten)]
    pub(crate) client: crate::workload::Outcome,
    /// The watched process's CPU (user + system) per call, in
    /// microseconds (10 ms resolution over the whole run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) watched_cpu_us_per_op: Option<f64>,
}

/// Runs `workload` on sessions made by `connect`.
pub(crate) async fn run<F, Fut>(
    workload: Workload,
    plan: &Plan,
    watched: Option<Watched>,
    connect: F,
) -> Result<UrlOutcome, String>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<AtUrl, String>>,
{
    if !matches!(
        workload,
        Workload::Connect | Workload::Sequential | Workload::Concurrent
    ) {
        return Err(format!("--url runs w1, w2 or w3, not {}", workload.name()));
    }
    let before = watched.map(Watched::read).transpose()?;
    let samples: Samples = if workload == Workload::Connect {
        connect_loop(plan.connects, &connect).await?
    } else {
        let caller = connect().await?;
        let samples = drive(&caller, workload, plan).await?;
        caller.close().await;
        samples
    };
    let after = watched.map(Watched::read).transpose()?;
    // The warm-up calls run on the watched side too: count them.
    let calls = samples.ops
        + match workload {
            Workload::Connect => 0,
            _ => plan.warmup,
        };
    let watched_cpu_us_per_op = before
        .zip(after)
        .map(|(b, a)| a.cpu.saturating_sub(b.cpu).as_secs_f64() * 1e6 / calls.max(1) as f64);
    Ok(UrlOutcome {
        client: samples.outcome("mcpwire", "http", workload),
        watched_cpu_us_per_op,
    })
}

/// How long held sessions are left alone before they are measured.
const SETTLE: Duration = Duration::from_millis(500);

/// What holding sessions measured: printed as one JSON line.
#[derive(Debug, Serialize)]
pub(crate) struct HoldOutcome {
    /// Sessions asked for.
    pub(crate) asked: usize,
    /// Sessions open (each answered one call) when opening stopped.
    pub(crate) held: usize,
    /// Why opening stopped before `asked`: the error of the session that
    /// failed to open or to call.
    pub(crate) stopped_by: Option<String>,
    /// Opening the held sessions, in seconds.
    pub(crate) secs: f64,
    /// The watched process's resident memory before and after, in KiB.
    pub(crate) watched_rss_kib_before: u64,
    pub(crate) watched_rss_kib_after: u64,
    pub(crate) watched_rss_kib_per_session: f64,
    pub(crate) watched_fds_per_session: f64,
}

/// Opens up to `n` sessions one after another, each answering one call,
/// until one fails; lets them settle idle; reads the growth of the watched
/// process's memory and descriptors since before the first, per session
/// held. The baseline is read after a few sessions (n/10, at most 10) were
/// opened and closed the same way, so what the watched process pays once
/// (its first session's code paths, its allocator's arenas) is not charged
/// to the sessions.
pub(crate) async fn hold<F, Fut>(
    n: usize,
    watched: Watched,
    connect: F,
) -> Result<HoldOutcome, String>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<AtUrl, String>>,
{
    let warm = (n / 10).clamp(1, 10);
    for _ in 0..warm {
        let c = connect().await?;
        c.echo("hello").await?;
        c.close().await;
    }
    tokio::time::sleep(SETTLE).await;
    let before = watched.read()?;
    let start = Instant::now();
    let mut sessions = Vec::with_capacity(n);
    let mut stopped_by = None;
    while sessions.len() < n {
        let opened = async {
            let c = connect().await?;
            c.echo("hello").await?;
            Ok::<_, String>(c)
        };
        match opened.await {
            Ok(c) => sessions.push(c),
            Err(e) => {
                stopped_by = Some(e);
                break;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    tokio::time::sleep(SETTLE).await;
    let after = watched.read()?;
    let held = sessions.len();
    for c in sessions {
        c.close().await;
    }
    if held == 0 {
        return Err(format!(
            "no session opened: {}",
            stopped_by.unwrap_or_default()
        ));
    }
    Ok(HoldOutcome {
        asked: n,
        held,
        stopped_by,
        secs,
        watched_rss_kib_before: before.rss_kib,
        watched_rss_kib_after: after.rss_kib,
        watched_rss_kib_per_session: per_session(before.rss_kib, after.rss_kib, held),
        watched_fds_per_session: per_session(before.fds as u64, after.fds as u64, held),
    })
}

/// The growth from `before` to `after`, per session (negative if it fell).
fn per_session(before: u64, after: u64, sessions: usize) -> f64 {
    (after as f64 - before as f64) / sessions.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_is_divided_by_the_sessions_held_and_may_be_negative() {
        assert_eq!(per_session(1000, 3000, 100), 20.0);
        assert_eq!(per_session(3000, 1000, 100), -20.0);
        assert_eq!(per_session(5, 5, 0), 0.0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_can_be_watched() {
        let reading = Watched::new(std::process::id()).read().unwrap();
        assert!(reading.rss_kib > 0);
        assert!(reading.fds > 0);
        assert!(Watched::new(u32::MAX).read().is_err());
    }

    #[cfg(not(target_os = "linux"))]
    #[test]
    fn watching_is_refused_off_linux_with_the_reason() {
        let err = Watched::new(std::process::id()).read().unwrap_err();
        assert!(err.contains("only Linux"), "{err}");
    }
}
