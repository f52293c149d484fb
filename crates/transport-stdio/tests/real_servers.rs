//! Real MCP servers over stdio, installed by `cargo xtask servers` under
//! `$MCPWIRE_SERVERS_DIR` (default `<workspace>/target/mcp-servers`): spawn,
//! exchange raw `initialize` / `notifications/initialized` / `tools/list`
//! frames, close cleanly. The tests are ignored by default and fail if a
//! server is missing; `cargo xtask ci` runs them.

// The servers here are `sh`, `cat` and `python3` scripts, and shutdowns are
// checked in /proc: Unix only. `windows.rs` holds the Windows tests.
#![cfg(unix)]

mod common;

use std::num::NonZeroU32;
use std::path::PathBuf;

use bytes::Bytes;
use common::*;
use mcpwire_stdio::{StderrMode, StdioConfig, StdioTransport};
use mcpwire_transport::{Active, CloseReason, Transport, TransportEvent, TransportExt};
use serde_json::{Value, json};

/// An installed server program; a failure if it is missing.
fn server(relative: &str) -> PathBuf {
    let dir = std::env::var_os("MCPWIRE_SERVERS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"),
        PathBuf::from,
    );
    let path = dir.join(relative);
    assert!(
        path.exists(),
        "{} is not installed: run `cargo xtask servers` (or set MCPWIRE_SERVERS_DIR)",
        path.display()
    );
    path
}

async fn send_json(t: &StdioTransport, v: Value) {
    t.sender()
        .send(Bytes::from(serde_json::to_vec(&v).unwrap()))
        .await
        .unwrap();
}

/// The response with `id`, skipping notifications and requests the server
/// may send first.
async fn response(t: &mut StdioTransport, id: u64) -> Value {
    loop {
        let frame = next_frame(t).await;
        let v: Value = serde_json::from_slice(&frame).expect("servers send JSON");
        if v["id"] == id && v.get("method").is_none() {
            return v;
        }
    }
}

/// The handshake and a tool listing; returns the tool names.
async fn initialize_and_list_tools(config: StdioConfig) -> Vec<String> {
    let mut t = spawn(config.stderr(StderrMode::Capture)).await;
    let pid = t.pid();
    t.set_active(Active::Many(NonZeroU32::MAX));
    send_json(
        &t,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcpwire-stdio-tests", "version": "0.1.0"}
        }}),
    )
    .await;
    let init = response(&mut t, 1).await;
    let result = &init["result"];
    assert!(result["protocolVersion"].is_string(), "{init}");
    assert!(result["serverInfo"]["name"].is_string(), "{init}");
    assert!(result["capabilities"]["tools"].is_object(), "{init}");

    send_json(
        &t,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    send_json(
        &t,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let list = response(&mut t, 2).await;
    let tools: Vec<String> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {list}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();

    tokio::time::timeout(LONG, t.close()).await.unwrap();
    loop {
        match next(&mut t).await {
            TransportEvent::Closed(reason) => {
                assert!(matches!(reason, CloseReason::Local), "{reason}");
                break;
            }
            TransportEvent::Frame(_) | TransportEvent::Stderr(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    let exit = t.exit().expect("the exit is known after close");
    eprintln!(
        "{}: protocol {}, {} tools, {exit}",
        result["serverInfo"]["name"],
        result["protocolVersion"],
        tools.len()
    );
    // A clean close: the server ends on stdin EOF or on SIGTERM, never needs SIGKILL.
    assert_ne!(exit.signal, Some(9), "{exit}");
    assert_eq!(live_group_members(pid), vec![]);
    tools
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn server_everything_over_stdio() {
    let bin = server("npm/node_modules/.bin/mcp-server-everything");
    let tools = initialize_and_list_tools(StdioConfig::new(bin).arg("stdio")).await;
    assert!(tools.iter().any(|t| t == "echo"), "{tools:?}");
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn mcp_server_time_over_stdio() {
    let bin = server("venv/bin/mcp-server-time");
    let config = StdioConfig::new(bin).arg("--local-timezone").arg("UTC");
    let tools = initialize_and_list_tools(config).await;
    assert!(tools.iter().any(|t| t == "get_current_time"), "{tools:?}");
}
