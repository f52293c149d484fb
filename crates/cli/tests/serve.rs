//! `mcpwire serve`: a fleet of three servers offered as one MCP server on
//! stdio, to a client that writes JSON lines and to the real official
//! clients: the Python SDK (both generations) and the TypeScript SDK, as
//! `cargo xtask servers` installs them.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::{assert_fleet_report, demo, fleet_config, installed, mcpwire, stderr};

#[test]
fn serve_without_servers_is_a_usage_error() {
    let out = mcpwire().arg("serve").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--config"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn stdout_carries_only_the_protocol_and_the_session_ends_with_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let config = fleet_config(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .arg("--config")
        .arg(&config)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |stdin: &mut std::process::ChildStdin, message: Value| -> Value {
        writeln!(stdin, "{message}").unwrap();
        loop {
            let line = lines.next().expect("an answer").unwrap();
            let got: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"));
            // The demo servers' log messages, relayed, may come first.
            if got["id"] == message["id"] {
                return got;
            }
            assert_eq!(got["method"], "notifications/message", "{got}");
        }
    };
    let init = ask(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    let listed = ask(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in ["one__echo", "two__add", "three__slow"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let called = ask(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "three__add", "arguments": {"a": 40, "b": 2}}}),
    );
    assert_eq!(called["result"]["content"][0]["text"], "42", "{called}");
    drop(stdin);
    for line in lines {
        let line = line.unwrap();
        let got: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(got["method"], "notifications/message", "{got}");
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("3 of 3 servers up"),
        "{}",
        stderr(&out)
    );
}

/// `mcpwire --config FILE serve --http` running, ended with SIGINT (as
/// Ctrl-C) when dropped; its URL and the token it printed.
struct ServeHttp {
    child: std::process::Child,
    url: String,
    token: String,
}

impl ServeHttp {
    fn start(config: &Path) -> Self {
        Self::start_with(config, &[])
    }

    /// The same with more arguments for `serve`.
    fn start_with(config: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
            .arg("--config")
            .arg(config)
            .args(["serve", "--http"])
            .args(extra)
            .env_remove("MCPWIRE_SERVE_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = lines.next().expect("the URL").unwrap();
        let token = lines.next().expect("the token").unwrap();
        let token = token
            .strip_prefix("Authorization: Bearer ")
            .unwrap_or_else(|| panic!("a token line: {token}"))
            .to_owned();
        Self { child, url, token }
    }

    /// Ends it as Ctrl-C would; returns its stderr.
    fn stop(mut self) -> String {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let mut err = String::new();
        use std::io::Read as _;
        let _ = self.child.stderr.take().unwrap().read_to_string(&mut err);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status:?}: {err}");
        err
    }
}

impl Drop for ServeHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the Python SDK client script with `python` against the fleet,
/// over stdio (`mcpwire --config FILE serve`) or over HTTP, and returns
/// its report.
fn python_client(python: &Path, http: bool) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let config = fleet_config(dir.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/serve_client_py.py");
    let mut command = Command::new(python);
    command.arg(script);
    let served = http.then(|| ServeHttp::start(&config));
    match &served {
        Some(served) => command.args(["http", &served.url, &served.token]),
        None => command
            .args(["stdio", env!("CARGO_BIN_EXE_mcpwire"), "--config"])
            .arg(&config)
            .arg("serve"),
    };
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "the Python client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(served) = served {
        served.stop();
    }
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn the_python_sdk_2_client_lists_and_calls_the_fleet_through_serve() {
    let report = python_client(&installed("venv/bin/python"), false);
    assert_fleet_report(&report);
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn the_python_sdk_2_client_lists_and_calls_the_fleet_over_http() {
    let report = python_client(&installed("venv/bin/python"), true);
    assert_fleet_report(&report);
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn the_python_sdk_1_client_lists_and_calls_the_fleet_over_http() {
    let report = python_client(&installed("venv-mcp1/bin/python"), true);
    assert_fleet_report(&report);
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn the_python_sdk_1_client_lists_and_calls_the_fleet_through_serve() {
    let report = python_client(&installed("venv-mcp1/bin/python"), false);
    assert_fleet_report(&report);
}

/// The TypeScript SDK client against a fleet whose third server is the
/// slow upstream, over stdio or HTTP: progress, logs, and a cancel that
/// reaches the upstream.
fn typescript_client(http: bool) {
    let sdk = installed("npm/node_modules/@modelcontextprotocol/sdk");
    let python = installed("venv/bin/python");
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.log");
    let servers = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers");
    let demo = json!({"command": demo()});
    let config = json!({"mcpServers": {
        "one": demo,
        "two": demo,
        "three": {
            "command": python,
            "args": [servers.join("slow_upstream.py")],
            "env": {"SEEN_LOG": seen}
        }
    }});
    let config_path = dir.path().join("fleet.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mut command = Command::new("node");
    command.arg(servers.join("serve_client_ts.mjs")).arg(&sdk);
    let served = http.then(|| ServeHttp::start(&config_path));
    match &served {
        Some(served) => command.args(["http", &served.url, &served.token]),
        None => command
            .args(["stdio", env!("CARGO_BIN_EXE_mcpwire"), "--config"])
            .arg(&config_path)
            .arg("serve"),
    };
    let out = command
        .output()
        .expect("node runs (needed with the npm servers)");
    assert!(
        out.status.success(),
        "the TypeScript client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["serverInfo"], "mcpwire-serve", "{report}");
    let tools = report["tools"].as_array().unwrap();
    for name in ["one__echo", "two__add", "three__wait"] {
        assert!(tools.contains(&json!(name)), "{name} in {tools:?}");
    }
    assert_eq!(
        report["calls"],
        json!({"one__echo": ["hi"], "two__add": ["5"]})
    );
    assert_eq!(
        report["progress"],
        json!([{"progress": 1, "message": "started"}]),
        "{report}"
    );
    let cancelled = report["cancelled"].as_str().unwrap();
    assert!(cancelled.contains("enough"), "{cancelled}");
    // The demo server logs each `add`; the slow one, its wait.
    let logs = report["logs"].as_array().unwrap();
    for log in [
        json!({"level": "info", "logger": "two/demo", "data": "add 2 3"}),
        json!({"level": "warning", "logger": "three/waiter", "data": "waiting for ever"}),
    ] {
        assert!(logs.contains(&log), "{log} in {logs:?}");
    }
    assert_eq!(report["after"], json!(["again"]));
    // The upstream server saw the call, then its cancellation.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let lines = loop {
        let text = std::fs::read_to_string(&seen).unwrap_or_default();
        if text.contains("cancelled") || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0], "call wait");
    assert!(lines[1].starts_with("cancelled "), "{lines:?}");
    if let Some(served) = served {
        served.stop();
    }
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn the_typescript_sdk_client_gets_progress_logs_and_its_cancel_reaches_the_upstream() {
    typescript_client(false);
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn over_http_the_typescript_sdk_client_gets_progress_logs_and_its_cancel_reaches_the_upstream() {
    typescript_client(true);
}

#[test]
#[cfg_attr(
    not(unix),
    ignore = "ends serve with SIGINT through `kill -INT`, which Windows has not"
)]
fn serve_http_shows_a_generated_token_once_on_stdout_and_never_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let served = ServeHttp::start(&fleet_config(dir.path()));
    assert!(
        served.url.starts_with("http://127.0.0.1:"),
        "{}",
        served.url
    );
    assert!(served.url.ends_with("/mcp"), "{}", served.url);
    assert_eq!(served.token.len(), 64, "{}", served.token);
    let token = served.token.clone();
    // A request without it is refused.
    let host = served
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut stream = std::net::TcpStream::connect(&host).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{{}}"
    )
    .unwrap();
    let mut answer = String::new();
    use std::io::Read as _;
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    let err = served.stop();
    assert!(err.contains("serving on HTTP"), "{err}");
    assert!(!err.contains(&token), "the token is not on stderr: {err}");
}

/// POSTs `initialize` to `url` with `token`, on a connection of its own;
/// the answer's status line.
fn initialize_status(url: &str, token: &str) -> String {
    use std::io::Read as _;
    let host = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}})
    .to_string();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
         Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer.lines().next().unwrap_or_default().to_owned()
}

#[test]
#[cfg_attr(
    not(unix),
    ignore = "ends serve with SIGINT through `kill -INT`, which Windows has not"
)]
fn serve_http_max_sessions_refuses_the_next_initialize_with_503() {
    let dir = tempfile::tempdir().unwrap();
    let served = ServeHttp::start_with(&fleet_config(dir.path()), &["--max-sessions", "2"]);
    let statuses: Vec<String> = (0..3)
        .map(|_| initialize_status(&served.url, &served.token))
        .collect();
    assert!(statuses[0].starts_with("HTTP/1.1 200"), "{statuses:?}");
    assert!(statuses[1].starts_with("HTTP/1.1 200"), "{statuses:?}");
    assert!(statuses[2].starts_with("HTTP/1.1 503"), "{statuses:?}");
    served.stop();
}

#[test]
fn serve_max_sessions_needs_http_and_at_least_one() {
    for args in [
        &["serve", "--max-sessions", "2"][..],
        &["serve", "--http", "--max-sessions", "0"],
    ] {
        let out = mcpwire().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("--max-sessions"), "{}", stderr(&out));
    }
}

#[cfg(unix)]
#[test]
fn later_commands_are_calls_on_a_fleet_served_on_a_unix_socket() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let config = fleet_config(dir.path());
    let socket = dir.path().join("fleet.sock");
    let child = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .arg("--config")
        .arg(&config)
        .arg("serve")
        .arg("--socket")
        .arg(&socket)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed if an assertion fails before it is stopped below.
    let mut child = Killed(child);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !socket.exists() {
        assert!(std::time::Instant::now() < deadline, "no socket in time");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the owner's only: {mode:o}");
    let target = format!("unix:{}", socket.display());
    for (tool, args, answer) in [
        ("one__echo", "message=first", "first"),
        ("two__add", "a=2", "4"),
        ("three__echo", "message=third", "third"),
    ] {
        let mut cmd = mcpwire();
        cmd.args(["-s", &target, "call", tool, args]);
        if tool == "two__add" {
            cmd.arg("b=2");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{tool}: {}", stderr(&out));
        // The text first (`add` then shows its structured content too).
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(text.lines().next(), Some(answer), "{text}");
    }
    // A second serve on the same socket is refused; the first goes on.
    let out = mcpwire()
        .arg("--config")
        .arg(&config)
        .args(["serve", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("already listens"), "{}", stderr(&out));

    let _ = Command::new("kill")
        .args(["-INT", &child.0.id().to_string()])
        .status();
    let status = child.0.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists(), "the socket file is removed");
}

#[cfg(unix)]
#[test]
fn a_serve_that_fails_to_start_leaves_no_socket_file() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("fleet.sock");
    let out = mcpwire()
        .args(["serve", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--config"), "{}", stderr(&out));
    assert!(!socket.exists(), "the socket file is removed");
}

/// A child process killed when dropped (a failed assertion leaves none).
#[cfg(unix)]
struct Killed(std::process::Child);

#[cfg(unix)]
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
