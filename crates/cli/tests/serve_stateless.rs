//! `mcpwire serve` to a real client of the stateless revision (2026-07-28):
//! the official Python SDK 2.x's `Client`, in its default mode, probes with
//! `server/discover`, is answered, and uses the fleet without `initialize`,
//! over stdio and over Streamable HTTP (no session). The installed
//! TypeScript SDK client (1.x) speaks only the 2025 revisions; `serve.rs`
//! holds it.

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use support::{assert_fleet_report, fleet_config, installed};

/// `mcpwire --config FILE serve --http` with a known token, killed when
/// dropped; its URL.
struct ServeHttp {
    child: std::process::Child,
    url: String,
}

const TOKEN: &str = "stateless-test-token";

impl ServeHttp {
    fn start(config: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
            .arg("--config")
            .arg(config)
            .args(["serve", "--http"])
            .env("MCPWIRE_SERVE_TOKEN", TOKEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = lines.next().expect("the URL").unwrap();
        Self { child, url }
    }
}

impl Drop for ServeHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the stateless Python client against the fleet, over stdio or HTTP,
/// and returns its report.
fn python_client(http: bool) -> Value {
    let python = installed("venv/bin/python");
    let dir = tempfile::tempdir().unwrap();
    let config = fleet_config(dir.path());
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/serve_client_py_stateless.py");
    let mut command = Command::new(python);
    command.arg(script);
    let served = http.then(|| ServeHttp::start(&config));
    match &served {
        Some(served) => command.args(["http", &served.url, TOKEN]),
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
    serde_json::from_slice(&out.stdout).unwrap()
}

fn assert_report(report: &Value) {
    // The client chose the stateless revision: `serve` answered its probe.
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report}");
    assert_fleet_report(report);
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn the_python_sdk_2_client_uses_the_fleet_statelessly_through_serve() {
    assert_report(&python_client(false));
}

#[test]
#[ignore = "needs the real clients: cargo xtask servers (cargo xtask ci runs it)"]
fn the_python_sdk_2_client_uses_the_fleet_statelessly_over_http() {
    assert_report(&python_client(true));
}
