//! What `bench`, its modes and `density` share: one measuring process,
//! run with a bound, and its JSON line read; the medians and how they are
//! shown; a marked section of a document rewritten in place.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cmd::{cargo, display, run};

/// A run that takes longer than this is killed and counted as failed.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs one measuring process and reads its JSON line.
pub(crate) fn run_one(cmd: &mut Command) -> Result<Value, String> {
    let shown = display(cmd);
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    let start = Instant::now();
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break;
        }
        if start.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("`{shown}` took longer than {RUN_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("`{shown}`: {}: {}", out.status, stderr.trim()));
    }
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).map_err(|e| format!("`{shown}` printed {line:?}: {e}"))
}

/// Replaces what lies between `begin` and `end` in `path` (markers
/// included) with `section`, or appends it; keeps the rest.
pub(crate) fn write_between(
    path: &Path,
    begin: &str,
    end: &str,
    section: &str,
) -> Result<(), String> {
    let old = fs::read_to_string(path).unwrap_or_else(|_| "# Benchmarks\n".into());
    let new = match (old.find(begin), old.find(end)) {
        (Some(b), Some(e)) if b < e => {
            format!(
                "{}{section}{}",
                &old[..b],
                &old[e + end.len()..].trim_start_matches('\n')
            )
        }
        _ => format!(
            "{}\n{section}",
            old.trim_end_matches('\n').to_string() + "\n"
        ),
    };
    fs::write(path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The median of `key` over a client's runs.
pub(crate) fn median(runs: Option<&[Value]>, key: &str) -> Option<f64> {
    let mut xs: Vec<f64> = runs?.iter().filter_map(|v| v[key].as_f64()).collect();
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    Some(if xs.len() % 2 == 1 {
        xs[mid]
    } else {
        (xs[mid - 1] + xs[mid]) / 2.0
    })
}

/// What the tables were measured on: the compiler, rmcp's version, the
/// commit, the machine and its load.
pub(crate) fn machine(root: &Path) -> String {
    let capture = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| "unknown".into())
    };
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let rmcp = fs::read_to_string(root.join("Cargo.lock"))
        .ok()
        .and_then(|lock| {
            let key = "name = \"rmcp\"\nversion = \"";
            let at = lock.find(key)? + key.len();
            lock[at..].split('"').next().map(str::to_string)
        })
        .unwrap_or_else(|| "unknown".into());
    format!(
        "- rustc: {}\n- rmcp: {rmcp} (crates.io); mcpwire: this commit ({})\n- machine: {cores} cores, {cpu}; load average at the end: {load}\n- OS: {}",
        capture("rustc", &["-V"]),
        capture("git", &["rev-parse", "--short", "HEAD"]),
        capture("uname", &["-sr"]),
    )
}

fn brief(v: &Value) -> String {
    let f = |k: &str| v[k].as_f64();
    let mut s = format!("{:.0} ops/s", f("ops_per_s").unwrap_or(0.0));
    if let Some(p50) = f("p50_us") {
        let _ = write!(s, ", p50 {p50:.1} us");
    }
    if let Some(mb) = f("mb_per_s") {
        let _ = write!(s, ", {mb:.0} MB/s");
    }
    let _ = write!(
        s,
        ", cpu {:.2} us/op, rss {:.1} MiB",
        f("cpu_us_per_op").unwrap_or(0.0),
        f("peak_rss_kib").unwrap_or(0.0) / 1024.0
    );
    s
}

/// The label of `heap_stacks_kib`: heap and stacks after the last call, the
/// client's own memory; peak RSS counts the binary's pages too.
const HELD: &str = "heap + stacks after the calls (MiB)";

/// The metrics shown for a workload: (JSON key, label, scale, higher is better).
pub(crate) fn metrics(workload: &str) -> &'static [(&'static str, &'static str, f64, bool)] {
    match workload {
        "w1" => &[
            ("p50_us", "connect p50 (ms)", 1e-3, false),
            ("peak_rss_kib", "peak RSS (MiB)", 1.0 / 1024.0, false),
        ],
        "w2" | "w2-task" => &[
            ("p50_us", "p50 (us)", 1.0, false),
            ("p99_us", "p99 (us)", 1.0, false),
            ("ops_per_s", "calls/s", 1.0, true),
            ("cpu_us_per_op", "CPU per call (us)", 1.0, false),
            ("peak_rss_kib", "peak RSS (MiB)", 1.0 / 1024.0, false),
            ("heap_stacks_kib", HELD, 1.0 / 1024.0, false),
        ],
        "w5" => &[
            ("p50_us", "20 servers ready p50 (ms)", 1e-3, false),
            ("peak_rss_kib", "peak RSS (MiB)", 1.0 / 1024.0, false),
        ],
        "w3" => &[
            ("ops_per_s", "calls/s", 1.0, true),
            ("cpu_us_per_op", "CPU per call (us)", 1.0, false),
            ("peak_rss_kib", "peak RSS (MiB)", 1.0 / 1024.0, false),
            ("heap_stacks_kib", HELD, 1.0 / 1024.0, false),
        ],
        _ => &[
            ("mb_per_s", "MB/s", 1.0, true),
            ("cpu_us_per_op", "CPU per call (ms)", 1e-3, false),
            ("peak_rss_kib", "peak RSS (MiB)", 1.0 / 1024.0, false),
            ("heap_stacks_kib", HELD, 1.0 / 1024.0, false),
        ],
    }
}

pub(crate) fn fmt(x: Option<f64>) -> String {
    match x {
        None => "n/a".into(),
        Some(x) if x >= 1000.0 => format!("{x:.0}"),
        Some(x) if x >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

pub(crate) fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "n/a".into(),
    }
}

/// The harness's main form: `bin --client C --transport T --workload W`
/// (the caller adds `--server` and `--quick`).
pub(crate) fn harness(bin: &Path, client: &str, transport: &str, workload: &str) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(["--client", client, "--transport", transport])
        .args(["--workload", workload]);
    cmd
}

/// Runs one measuring process, saying `label` and what it measured (or
/// why it failed) on stderr; its JSON line if it gave one.
pub(crate) fn measured(cmd: &mut Command, label: &str, started: Instant) -> Option<Value> {
    eprint!("[{:>4}s] {label}: ", started.elapsed().as_secs());
    match run_one(cmd) {
        Ok(v) => {
            eprintln!("{}", brief(&v));
            Some(v)
        }
        Err(e) => {
            eprintln!("FAILED: {e}");
            None
        }
    }
}

/// Builds the harness and the benchmark server in release mode (with
/// `extra` arguments to cargo): `target/release/mcpwire-bench` links every
/// client.
pub(crate) fn build_harness(extra: &[&str]) -> Result<(), String> {
    run(cargo()
        .args([
            "build",
            "--release",
            "-p",
            "mcpwire-bench",
            "-p",
            "mcpwire-bench-server",
        ])
        .arg("--bins")
        .args(extra))
}
