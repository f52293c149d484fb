//! `mcpwire serve` relays an upstream server's sampling request, made while
//! it serves a call, to the real client that made the call: the official
//! Python SDK client (mcp 2.x, its `sampling_callback`) on stdio, in front
//! of a Python SDK server that samples during its tool `ask`, in both SDK
//! generations (`tests/servers/sampling_upstream.py`): mcp 1.x sends its
//! own `sampling/createMessage` mid-call (the 2025 revisions), mcp 2.x asks
//! for it as an input request of the stateless revision.

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::installed;

/// Runs the Python SDK client through `mcpwire serve` in front of the
/// sampling server run by `upstream_python`; the client answers sampling
/// when `sampling`. Returns the client's report.
fn through_serve(upstream_python: &Path, sampling: bool) -> Value {
    let servers = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("claude_desktop_config.json");
    let entry = json!({"command": upstream_python,
        "args": [servers.join("sampling_upstream.py")]});
    std::fs::write(&config, json!({"mcpServers": {"up": entry}}).to_string()).unwrap();
    let out = Command::new(installed("venv/bin/python"))
        .arg(servers.join("serve_sampling_client_py.py"))
        .arg(if sampling { "sampling" } else { "none" })
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

fn assert_relayed(upstream_python: &Path) {
    let report = through_serve(upstream_python, true);
    assert_eq!(report["asked"], json!([["the answer?"]]), "{report}");
    assert_eq!(
        report["text"],
        json!(["the model (python-callback) said: forty-two"]),
        "{report}"
    );
    // A client without sampling is asked nothing; the server is refused.
    let report = through_serve(upstream_python, false);
    assert_eq!(report["asked"], json!([]), "{report}");
    let text = report["text"][0].as_str().unwrap();
    assert!(
        text.contains("does not support sampling/createMessage"),
        "{report}"
    );
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn a_python_sdk_1_servers_mid_call_sampling_reaches_the_python_client_through_serve() {
    assert_relayed(&installed("venv-mcp1/bin/python"));
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn a_python_sdk_2_servers_sampling_input_request_reaches_the_python_client_through_serve() {
    assert_relayed(&installed("venv/bin/python"));
}
