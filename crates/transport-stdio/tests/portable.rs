//! The stdio contract on every platform, Windows included, with servers that
//! need no shell: this test binary runs itself as the server (the
//! `MCPWIRE_STDIO_HELPER` variable picks what it does), so the same tests
//! hold on Unix and under Windows (or Wine). On Windows they also run the
//! demo server and this binary behind `.cmd` wrappers found by name through
//! `PATHEXT`, and check that no process of the tree is left.
//!
//! It has its own small runner (`harness = false`): the binary must be able
//! to act as a server, which libtest's `main` would not let it do. Tests run
//! one after another; arguments filter them by name, as with libtest.

mod common;

use std::io::{BufRead, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::*;
use mcpwire_stdio::{SAFE_ENV_VARS, SpawnError, StderrMode, StdioConfig, StdioTransport};
use mcpwire_transport::{Active, CloseReason, Transport, TransportExt};

/// Which server this binary plays when it is the child.
const HELPER: &str = "MCPWIRE_STDIO_HELPER";
const QUICK: Duration = Duration::from_millis(300);
/// Hostile to `cmd.exe` if quoted badly (CVE-2024-24576), harmless if not.
const HOSTILE: &[&str] = &["\"&calc", "%PATH%", "\"^|", "a b", "^", "x\\\"", "", "!x!"];

fn main() -> ExitCode {
    if let Ok(mode) = std::env::var(HELPER) {
        return helper(&mode);
    }
    let tests: &[(&str, fn())] = &[
        (
            "a_grandchild_ends_with_the_session_on_close",
            grandchild_close,
        ),
        (
            "a_grandchild_ends_when_the_transport_is_dropped",
            grandchild_drop,
        ),
        (
            "a_server_ignoring_stdin_eof_is_ended_after_the_grace",
            stubborn,
        ),
        ("exit_code_and_stderr_tail_are_reported", exit_code),
        (
            "an_exit_at_start_is_a_spawn_error_with_stderr",
            exit_at_start,
        ),
        ("the_child_sees_only_the_allow_list", allow_list),
        ("hostile_arguments_reach_the_program_intact", hostile_direct),
        #[cfg(windows)]
        (
            "hostile_arguments_reach_a_program_behind_a_cmd_intact",
            windows::hostile_cmd,
        ),
        #[cfg(windows)]
        (
            "an_argument_cmd_cannot_carry_is_refused",
            windows::refused_cmd,
        ),
        #[cfg(windows)]
        (
            "the_demo_server_behind_a_cmd_is_called_closed_and_gone",
            windows::demo_cmd,
        ),
        #[cfg(windows)]
        (
            "the_demo_server_crashing_behind_a_cmd_reports_its_exit",
            windows::demo_crash,
        ),
        #[cfg(windows)]
        (
            "a_missing_program_names_the_extensions_tried",
            windows::not_found,
        ),
    ];
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, test) in tests {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        let started = Instant::now();
        let watchdog = watchdog(name);
        let outcome = std::panic::catch_unwind(test);
        drop(watchdog);
        let verdict = if outcome.is_ok() { "ok" } else { "FAILED" };
        println!(
            "test {name} ... {verdict} ({} ms)",
            started.elapsed().as_millis()
        );
        if outcome.is_err() {
            failed.push(*name);
        }
    }
    println!("\n{ran} run, {} failed", failed.len());
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("failed: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// How long one test may take before the run is failed: a hang (seen once
/// under Wine, in the demo server test) must fail CI, not stall it.
const TEST_LIMIT: Duration = Duration::from_secs(120);

/// Ends the whole run with a failure if `name` is still running after
/// [`TEST_LIMIT`]; dropping the returned sender disarms it.
fn watchdog(name: &'static str) -> std::sync::mpsc::Sender<()> {
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(TEST_LIMIT) {
            println!(
                "test {name} ... FAILED (still running after {} s)",
                TEST_LIMIT.as_secs()
            );
            std::process::exit(101);
        }
    });
    done
}

/// True under Wine, which adds its own variables to every process and
/// whose `cmd.exe` differs from Windows' in places.
fn under_wine() -> bool {
    cfg!(windows) && std::env::var_os("WINELOADER").is_some()
}

/// Runs `test` on a multi-threaded runtime.
fn block_on<F: std::future::Future<Output = ()>>(test: F) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(test);
}

/// This binary as a server, playing `mode`.
fn server(mode: &str) -> StdioConfig {
    let me = std::env::current_exe().expect("the test binary's path");
    StdioConfig::new(me).env(HELPER, mode)
}

// ---- the helpers: this binary as a server ----

fn helper(mode: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match mode {
        // Prints its arguments as a JSON array, then echoes stdin.
        "argv" => {
            let args: Vec<String> = std::env::args().skip(1).collect();
            writeln!(out, "{}", serde_json::json!(args)).unwrap();
        }
        // Prints the names of its environment variables, then echoes stdin.
        "env" => {
            let names: Vec<String> = std::env::vars_os()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect();
            writeln!(out, "{}", serde_json::json!(names)).unwrap();
        }
        // Starts a grandchild that listens on a port, reports the port, then
        // echoes stdin; the grandchild is left running when stdin ends.
        "tree" => {
            let me = std::env::current_exe().unwrap();
            #[expect(
                clippy::zombie_processes,
                reason = "the grandchild is left running: ending it is the transport's job, under test"
            )]
            let mut sleeper = std::process::Command::new(me)
                .env(HELPER, "listen")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let mut line = String::new();
            std::io::BufReader::new(sleeper.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            writeln!(out, "{{\"port\":{}}}", line.trim()).unwrap();
        }
        // Listens on a port of 127.0.0.1, says which, and lives on.
        "listen" => {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            writeln!(out, "{}", listener.local_addr().unwrap().port()).unwrap();
            out.flush().unwrap();
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        // Says it is up, then ignores the end of its stdin.
        "stubborn" => {
            writeln!(out, "{{\"up\":1}}").unwrap();
            out.flush().unwrap();
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        // Fails at once, as a server given a bad flag does.
        "fail" => {
            eprintln!("error: unknown flag --foo");
            return ExitCode::from(3);
        }
        other => {
            eprintln!("unknown helper mode {other}");
            return ExitCode::from(2);
        }
    }
    out.flush().unwrap();
    drop(out);
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

// ---- the tests ----

/// The port the tree helper's grandchild listens on, once it answers.
async fn grandchild_port(t: &mut mcpwire_stdio::StdioTransport) -> SocketAddr {
    t.set_active(Active::Once);
    let frame: serde_json::Value = serde_json::from_slice(&next_frame(t).await).unwrap();
    let port = u16::try_from(frame["port"].as_u64().unwrap()).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, LONG).expect("the grandchild listens");
    addr
}

/// Waits (bounded) until nothing listens on `addr`: its process is gone.
fn assert_gone(addr: SocketAddr, within: Duration) {
    let deadline = Instant::now() + within;
    while TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the grandchild listening on {addr} is still alive"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn grandchild_close() {
    block_on(async {
        let mut t = spawn(server("tree").sigterm_timeout(QUICK)).await;
        let addr = grandchild_port(&mut t).await;
        tokio::time::timeout(LONG, t.close()).await.unwrap();
        assert_gone(addr, Duration::from_secs(10));
        assert!(matches!(closed(&mut t).await, CloseReason::Local));
    });
}

fn grandchild_drop() {
    let addr = {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let (t, addr) = rt.block_on(async {
            let mut t = spawn(server("tree")).await;
            let addr = grandchild_port(&mut t).await;
            (t, addr)
        });
        drop(t);
        addr
    };
    assert_gone(addr, Duration::from_secs(10));
}

fn stubborn() {
    block_on(async {
        let config = server("stubborn")
            .stdin_close_timeout(QUICK)
            .sigterm_timeout(QUICK);
        let mut t = spawn(config).await;
        t.set_active(Active::Once);
        assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
        let started = Instant::now();
        tokio::time::timeout(LONG, t.close()).await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        let exit = t.exit().expect("the exit is known after close");
        if cfg!(windows) {
            assert_eq!(exit.code, Some(1), "the job's termination: {exit}");
        } else {
            assert_eq!(exit.signal, Some(15), "SIGTERM: {exit}");
        }
    });
}

fn exit_code() {
    block_on(async {
        let mut t = spawn(server("fail")).await;
        t.set_active(Active::Once);
        match closed(&mut t).await {
            CloseReason::Exited(info) => {
                assert_eq!(info.code, Some(3), "{info}");
                assert!(
                    info.stderr_tail.iter().any(|l| l.contains("unknown flag")),
                    "{info:?}"
                );
            }
            other => panic!("expected Exited, got {other:?}"),
        }
    });
}

fn exit_at_start() {
    block_on(async {
        let config = server("fail").startup_grace(Duration::from_secs(20));
        match StdioTransport::spawn(config).await {
            Err(SpawnError::ExitedAtStart { command, exit }) => {
                assert!(command.is_absolute(), "{}", command.display());
                assert_eq!(exit.code, Some(3), "{exit}");
                assert!(exit.to_string().contains("unknown flag"), "{exit}");
            }
            other => panic!("expected ExitedAtStart, got {other:?}"),
        }
    });
}

fn allow_list() {
    block_on(async {
        let mut t = spawn(server("env").stderr(StderrMode::Discard)).await;
        t.set_active(Active::Once);
        let names: Vec<String> = serde_json::from_slice(&next_frame(&mut t).await).unwrap();
        let allowed = |n: &str| {
            n.eq_ignore_ascii_case(HELPER)
                || SAFE_ENV_VARS.iter().any(|s| s.eq_ignore_ascii_case(n))
                // Windows keeps each drive's directory as `=C:`.
                || n.starts_with('=')
                // Wine gives every process its own settings.
                || (under_wine() && n.starts_with("WINE"))
        };
        let leaked: Vec<&String> = names.iter().filter(|n| !allowed(n)).collect();
        assert!(leaked.is_empty(), "outside the allow-list: {leaked:?}");
        assert!(
            names.iter().any(|n| n.eq_ignore_ascii_case("PATH")),
            "{names:?}"
        );
        if cfg!(windows) {
            assert!(
                names.iter().any(|n| n.eq_ignore_ascii_case("SystemRoot")),
                "{names:?}"
            );
        }
        tokio::time::timeout(LONG, t.close()).await.unwrap();
    });
}

/// Spawns `config`, which echoes its arguments, and checks they are `args`.
async fn assert_args_intact(config: StdioConfig, args: &[&str]) -> StdioTransport {
    let mut t = spawn(config.args(args).stderr(StderrMode::Capture)).await;
    t.set_active(Active::Once);
    let got: Vec<String> = serde_json::from_slice(&next_frame(&mut t).await).unwrap();
    assert_eq!(got, args, "the arguments as the program saw them");
    // It still works as a server afterwards.
    t.sender()
        .send(Bytes::from_static(b"{\"after\":1}"))
        .await
        .unwrap();
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"after\":1}");
    t
}

fn hostile_direct() {
    block_on(async {
        let mut t = assert_args_intact(server("argv"), HOSTILE).await;
        tokio::time::timeout(LONG, t.close()).await.unwrap();
    });
}

#[cfg(windows)]
#[path = "portable/windows.rs"]
mod windows;
