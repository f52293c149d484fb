//! Real MCP servers over HTTP, each reached by URL alone through the
//! automatic fallback: the npm `server-everything` (Streamable HTTP and SSE)
//! and a server on the official Python SDK (Streamable HTTP with SSE or JSON
//! answers, stateful and stateless, and SSE).
//!
//! Servers come from `$MCPWIRE_SERVERS_DIR` (default
//! `<workspace>/target/mcp-servers`, installed by `cargo xtask servers`). The
//! tests are ignored by default and fail if a server is missing; `cargo
//! xtask ci` runs them. Every server binds 127.0.0.1 on a free port and is
//! killed when its test ends.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mcpwire_http::{HttpClient, HttpConfig, HttpMode, HttpTransport, Proxy};
use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};
use support::{INITIALIZED, WAIT, frame};
use tokio::process::{Child, Command};

fn servers_dir() -> PathBuf {
    std::env::var_os("MCPWIRE_SERVERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"))
}

/// `path` under the servers directory; a failure if it is not installed.
fn server_file(dir: &Path, path: &str) -> PathBuf {
    let file = dir.join(path);
    assert!(
        file.exists(),
        "{} is not installed: run `cargo xtask servers` (or set MCPWIRE_SERVERS_DIR)",
        file.display()
    );
    file
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts on 127.0.0.1:`port`.
async fn wait_listening(child: &mut Child, port: u16) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("server exited before listening: {status}");
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "server never listened on {port}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn npm_everything(dir: &Path, mode: &str) -> (Child, u16) {
    let entry = server_file(
        dir,
        "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    let preload = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/loopback.js");
    let port = free_port();
    let mut child = Command::new("node")
        .arg("--require")
        .arg(preload)
        .arg(entry)
        .arg(mode)
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn node");
    wait_listening(&mut child, port).await;
    (child, port)
}

async fn python_server(dir: &Path, mode: &str) -> (Child, u16) {
    let python = server_file(dir, "venv/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/python_server.py");
    let port = free_port();
    let mut child = Command::new(python)
        .arg(script)
        .arg(mode)
        .arg(port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn python");
    wait_listening(&mut child, port).await;
    (child, port)
}

/// The next frame whose `id` is `id`, skipping server notifications.
async fn response(t: &mut HttpTransport, id: u64) -> serde_json::Value {
    loop {
        t.set_active(Active::Once);
        let event = tokio::time::timeout(WAIT, t.next_event())
            .await
            .expect("timed out")
            .expect("transport ended");
        match event {
            TransportEvent::Frame(f) => {
                let v: serde_json::Value = serde_json::from_slice(&f).unwrap();
                if v.get("id").and_then(|i| i.as_u64()) == Some(id) && v.get("method").is_none() {
                    return v;
                }
            }
            TransportEvent::Error(e) => eprintln!("non-fatal: {e}"),
            other => panic!("unexpected event: {other:?}"),
        }
    }
}

/// initialize, initialized, tools/list through the automatic fallback.
async fn exchange(url: &str) -> (HttpMode, serde_json::Value) {
    let client = HttpClient::new(HttpConfig::new().proxy(Proxy::none())).unwrap();
    let mut t = HttpTransport::new(&client, url).unwrap();
    let tx = t.sender();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpwire-test","version":"0.1.0"}}}"#;
    tx.send(frame(init)).await.unwrap();
    let init = response(&mut t, 1).await;
    assert!(init["result"]["protocolVersion"].is_string(), "{init}");
    tx.send(frame(INITIALIZED)).await.unwrap();
    tx.send(frame(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#))
        .await
        .unwrap();
    let list = response(&mut t, 2).await;
    let mode = t.mode().expect("mode decided");
    tokio::time::timeout(WAIT, t.close()).await.unwrap();
    (mode, list)
}

fn tool_names(list: &serde_json::Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn npm_everything_streamable_http() {
    let (_child, port) = npm_everything(&servers_dir(), "streamableHttp").await;
    let (mode, list) = exchange(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert_eq!(mode, HttpMode::StreamableHttp);
    assert!(tool_names(&list).iter().any(|n| n == "echo"), "{list}");
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn npm_everything_legacy_sse() {
    let (_child, port) = npm_everything(&servers_dir(), "sse").await;
    let (mode, list) = exchange(&format!("http://127.0.0.1:{port}/sse")).await;
    assert_eq!(mode, HttpMode::LegacySse);
    assert!(tool_names(&list).iter().any(|n| n == "echo"), "{list}");
}

async fn python(mode: &str, path: &str, expected: HttpMode) {
    let (_child, port) = python_server(&servers_dir(), mode).await;
    let (found, list) = exchange(&format!("http://127.0.0.1:{port}{path}")).await;
    assert_eq!(found, expected);
    assert_eq!(tool_names(&list), ["echo"]);
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn python_streamable_http_with_sse_answers() {
    python("stateful", "/mcp", HttpMode::StreamableHttp).await;
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn python_streamable_http_with_json_answers() {
    python("json", "/mcp", HttpMode::StreamableHttp).await;
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn python_streamable_http_stateless() {
    python("stateless", "/mcp", HttpMode::StreamableHttp).await;
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn python_legacy_sse() {
    python("sse", "/sse", HttpMode::LegacySse).await;
}
