//! The real Python SDK 1.x WebSocket server (`mcp.server.websocket` under
//! uvicorn, `tests/servers/mcp1_ws_server.py`), bound to 127.0.0.1 on a free
//! port: initialize, list the tools, call one, close, in raw JSON-RPC over
//! the transport.
//!
//! The server comes from the `venv-mcp1` virtualenv that `cargo xtask
//! servers` installs under `$MCPWIRE_SERVERS_DIR` (default
//! `<workspace>/target/mcp-servers`). Run with
//! `cargo test -p mcpwire-ws --test real_server -- --ignored`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use bytes::Bytes;
use mcpwire_transport::{Active, CloseReason, Transport, TransportEvent, TransportExt};
use mcpwire_ws::{WsConfig, WsConnector, WsTransport};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

fn python() -> PathBuf {
    let dir = std::env::var_os("MCPWIRE_SERVERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"));
    let python = dir.join("venv-mcp1").join("bin").join("python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask servers`",
        python.display()
    );
    python
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the server; it is killed when the handle drops.
async fn start_server() -> (Child, String) {
    let port = free_port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/mcp1_ws_server.py");
    let mut child = Command::new(python())
        .arg(script)
        .arg(port.to_string())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited before listening: {status}");
        }
        assert!(tokio::time::Instant::now() < deadline, "never listened");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, format!("ws://127.0.0.1:{port}/ws"))
}

async fn send(t: &WsTransport, message: Value) {
    t.sender()
        .send(Bytes::from(message.to_string()))
        .await
        .unwrap();
}

/// The answer to request `id`, skipping anything else the server sends.
async fn answer(t: &mut WsTransport, id: i64) -> Value {
    loop {
        t.set_active(Active::Once);
        let event = tokio::time::timeout(Duration::from_secs(20), t.next_event())
            .await
            .expect("no answer in time");
        match event {
            Some(TransportEvent::Frame(frame)) => {
                let v: Value = serde_json::from_slice(&frame).unwrap();
                if v["id"] == id {
                    assert!(v.get("error").is_none(), "{v}");
                    return v["result"].clone();
                }
            }
            Some(TransportEvent::Closed(reason)) => panic!("closed: {reason}"),
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
#[ignore = "needs real MCP servers: cargo xtask servers"]
async fn the_python_sdk_1_websocket_server_initializes_lists_calls_and_closes() {
    let (_server, url) = start_server().await;
    let connector = WsConnector::new(WsConfig::new()).unwrap();
    let mut t = WsTransport::connect(&connector, &url).await.unwrap();

    send(
        &t,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcpwire-ws-test", "version": "0"}
        }}),
    )
    .await;
    let init = answer(&mut t, 1).await;
    assert_eq!(init["serverInfo"]["name"], "mcpwire-interop-ws");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    send(
        &t,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;

    send(
        &t,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let tools = answer(&mut t, 2).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["add"]);

    send(
        &t,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}),
    )
    .await;
    let result = answer(&mut t, 3).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], "5.0", "{result}");

    t.close().await;
    assert!(matches!(
        t.next_event().await,
        Some(TransportEvent::Closed(CloseReason::Local))
    ));
}
