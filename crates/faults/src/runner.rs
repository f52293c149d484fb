//! Runs the cases one after another, each within its own time limit, then
//! checks that it left nothing behind: no process of the run alive, no
//! zombie child, no file descriptor more than before it.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

use crate::probe;

/// What the cases need to find: the programs they start.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// This binary (the scripted stdio servers are its `stdio-server` mode).
    pub exe: PathBuf,
    /// `mcpwire-bench-server`, the neutral echo server the proxy fronts.
    pub bench_server: PathBuf,
}

/// What a case returns: a short account of what it saw, or why it failed.
pub type Outcome = Result<String, String>;

/// A case's body.
pub type CaseFn = for<'a> fn(&'a Ctx) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// One fault and what must hold when it happens.
pub struct Case {
    /// A short kebab-case name.
    pub name: &'static str,
    /// The pass criterion, as checked.
    pub criterion: &'static str,
    /// The case fails if it has not finished by then.
    pub limit: Duration,
    /// The case itself.
    pub run: CaseFn,
}

/// How long leftovers may take to go away after a case (a process being
/// reaped, a connection task ending).
const SETTLE: Duration = Duration::from_secs(3);

/// The result of one case.
#[derive(Debug)]
pub struct Verdict {
    /// The case's name.
    pub name: &'static str,
    /// Passed?
    pub passed: bool,
    /// What happened.
    pub detail: String,
    /// How long it took.
    pub elapsed: Duration,
}

/// Runs `cases`, printing one line each and a summary line; returns the
/// verdicts.
pub async fn run(ctx: &Ctx, cases: &[Case]) -> Vec<Verdict> {
    let ctx = std::sync::Arc::new(ctx.clone());
    warm_up().await;
    if let Some(why) = probe::unavailable() {
        println!("note: {why}");
    }
    let fds_at_start = probe::fd_count();
    let mut verdicts = Vec::new();
    for case in cases {
        let fds = probe::fd_count();
        let started = Instant::now();
        // On its own task, so that a panic fails the case, not the run.
        let task = {
            let ctx = ctx.clone();
            let run = case.run;
            tokio::spawn(async move { run(&ctx).await })
        };
        let abort = task.abort_handle();
        let outcome = match tokio::time::timeout(case.limit, task).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(e)) => Err(format!("panicked: {e}")),
            Err(_) => {
                abort.abort();
                Err(format!("did not finish within {:?}", case.limit))
            }
        };
        let elapsed = started.elapsed();
        let outcome = match outcome {
            Ok(detail) => leaks(fds).await.map(|()| detail),
            Err(e) => Err(e),
        };
        let (passed, detail) = match outcome {
            Ok(d) => (true, d),
            Err(e) => (false, e),
        };
        println!(
            "{} {:<34} {:>6} ms  {}  [{}]",
            if passed { "pass" } else { "FAIL" },
            case.name,
            elapsed.as_millis(),
            detail,
            case.criterion
        );
        verdicts.push(Verdict {
            name: case.name,
            passed,
            detail,
            elapsed,
        });
        if !passed {
            // Let the next case start from a clean slate.
            settle(fds).await;
        }
    }
    let fds_at_end = probe::fd_count();
    if fds_at_end > fds_at_start {
        println!("note: {fds_at_start} descriptors open at the start, {fds_at_end} at the end");
    }
    let passed = verdicts.iter().filter(|v| v.passed).count();
    println!("{passed} passed, {} failed", verdicts.len() - passed);
    verdicts
}

/// Starts what the runtime creates once and keeps (the child-process signal
/// pipe), so the first case that spawns a process is not charged for it.
async fn warm_up() {
    let _ = tokio::process::Command::new("true").status().await;
}

/// Waits up to [`SETTLE`] for the process to be back to `fds` descriptors
/// and no leftover process; says what is left otherwise.
async fn leaks(fds: usize) -> Result<(), String> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let now_fds = probe::fd_count();
        let left = probe::leftovers();
        if now_fds <= fds && left.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let mut why = Vec::new();
            if now_fds > fds {
                why.push(format!(
                    "{} descriptors leaked ({fds} before, {now_fds} after: {})",
                    now_fds - fds,
                    probe::fd_targets().join(", ")
                ));
            }
            for l in left {
                why.push(format!(
                    "{} process {} left: {}",
                    if l.zombie { "zombie" } else { "orphan" },
                    l.pid,
                    l.cmdline
                ));
            }
            return Err(why.join("; "));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// After a failure: kill what the case left and give descriptors time.
async fn settle(fds: usize) {
    for l in probe::leftovers() {
        if !l.zombie
            && let Some(pid) = rustix::process::Pid::from_raw(l.pid)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
    let _ = leaks(fds).await;
}

/// Registers an `async fn case_name(ctx: &Ctx) -> Outcome` as a [`Case`].
#[macro_export]
macro_rules! case {
    ($name:literal, $f:path, $limit_secs:expr, $criterion:literal) => {
        $crate::runner::Case {
            name: $name,
            criterion: $criterion,
            limit: ::std::time::Duration::from_secs($limit_secs),
            run: |ctx| ::std::boxed::Box::pin($f(ctx)),
        }
    };
}
