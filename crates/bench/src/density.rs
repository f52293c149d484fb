//! Density: what one idle session costs a client process, and how fast
//! sessions open one after another.
//!
//! `hold` opens N sessions (each answers one `echo`), lets them settle, and
//! reads the growth of the process's resident memory, open descriptors
//! and live tokio tasks since before the first one, divided by N. The
//! baseline is taken after a few sessions (N/10, at most 10) were opened
//! the same way and closed, so what every client pays once (a TLS root
//! store, a connection pool, the runtime's own descriptors, the code and
//! allocator arenas of the path) is not charged to the sessions.

use std::future::Future;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::workload::Caller;

/// What a density run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// N idle Streamable HTTP sessions sharing one HTTP client.
    HttpShared,
    /// N idle Streamable HTTP sessions, one HTTP client each.
    HttpPerSession,
    /// N stdio servers held by one process, spawned in parallel.
    Stdio,
    /// N Streamable HTTP sessions one after another: connect, first call,
    /// close.
    ConnectSequential,
}

impl Shape {
    /// Every shape, in table order.
    pub(crate) const ALL: [Shape; 4] = [
        Shape::HttpShared,
        Shape::HttpPerSession,
        Shape::Stdio,
        Shape::ConnectSequential,
    ];

    /// The name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Shape::HttpShared => "idle-http-shared",
            Shape::HttpPerSession => "idle-http-per-session",
            Shape::Stdio => "idle-stdio",
            Shape::ConnectSequential => "connect-sequential",
        }
    }

    /// The shape named `name`.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether it talks to the HTTP server (else it spawns stdio servers).
    pub(crate) fn is_http(self) -> bool {
        self != Shape::Stdio
    }
}

/// One density run's figures: printed as one JSON line.
#[derive(Debug, Serialize)]
pub(crate) struct DensityOutcome {
    pub(crate) client: String,
    pub(crate) shape: String,
    pub(crate) sessions: usize,
    /// Opening all the sessions (with their first call), in seconds.
    pub(crate) secs: f64,
    pub(crate) rss_kib_per_session: f64,
    pub(crate) fds_per_session: f64,
    pub(crate) tasks_per_session: f64,
    /// TCP connections the HTTP server accepted while the sessions opened
    /// and made their call, per session (HTTP shapes only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) connects_per_session: Option<f64>,
}

/// Counts the connections the benchmark server accepts over a stretch of a
/// run (HTTP shapes; `None` for stdio).
struct Accepted<'a>(Option<&'a str>);

impl Accepted<'_> {
    async fn now(&self) -> Result<Option<u64>, String> {
        match self.0 {
            Some(url) => Ok(Some(crate::server::connections_accepted(url).await?)),
            None => Ok(None),
        }
    }

    /// Per session between two counts, less the second query's own
    /// connection.
    fn per(before: Option<u64>, after: Option<u64>, n: usize) -> Option<f64> {
        Some((after?.saturating_sub(before?).saturating_sub(1)) as f64 / n as f64)
    }
}

struct Reading {
    rss_kib: u64,
    fds: usize,
    tasks: usize,
}

fn read() -> Reading {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    Reading {
        rss_kib,
        fds: std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count()),
        tasks: tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks(),
    }
}

/// How long sessions are left alone before they are measured.
const SETTLE: Duration = Duration::from_millis(500);

/// Opens `n` sessions with `connect` (all at once when `parallel`), one
/// `echo` each, and measures what they hold while idle. `server` is the
/// HTTP server's URL, whose accepted connections are counted.
pub(crate) async fn hold<C, F, Fut>(
    client: &str,
    shape: Shape,
    n: usize,
    parallel: bool,
    server: Option<&str>,
    connect: F,
) -> Result<DensityOutcome, String>
where
    C: Caller,
    F: Fn() -> Fut,
    Fut: Future<Output = Result<C, String>> + Send + 'static,
{
    // The warm-up opens a few sessions the way the run will (in parallel
    // when it is), so the code and the allocator arenas of that path are
    // in place before the baseline and are not charged to the sessions.
    let warm = (n / 10).clamp(1, 10);
    for c in open(warm, parallel, &connect).await? {
        c.close().await;
    }
    tokio::time::sleep(SETTLE).await;
    let accepted = Accepted(server);
    let accepted_before = accepted.now().await?;
    let before = read();
    let start = Instant::now();
    let sessions = open(n, parallel, &connect).await?;
    let secs = start.elapsed().as_secs_f64();
    tokio::time::sleep(SETTLE).await;
    let after = read();
    let accepted_after = accepted.now().await?;
    for c in sessions {
        c.close().await;
    }
    let per = |a: f64, b: f64| (a - b) / n as f64;
    Ok(DensityOutcome {
        client: client.into(),
        shape: shape.name().into(),
        sessions: n,
        secs,
        rss_kib_per_session: per(after.rss_kib as f64, before.rss_kib as f64),
        fds_per_session: per(after.fds as f64, before.fds as f64),
        tasks_per_session: per(after.tasks as f64, before.tasks as f64),
        connects_per_session: Accepted::per(accepted_before, accepted_after, n),
    })
}

/// Opens `n` sessions with `connect` (all at once when `parallel`), each
/// answering one `echo`.
async fn open<C, F, Fut>(n: usize, parallel: bool, connect: &F) -> Result<Vec<C>, String>
where
    C: Caller,
    F: Fn() -> Fut,
    Fut: Future<Output = Result<C, String>> + Send + 'static,
{
    Ok(if parallel {
        let tasks: Vec<_> = (0..n)
            .map(|_| {
                let open = connect();
                tokio::spawn(async move {
                    let c = open.await?;
                    c.echo("hello").await?;
                    Ok::<_, String>(c)
                })
            })
            .collect();
        let mut out = Vec::with_capacity(n);
        for t in tasks {
            out.push(t.await.map_err(|e| e.to_string())??);
        }
        out
    } else {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let c = connect().await?;
            c.echo("hello").await?;
            out.push(c);
        }
        out
    })
}

/// Connects, calls once and closes, `n` times one after another.
pub(crate) async fn connect_sequential<C, F, Fut>(
    client: &str,
    n: usize,
    server: &str,
    connect: F,
) -> Result<DensityOutcome, String>
where
    C: Caller,
    F: Fn() -> Fut,
    Fut: Future<Output = Result<C, String>>,
{
    connect().await?.close().await;
    let accepted = Accepted(Some(server));
    let accepted_before = accepted.now().await?;
    let before = read();
    let start = Instant::now();
    for _ in 0..n {
        let c = connect().await?;
        c.echo("hello").await?;
        c.close().await;
    }
    let secs = start.elapsed().as_secs_f64();
    let after = read();
    let accepted_after = accepted.now().await?;
    let per = |a: f64, b: f64| (a - b) / n as f64;
    Ok(DensityOutcome {
        client: client.into(),
        shape: Shape::ConnectSequential.name().into(),
        sessions: n,
        secs,
        rss_kib_per_session: per(after.rss_kib as f64, before.rss_kib as f64),
        fds_per_session: per(after.fds as f64, before.fds as f64),
        tasks_per_session: per(after.tasks as f64, before.tasks as f64),
        connects_per_session: Accepted::per(accepted_before, accepted_after, n),
    })
}
