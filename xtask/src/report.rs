//! What `bench` and `density` share: one measuring process, run with a
//! bound, and its JSON line read; a marked section of a document
//! rewritten in place.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cmd::display;

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
