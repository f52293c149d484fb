//! `mcpwire serve`: a fleet of three demo servers offered as one MCP
//! server on stdio, to a client that writes JSON lines and to the real
//! official Python SDK client (both generations, as `cargo xtask servers`
//! installs them).

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::{demo, mcpwire, stderr};

/// A Claude Desktop file naming three demo servers: one, two and three.
fn fleet_config(dir: &Path) -> PathBuf {
    let demo = demo();
    let entry = json!({"command": demo});
    let config = json!({"mcpServers": {"one": entry, "two": entry, "three": entry}});
    let path = dir.join("claude_desktop_config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

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
        let line = lines.next().expect("an answer").unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"))
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
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(rest.is_empty(), "nothing after the answers: {rest:?}");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("3 of 3 servers up"),
        "{}",
        stderr(&out)
    );
}

fn installed(relative: &str) -> PathBuf {
    let dir = match std::env::var_os("MCPWIRE_SERVERS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"),
    };
    let path = dir.join(relative);
    assert!(
        path.exists(),
        "{} is not installed: run `cargo xtask servers` (or set MCPWIRE_SERVERS_DIR)",
        path.display()
    );
    path
}

/// Runs the Python SDK client script with `python` against
/// `mcpwire --config FILE serve`, and returns its report.
fn python_client(python: &Path) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let config = fleet_config(dir.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/serve_client_py.py");
    let out = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_mcpwire"))
        .arg("--config")
        .arg(&config)
        .arg("serve")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the Python client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn assert_python_report(report: &Value) {
    assert_eq!(report["serverInfo"], "mcpwire-serve", "{report}");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for name in ["one__echo", "two__add", "three__echo", "two__slow"] {
        assert!(tools.contains(&name), "{name} in {tools:?}");
    }
    assert_eq!(
        report["calls"],
        json!({"one__echo": ["hi"], "two__add": ["5"], "three__echo": ["third"]})
    );
    assert_eq!(report["slow"], json!(["done after 3 steps"]));
    assert_eq!(
        report["progress"],
        json!([
            [1.0, 3.0, "step 1"],
            [2.0, 3.0, "step 2"],
            [3.0, 3.0, "step 3"]
        ])
    );
    let unknown = report["unknown"].as_str().unwrap();
    assert!(unknown.contains("nobody__nothing"), "{unknown}");
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn the_python_sdk_2_client_lists_and_calls_the_fleet_through_serve() {
    let report = python_client(&installed("venv/bin/python"));
    assert_python_report(&report);
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn the_python_sdk_1_client_lists_and_calls_the_fleet_through_serve() {
    let report = python_client(&installed("venv-mcp1/bin/python"));
    assert_python_report(&report);
}
