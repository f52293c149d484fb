//! The workloads, their sizes, and the driver that runs them against any
//! async client.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::measure::{cpu_time, heap_stacks_kib, peak_rss_kib, quantile_us};

/// One workload; each runs in a process of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Workload {
    /// W1: spawn or connect, initialize, until ready; repeated.
    Connect,
    /// W2: sequential calls echoing 100 bytes.
    Sequential,
    /// W2 again, the calls made from a spawned task (as an agent's or a
    /// server's handler makes them) instead of from `block_on`.
    SequentialTask,
    /// W3: calls echoing 100 bytes, many in flight.
    Concurrent,
    /// W4: sequential calls echoing 1 MiB.
    Large1M,
    /// W4: sequential calls echoing 10 MiB.
    Large10M,
    /// W5: 20 stdio servers started until all are ready; repeated.
    Fleet,
}

impl Workload {
    /// Every workload, in table order.
    pub(crate) const ALL: [Workload; 7] = [
        Workload::Connect,
        Workload::Sequential,
        Workload::SequentialTask,
        Workload::Concurrent,
        Workload::Large1M,
        Workload::Large10M,
        Workload::Fleet,
    ];

    /// The name on the command line and in the table.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Workload::Connect => "w1",
            Workload::Sequential => "w2",
            Workload::SequentialTask => "w2-task",
            Workload::Concurrent => "w3",
            Workload::Large1M => "w4-1m",
            Workload::Large10M => "w4-10m",
            Workload::Fleet => "w5",
        }
    }

    /// W2 in either shape.
    pub(crate) fn is_sequential(self) -> bool {
        matches!(self, Workload::Sequential | Workload::SequentialTask)
    }

    /// The workload named `name`.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.name() == name)
    }
}

/// How much work each workload does.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) connects: usize,
    pub(crate) warmup: usize,
    pub(crate) sequential: usize,
    pub(crate) concurrent: usize,
    pub(crate) in_flight: usize,
    pub(crate) large_1m: usize,
    pub(crate) large_10m: usize,
    /// W5: how many fleets are started, and of how many servers.
    pub(crate) fleets: usize,
    pub(crate) fleet_size: usize,
}

impl Plan {
    /// The sizes of the issue: 10,000 sequential, 20,000 with 64 in flight,
    /// 20 x 1 MiB, 3 x 10 MiB.
    pub(crate) fn full() -> Self {
        Plan {
            connects: 20,
            warmup: 200,
            sequential: 10_000,
            concurrent: 20_000,
            in_flight: 64,
            large_1m: 20,
            large_10m: 3,
            fleets: 5,
            fleet_size: 20,
        }
    }

    /// A fifth of the work, for a quick look.
    pub(crate) fn quick() -> Self {
        Plan {
            connects: 5,
            warmup: 50,
            sequential: 2_000,
            concurrent: 4_000,
            in_flight: 64,
            large_1m: 5,
            large_10m: 1,
            fleets: 2,
            fleet_size: 20,
        }
    }
}

/// What one run measured: printed as one JSON line.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Outcome {
    pub(crate) client: String,
    pub(crate) transport: String,
    pub(crate) workload: String,
    /// Operations measured (calls, or connects for W1).
    pub(crate) ops: usize,
    pub(crate) secs: f64,
    pub(crate) p50_us: Option<f64>,
    pub(crate) p99_us: Option<f64>,
    pub(crate) ops_per_s: f64,
    /// Echoed message bytes per second (one direction), for W4.
    pub(crate) mb_per_s: Option<f64>,
    /// Client CPU (user + system, all threads) per operation.
    pub(crate) cpu_us_per_op: f64,
    /// Peak resident set size of the client process.
    pub(crate) peak_rss_kib: u64,
    /// The client process's heap and stacks resident after the last call,
    /// before the client closes (W2 to W4): its own memory, without the
    /// pages of the binary that `peak_rss_kib` counts too.
    pub(crate) heap_stacks_kib: Option<u64>,
}

/// What a run collected before it is summarised.
#[derive(Debug, Default)]
pub(crate) struct Samples {
    pub(crate) ops: usize,
    pub(crate) elapsed: Duration,
    pub(crate) cpu: Duration,
    /// Per-operation latencies, when the workload is sequential.
    pub(crate) latencies: Vec<Duration>,
    pub(crate) message_len: Option<usize>,
    /// Heap and stacks right after the last call, where the workload reads
    /// them.
    pub(crate) heap_stacks_kib: Option<u64>,
}

impl Samples {
    /// The summary, with the peak RSS read now (at the end of the process).
    pub(crate) fn outcome(mut self, client: &str, transport: &str, w: Workload) -> Outcome {
        self.latencies.sort_unstable();
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        Outcome {
            client: client.into(),
            transport: transport.into(),
            workload: w.name().into(),
            ops: self.ops,
            secs,
            p50_us: quantile_us(&self.latencies, 0.5),
            p99_us: quantile_us(&self.latencies, 0.99),
            ops_per_s: self.ops as f64 / secs,
            mb_per_s: self
                .message_len
                .map(|len| (len * self.ops) as f64 / secs / 1e6),
            cpu_us_per_op: self.cpu.as_secs_f64() * 1e6 / self.ops.max(1) as f64,
            peak_rss_kib: peak_rss_kib(),
            heap_stacks_kib: self.heap_stacks_kib,
        }
    }
}

/// The message a workload echoes: printable ASCII, so no client pays for
/// escaping and every client pays the same.
pub(crate) fn message(len: usize) -> Arc<str> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -";
    let s: String = (0..len)
        .map(|i| ALPHABET[(i * 7 + i / 64) % ALPHABET.len()] as char)
        .collect();
    s.into()
}

/// One connected client, seen by the workloads.
pub(crate) trait Caller: Clone + Send + Sync + 'static {
    /// Calls the `echo` tool with `message`; the length of the text echoed.
    fn echo(&self, message: &str) -> impl Future<Output = Result<usize, String>> + Send;
    /// Ends the session and waits for the client to wind down.
    fn close(self) -> impl Future<Output = ()> + Send;
}

/// Runs `workload` (anything but W1) on `caller`.
pub(crate) async fn drive<C: Caller>(
    caller: &C,
    workload: Workload,
    plan: &Plan,
) -> Result<Samples, String> {
    let small = message(100);
    for _ in 0..plan.warmup {
        check(caller.echo(&small).await?, small.len())?;
    }
    match workload {
        Workload::Connect => Err("W1 is driven by `connect_loop`".into()),
        Workload::Fleet => Err("W5 is driven by `via_manager::fleet`".into()),
        Workload::Sequential | Workload::SequentialTask => {
            sequential(caller, &small, plan.sequential).await
        }
        Workload::Large1M => sequential(caller, &message(1 << 20), plan.large_1m).await,
        Workload::Large10M => sequential(caller, &message(10 << 20), plan.large_10m).await,
        Workload::Concurrent => concurrent(caller, small, plan.concurrent, plan.in_flight).await,
    }
}

async fn sequential<C: Caller>(
    caller: &C,
    message: &Arc<str>,
    n: usize,
) -> Result<Samples, String> {
    let mut latencies = Vec::with_capacity(n);
    let cpu = cpu_time();
    let start = Instant::now();
    for _ in 0..n {
        let t = Instant::now();
        let len = caller.echo(message).await?;
        latencies.push(t.elapsed());
        check(len, message.len())?;
    }
    Ok(Samples {
        ops: n,
        elapsed: start.elapsed(),
        cpu: cpu_time().saturating_sub(cpu),
        latencies,
        message_len: (message.len() > 100).then_some(message.len()),
        heap_stacks_kib: heap_stacks_kib(),
    })
}

async fn concurrent<C: Caller>(
    caller: &C,
    message: Arc<str>,
    n: usize,
    in_flight: usize,
) -> Result<Samples, String> {
    let next = Arc::new(AtomicUsize::new(0));
    let cpu = cpu_time();
    let start = Instant::now();
    let workers: Vec<_> = (0..in_flight)
        .map(|_| {
            let (caller, next, message) = (caller.clone(), next.clone(), message.clone());
            tokio::spawn(async move {
                while next.fetch_add(1, Ordering::Relaxed) < n {
                    check(caller.echo(&message).await?, message.len())?;
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    for worker in workers {
        worker.await.map_err(|e| e.to_string())??;
    }
    Ok(Samples {
        ops: n,
        elapsed: start.elapsed(),
        cpu: cpu_time().saturating_sub(cpu),
        latencies: Vec::new(),
        message_len: None,
        heap_stacks_kib: heap_stacks_kib(),
    })
}

/// W1: `n` times, connect until ready (timed), then close (not timed).
pub(crate) async fn connect_loop<C, F, Fut>(n: usize, connect: F) -> Result<Samples, String>
where
    C: Caller,
    F: Fn() -> Fut,
    Fut: Future<Output = Result<C, String>>,
{
    // One connection first, so every client starts with warm caches.
    connect().await?.close().await;
    let mut latencies = Vec::with_capacity(n);
    let mut elapsed = Duration::ZERO;
    let cpu = cpu_time();
    for _ in 0..n {
        let t = Instant::now();
        let caller = connect().await?;
        let took = t.elapsed();
        latencies.push(took);
        elapsed += took;
        caller.close().await;
    }
    Ok(Samples {
        ops: n,
        elapsed,
        cpu: cpu_time().saturating_sub(cpu),
        latencies,
        message_len: None,
        heap_stacks_kib: None,
    })
}

/// An error unless the echo came back whole.
pub(crate) fn check(got: usize, sent: usize) -> Result<(), String> {
    if got == sent {
        Ok(())
    } else {
        Err(format!("echo of {sent} bytes came back as {got} bytes"))
    }
}
