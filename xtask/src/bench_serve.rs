//! `cargo xtask bench --serve`: what `mcpwire serve` buys and costs (issue
//! 31), with the release `mcpwire` binary. Not part of the default run (it
//! needs node and the servers `cargo xtask servers` installs) nor of CI.
//!
//! - **A lasting session.** Twenty `mcpwire call`s of `echo` on the
//!   reference `server-everything`, each starting it afresh through `npx`,
//!   against twenty through `mcpwire serve --socket` holding it (`-s
//!   unix:PATH`). The wall time of each set of twenty processes; starting
//!   `serve` and its first (warm-up) call are not counted. Unix sockets:
//!   like the rest of xtask, Unix only.
//! - **Scale-out of one process.** `mcpwire-bench --url` (mcpwire's client,
//!   one session) makes W1, W2 and W3 against `mcpwire-bench-server http`
//!   directly and through `mcpwire serve --http` in front of the same
//!   server process, alternating, with serve's CPU per call. Then sessions
//!   are opened against serve one after another and held idle: against
//!   the default limit (to see what stops them) and with `--max-sessions`
//!   raised, where serve's resident memory growth per session is read.
//!
//! Each part runs `rounds` times, the two sides alternating; medians are
//! shown. The result goes between the `serve` markers of
//! `docs/benchmarks.md`.

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use serde_json::{Value, json};

use crate::cmd::{cargo, display, run};
use crate::report::{median, run_one, write_between};

const BEGIN: &str = "<!-- serve:begin (written by `cargo xtask bench --serve`) -->";
const END: &str = "<!-- serve:end -->";

/// The `mcpwire call`s in each set.
const CALLS: usize = 20;
/// How long one `mcpwire call`, or serve's start, may take.
const CALL_LIMIT: Duration = Duration::from_secs(60);
/// Sessions asked of serve at its default limit (64): one more than it
/// allows.
const OVER_DEFAULT: usize = 65;
/// Sessions held, and serve's `--max-sessions`, for the memory figure.
const HELD: usize = 1000;

/// The binaries and places a run uses.
struct Paths {
    mcpwire: PathBuf,
    bench: PathBuf,
    bench_server: PathBuf,
    /// `target/mcp-servers/npm` (or under `$MCPWIRE_SERVERS_DIR`).
    npm: PathBuf,
}

/// Builds the release `mcpwire` and the benchmark binaries, runs both
/// parts, prints the section and, with `write`, puts it into
/// `docs/benchmarks.md`.
/// `release` is the directory of release binaries.
pub(crate) fn serve(
    root: &Path,
    release: &Path,
    rounds: usize,
    quick: bool,
    write: bool,
) -> Result<(), String> {
    run(cargo().args([
        "build",
        "--release",
        "-p",
        "mcpwire-cli",
        "--bin",
        "mcpwire",
        "-p",
        "mcpwire-bench",
        "--bin",
        "mcpwire-bench",
        "-p",
        "mcpwire-bench-server",
        "--bin",
        "mcpwire-bench-server",
    ]))?;
    let bin = release;
    // Where `cargo xtask servers` installs, as the tests find it.
    let servers = std::env::var_os("MCPWIRE_SERVERS_DIR")
        .map_or_else(|| root.join("target").join("mcp-servers"), PathBuf::from);
    let paths = &Paths {
        mcpwire: bin.join("mcpwire"),
        bench: bin.join("mcpwire-bench"),
        bench_server: bin.join("mcpwire-bench-server"),
        npm: servers.join("npm"),
    };
    let everything = paths.npm.join("node_modules/.bin/mcp-server-everything");
    if !everything.exists() {
        return Err(format!(
            "{} is not installed: run `cargo xtask servers` (or set MCPWIRE_SERVERS_DIR)",
            everything.display()
        ));
    }
    let scratch = std::env::temp_dir().join(format!("mcpwire-serve-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let load_before = load_average();
    let result = measure(paths, &scratch, rounds, quick);
    let _ = std::fs::remove_dir_all(&scratch);
    let (lasting, http) = result?;
    let load = format!("{load_before} at the start, {} at the end", load_average());
    let section = section(rounds, quick, &lasting, &http, &load);
    println!("\n{section}");
    if write {
        write_between(&root.join("docs/benchmarks.md"), BEGIN, END, &section)?;
        eprintln!("wrote docs/benchmarks.md");
    }
    Ok(())
}

/// Every run of both parts, the sides alternating within each round.
fn measure(
    paths: &Paths,
    scratch: &Path,
    rounds: usize,
    quick: bool,
) -> Result<(Vec<Lasting>, Vec<HttpRound>), String> {
    let fleet = scratch.join("everything.json");
    std::fs::write(&fleet, everything_fleet(&paths.npm).to_string())
        .map_err(|e| format!("{}: {e}", fleet.display()))?;
    let mut lasting = Vec::new();
    let mut http = Vec::new();
    for round in 1..=rounds {
        eprint!("round {round}: {CALLS} fresh starts: ");
        let fresh = fresh_calls(paths)?;
        eprintln!("{:.2} s", fresh.as_secs_f64());
        let held = lasting_calls(paths, &fleet, scratch)?;
        eprintln!(
            "round {round}: {CALLS} calls through serve --socket: {:.3} s",
            held.as_secs_f64()
        );
        lasting.push(Lasting {
            fresh,
            lasting: held,
            load: load_average(),
        });
        http.push(http_round(paths, scratch, round, quick)?);
    }
    Ok((lasting, http))
}

/// One round of the lasting-session part.
struct Lasting {
    fresh: Duration,
    lasting: Duration,
    /// The load average after the round.
    load: String,
}

/// A fleet file of one entry: the reference server through `npx`, run in
/// the directory `cargo xtask servers` installed it in.
fn everything_fleet(npm: &Path) -> Value {
    json!({"mcpServers": {"everything": {
        "command": "npx",
        "args": ["--no-install", "mcp-server-everything"],
        "cwd": npm,
    }}})
}

/// A fleet file of one entry: the benchmark server at `url`.
fn bench_fleet(url: &str) -> Value {
    json!({"mcpServers": {"bench": {"type": "http", "url": url}}})
}

/// Twenty `mcpwire call echo ... -- npx ...`, one after another.
fn fresh_calls(paths: &Paths) -> Result<Duration, String> {
    let mut total = Duration::ZERO;
    for _ in 0..CALLS {
        let mut call = Command::new(&paths.mcpwire);
        call.args(["call", "echo", "message=hi", "--"])
            .args(["npx", "--no-install", "mcp-server-everything"])
            .current_dir(&paths.npm);
        total += timed(&mut call)?;
    }
    Ok(total)
}

/// `serve --socket` started (not timed), one warm-up call, then twenty
/// calls through it.
fn lasting_calls(paths: &Paths, fleet: &Path, scratch: &Path) -> Result<Duration, String> {
    let socket = scratch.join("everything.sock");
    let mut serve = Command::new(&paths.mcpwire);
    serve
        .arg("--config")
        .arg(fleet)
        .arg("serve")
        .arg("--socket")
        .arg(&socket);
    let served = Served::start(&mut serve, 0)?;
    let target = format!("unix:{}", socket.display());
    let call = || {
        let mut call = Command::new(&paths.mcpwire);
        call.args(["-s", &target, "call", "everything__echo", "message=hi"]);
        call
    };
    // The socket is bound before the fleet starts; the first call waits
    // for it.
    let wait = Instant::now();
    while !socket.exists() {
        if wait.elapsed() > CALL_LIMIT {
            return Err(format!("serve never bound {}", socket.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    timed(&mut call())?;
    let mut total = Duration::ZERO;
    for _ in 0..CALLS {
        total += timed(&mut call())?;
    }
    served.stop();
    Ok(total)
}

/// Runs `cmd` to its end, its output discarded but for stderr on failure;
/// the time from spawning it to its exit.
fn timed(cmd: &mut Command) -> Result<Duration, String> {
    let shown = display(cmd);
    let start = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    let pid = child.id();
    // Waited for on a thread of its own, so the wait is bounded and the
    // exit is seen the moment it happens (no polling interval in the time).
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = tx.send((start.elapsed(), out));
    });
    let (took, out) = match rx.recv_timeout(CALL_LIMIT) {
        Ok(done) => done,
        Err(_) => {
            if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                let _ = kill_process(pid, Signal::KILL);
            }
            return Err(format!("`{shown}` took longer than {CALL_LIMIT:?}"));
        }
    };
    let out = out.map_err(|e| format!("`{shown}`: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("`{shown}`: {}: {}", out.status, err.trim()));
    }
    Ok(took)
}

/// A `serve` (or the benchmark server) running in a process group of its
/// own; stopped with SIGINT, as Ctrl-C, so it closes its fleet, and the
/// group killed after if anything is left.
struct Served {
    child: Child,
    /// What it printed first on stdout (`--http`: the URL, the token).
    lines: Vec<String>,
}

impl Served {
    /// Spawns `cmd` and reads the first `lines` lines it prints: an HTTP
    /// server's URL first (and `serve`'s token line after it).
    fn start(cmd: &mut Command, lines: usize) -> Result<Self, String> {
        use std::os::unix::process::CommandExt as _;
        let shown = display(cmd);
        eprintln!("$ {shown}");
        let mut child = cmd
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
        let want = lines;
        let mut lines = Vec::new();
        if want > 0 {
            let stdout = child.stdout.take().ok_or("no stdout")?;
            let mut reader = BufReader::new(stdout);
            for _ in 0..want {
                let mut line = String::new();
                reader
                    .read_line(&mut line)
                    .map_err(|e| format!("`{shown}`: {e}"))?;
                lines.push(line.trim().to_owned());
            }
        }
        let served = Served { child, lines };
        if want > 0
            && !served
                .url()
                .is_some_and(|u| u.starts_with("http://127.0.0.1:"))
        {
            return Err(format!("`{shown}` printed {:?}, not its URL", served.lines));
        }
        Ok(served)
    }

    fn url(&self) -> Option<&str> {
        self.lines.first().map(String::as_str)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stop(self) {
        drop(self);
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let pid = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw);
        if let Some(pid) = pid {
            let _ = kill_process(pid, Signal::INT);
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Whatever it started and left (the group id is its pid).
        if let Some(pid) = pid {
            let _ = kill_process_group(pid, Signal::KILL);
        }
        let _ = self.child.wait();
    }
}

/// The token line `serve --http` prints after its URL.
fn token_of(line: &str) -> Option<&str> {
    line.strip_prefix("Authorization: Bearer ")
        .filter(|t| !t.is_empty())
}

/// One round of the HTTP part: each workload direct and through serve,
/// then sessions held.
struct HttpRound {
    /// By workload: (direct, through serve).
    calls: Vec<(&'static str, Value, Value)>,
    /// Against serve's default limit.
    limited: Value,
    /// With `--max-sessions` raised.
    held: Value,
}

fn http_round(
    paths: &Paths,
    scratch: &Path,
    round: usize,
    quick: bool,
) -> Result<HttpRound, String> {
    // Answers as SSE streams, as serve answers a client that accepts them:
    // the client reads the same framing on both sides.
    let upstream = Served::start(Command::new(&paths.bench_server).args(["http", "--sse"]), 1)?;
    let upstream_url = upstream.url().unwrap_or_default().to_owned();
    let fleet = scratch.join("bench.json");
    std::fs::write(&fleet, bench_fleet(&upstream_url).to_string())
        .map_err(|e| format!("{}: {e}", fleet.display()))?;
    let serve = |extra: &[&str]| {
        let mut cmd = Command::new(&paths.mcpwire);
        cmd.arg("--config")
            .arg(&fleet)
            .args(["serve", "--http"])
            .args(extra)
            .env_remove("MCPWIRE_SERVE_TOKEN");
        // The URL, then the token line.
        Served::start(&mut cmd, 2)
    };
    let bench = |url: &str, token: Option<&str>, tool: &str, watch: Option<u32>| {
        let mut cmd = Command::new(&paths.bench);
        cmd.args(["--url", url, "--tool", tool])
            .env_remove("MCPWIRE_BENCH_BEARER");
        if let Some(token) = token {
            cmd.env("MCPWIRE_BENCH_BEARER", token);
        }
        if let Some(pid) = watch {
            cmd.args(["--watch-pid", &pid.to_string()]);
        }
        cmd
    };
    let served = serve(&[])?;
    let url = served.url().unwrap_or_default().to_owned();
    let token = served
        .lines
        .get(1)
        .and_then(|l| token_of(l))
        .map(str::to_owned);
    let token = token.ok_or("serve --http printed no token line")?;
    let mut calls = Vec::new();
    for workload in ["w1", "w2", "w3"] {
        let run = |mut cmd: Command, side: &str| {
            cmd.args(["--workload", workload]);
            if quick {
                cmd.arg("--quick");
            }
            eprint!("round {round} {workload} {side}: ");
            let v = run_one(&mut cmd)?;
            eprintln!("{v}");
            Ok::<_, String>(v)
        };
        let direct = run(bench(&upstream_url, None, "echo", None), "direct")?;
        let through = run(
            bench(&url, Some(&token), "bench__echo", Some(served.pid())),
            "through serve",
        )?;
        calls.push((workload, direct, through));
    }
    served.stop();
    let hold = |extra: &[&str], n: usize| {
        let served = serve(extra)?;
        let url = served.url().unwrap_or_default().to_owned();
        let token = served
            .lines
            .get(1)
            .and_then(|l| token_of(l))
            .map(str::to_owned);
        let token = token.ok_or("serve --http printed no token line")?;
        let mut cmd = bench(&url, Some(&token), "bench__echo", Some(served.pid()));
        cmd.args(["--hold", &n.to_string()]);
        eprint!("round {round} hold {n} {extra:?}: ");
        let v = run_one(&mut cmd)?;
        eprintln!("{v}");
        served.stop();
        Ok::<_, String>(v)
    };
    let held_n = if quick { HELD / 10 } else { HELD };
    let limited = hold(&[], OVER_DEFAULT)?;
    let held = hold(&["--max-sessions", &held_n.to_string()], held_n)?;
    upstream.stop();
    Ok(HttpRound {
        calls,
        limited,
        held,
    })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The median of `xs`, seconds.
fn median_secs(xs: &[Duration]) -> Option<f64> {
    let runs: Vec<Value> = xs.iter().map(|d| json!({"s": d.as_secs_f64()})).collect();
    median(Some(runs.as_slice()), "s")
}

/// How many times faster `lasting` is than `fresh`, as "1/N".
fn one_in(fresh: f64, lasting: f64) -> String {
    if lasting > 0.0 {
        format!("1/{:.0}", fresh / lasting)
    } else {
        "n/a".into()
    }
}

fn fmt(x: Option<f64>) -> String {
    match x {
        None => "n/a".into(),
        Some(x) if x.abs() >= 1000.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "n/a".into(),
    }
}

/// The lasting-session table: each round, then the medians.
fn lasting_table(runs: &[Lasting]) -> String {
    let mut t = String::from(
        "| round | 20 fresh starts (s) | 20 calls through the lasting session (s) | lasting / fresh | load average after |\n\
         |---|---:|---:|---:|---|\n",
    );
    for (i, r) in runs.iter().enumerate() {
        let (f, l) = (r.fresh.as_secs_f64(), r.lasting.as_secs_f64());
        let _ = writeln!(
            t,
            "| {} | {f:.2} | {l:.3} | {} | {} |",
            i + 1,
            one_in(f, l),
            r.load
        );
    }
    let fresh = median_secs(&runs.iter().map(|r| r.fresh).collect::<Vec<_>>());
    let lasting = median_secs(&runs.iter().map(|r| r.lasting).collect::<Vec<_>>());
    if let (Some(f), Some(l)) = (fresh, lasting) {
        let _ = writeln!(t, "| median | {f:.2} | {l:.3} | {} | |", one_in(f, l));
        let met = if l * 10.0 < f { "yes" } else { "**no**" };
        let _ = writeln!(
            t,
            "\nTarget (issue 31): the lasting session under a tenth of the fresh starts: {met} \
             (medians, {}).",
            one_in(f, l)
        );
    }
    t
}

/// The HTTP tables: calls direct against through serve, then sessions
/// held.
fn http_tables(rounds: &[HttpRound]) -> String {
    let mut t = String::from(
        "| workload | metric | direct | through serve | through / direct | serve's CPU per call (us) |\n\
         |---|---|---:|---:|---:|---:|\n",
    );
    let rows: [(&str, &str, &str, f64); 5] = [
        ("w1", "p50_us", "session ready p50 (ms)", 1e-3),
        ("w2", "p50_us", "p50 (us)", 1.0),
        ("w2", "ops_per_s", "calls/s", 1.0),
        ("w3", "ops_per_s", "calls/s, 64 in flight", 1.0),
        ("w3", "cpu_us_per_op", "client CPU per call (us)", 1.0),
    ];
    for (workload, key, label, scale) in rows {
        let side = |through: bool| -> Vec<Value> {
            rounds
                .iter()
                .flat_map(|r| r.calls.iter())
                .filter(|(w, _, _)| *w == workload)
                .map(|(_, d, s)| if through { s.clone() } else { d.clone() })
                .collect()
        };
        let (direct, through) = (side(false), side(true));
        let d = median(Some(direct.as_slice()), key).map(|x| x * scale);
        let s = median(Some(through.as_slice()), key).map(|x| x * scale);
        let serve_cpu = match key {
            "ops_per_s" => fmt(median(Some(through.as_slice()), "watched_cpu_us_per_op")),
            _ => String::new(),
        };
        let _ = writeln!(
            t,
            "| {workload} | {label} | {} | {} | {} | {serve_cpu} |",
            fmt(d),
            fmt(s),
            ratio(s, d)
        );
    }
    let limited: Vec<Value> = rounds.iter().map(|r| r.limited.clone()).collect();
    let held: Vec<Value> = rounds.iter().map(|r| r.held.clone()).collect();
    let stopped = |runs: &[Value]| {
        runs.iter()
            .find_map(|v| v["stopped_by"].as_str())
            .map_or("nothing (all opened)".to_owned(), |s| format!("`{s}`"))
    };
    let kib = |runs: &[Value], key: &str| median(Some(runs), key);
    let count =
        |runs: &[Value], key: &str| kib(runs, key).map_or("n/a".into(), |n| format!("{n:.0}"));
    let _ = write!(
        t,
        "\n| serve | sessions asked | sessions held | stopped by | serve's RSS per idle session (KiB) | serve's descriptors per session | time to open all (ms) |\n\
         |---|---:|---:|---|---:|---:|---:|\n"
    );
    for (name, runs) in [
        ("default (64 sessions)", limited.as_slice()),
        ("`--max-sessions` raised", held.as_slice()),
    ] {
        let _ = writeln!(
            t,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            count(runs, "asked"),
            count(runs, "held"),
            stopped(runs),
            fmt(kib(runs, "watched_rss_kib_per_session")),
            fmt(kib(runs, "watched_fds_per_session")),
            fmt(kib(runs, "secs").map(|s| s * 1e3)),
        );
    }
    t
}

fn section(
    rounds: usize,
    quick: bool,
    lasting: &[Lasting],
    http: &[HttpRound],
    load: &str,
) -> String {
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let node = Command::new("node")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    let held = if quick { HELD / 10 } else { HELD };
    format!(
        "{BEGIN}\n## `mcpwire serve`: a lasting session and one process's scale-out (issue 31)\n\n\
         Produced by `cargo xtask bench --serve{}` ({rounds} round(s), the two sides \
         alternating in each; medians shown), the release build of `mcpwire`, \
         `mcpwire-bench` and `mcpwire-bench-server`, commit `{commit}`, {cores} cores, \
         node {node}; load average {load}. Unix only (the socket; xtask is a \
         Unix tool).\n\n\
         ### A lasting session\n\n\
         The wall time of {CALLS} `mcpwire call echo message=hi` processes one after \
         another, each starting the reference `server-everything` afresh \
         (`-- npx --no-install mcp-server-everything`, in `target/mcp-servers/npm`), \
         against {CALLS} `mcpwire -s unix:PATH call everything__echo message=hi` through \
         `mcpwire --config FILE serve --socket PATH` holding the same server started \
         the same way. Starting `serve` and one warm-up call through it are not \
         counted.\n\n\
         {}\n\
         ### One `serve --http` process\n\n\
         `mcpwire-bench --url` (mcpwire's client, one session, the default HTTP client) \
         against `mcpwire-bench-server http --sse` directly, and against `mcpwire serve \
         --http` whose fleet is that same server process (`bench__echo`, one upstream \
         session shared by every client of serve). Both answer each call as an SSE stream, \
         so the client reads the same framing on both sides. W1: a session opened until ready (20 times); \
         W2: 10,000 sequential echoes of 100 bytes; W3: 20,000 with 64 in flight. \
         Serve's CPU is its user + system time over the run (warm-up calls included, 10 \
         ms resolution) per call.\n\n\
         Sessions held: sessions opened against serve one after another (each answers \
         one call) until the number asked or one fails, held idle 500 ms; serve's \
         `VmRSS` and open descriptors grown since before the first (after a few were \
         opened and closed), per session. Once against serve's default limit ({OVER_DEFAULT} \
         asked), once with `--max-sessions {held}`.\n\n\
         {}{END}\n",
        if quick { " --quick" } else { "" },
        lasting_table(lasting),
        http_tables(http),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lasting_table_shows_each_round_the_medians_and_the_target() {
        let run = |fresh: f64, lasting: f64| Lasting {
            fresh: Duration::from_secs_f64(fresh),
            lasting: Duration::from_secs_f64(lasting),
            load: "1.00 1.00 1.00".into(),
        };
        let t = lasting_table(&[run(20.0, 0.25), run(18.0, 0.5), run(30.0, 0.3)]);
        assert!(
            t.contains("| 1 | 20.00 | 0.250 | 1/80 | 1.00 1.00 1.00 |"),
            "{t}"
        );
        // Medians of each column apart: 20 s and 0.3 s.
        assert!(t.contains("| median | 20.00 | 0.300 | 1/67 | |"), "{t}");
        assert!(t.contains("fresh starts: yes"), "{t}");
        let slow = lasting_table(&[run(2.0, 0.5)]);
        assert!(slow.contains("fresh starts: **no**"), "{slow}");
        // Exactly a tenth is not under a tenth.
        let tenth = lasting_table(&[run(2.0, 0.2)]);
        assert!(tenth.contains("fresh starts: **no**"), "{tenth}");
    }

    #[test]
    fn the_http_tables_show_medians_ratios_and_what_stopped_the_sessions() {
        let call = |p50: f64, ops: f64, serve_cpu: Option<f64>| {
            let mut v = json!({"p50_us": p50, "ops_per_s": ops, "cpu_us_per_op": 10.0});
            if let Some(c) = serve_cpu {
                v["watched_cpu_us_per_op"] = json!(c);
            }
            v
        };
        let round = |ops_through: f64| HttpRound {
            calls: vec![
                ("w1", call(500.0, 0.0, None), call(1500.0, 0.0, Some(0.0))),
                (
                    "w2",
                    call(100.0, 8000.0, None),
                    call(300.0, ops_through, Some(40.0)),
                ),
                (
                    "w3",
                    call(0.0, 40000.0, None),
                    call(0.0, 10000.0, Some(30.0)),
                ),
            ],
            limited: json!({"asked": 100, "held": 64, "stopped_by": "HTTP 503",
                            "watched_rss_kib_per_session": 20.0,
                            "watched_fds_per_session": 1.0, "secs": 0.1}),
            held: json!({"asked": 1000, "held": 1000, "stopped_by": null,
                         "watched_rss_kib_per_session": 12.5,
                         "watched_fds_per_session": 1.0, "secs": 1.5}),
        };
        let t = http_tables(&[round(2000.0), round(4000.0), round(3200.0)]);
        let row = |prefix: &str| {
            t.lines()
                .find(|l| l.starts_with(prefix))
                .unwrap_or_else(|| panic!("no row {prefix}: {t}"))
                .to_owned()
        };
        assert_eq!(
            row("| w1 |"),
            "| w1 | session ready p50 (ms) | 0.50 | 1.50 | 3.00x |  |"
        );
        assert_eq!(
            row("| w2 | calls/s"),
            "| w2 | calls/s | 8000 | 3200 | 0.40x | 40.0 |"
        );
        assert_eq!(
            row("| w2 | p50"),
            "| w2 | p50 (us) | 100.0 | 300.0 | 3.00x |  |"
        );
        assert_eq!(
            row("| w3 | calls/s"),
            "| w3 | calls/s, 64 in flight | 40000 | 10000 | 0.25x | 30.0 |"
        );
        assert_eq!(
            row("| default"),
            "| default (64 sessions) | 100 | 64 | `HTTP 503` | 20.0 | 1.00 | 100.0 |"
        );
        assert_eq!(
            row("| `--max-sessions`"),
            "| `--max-sessions` raised | 1000 | 1000 | nothing (all opened) | 12.5 | 1.00 | 1500 |"
        );
    }

    #[test]
    fn serve_token_line_is_read_and_an_empty_one_is_not_a_token() {
        assert_eq!(token_of("Authorization: Bearer abc123"), Some("abc123"));
        assert_eq!(token_of("Authorization: Bearer "), None);
        assert_eq!(token_of("http://127.0.0.1:1/mcp"), None);
    }

    #[test]
    fn the_fleets_name_the_server_as_the_tool_names_expect() {
        let npm = Path::new("/x/npm");
        let f = everything_fleet(npm);
        let entry = &f["mcpServers"]["everything"];
        assert_eq!(entry["command"], "npx");
        assert_eq!(entry["cwd"], "/x/npm");
        let b = bench_fleet("http://127.0.0.1:9/mcp");
        assert_eq!(b["mcpServers"]["bench"]["url"], "http://127.0.0.1:9/mcp");
        assert_eq!(b["mcpServers"]["bench"]["type"], "http");
    }
}
