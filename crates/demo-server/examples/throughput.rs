//! Rough per-call cost against the demo server over its pipes: a raw pipe
//! (hand-written request lines, no client) versus `mcpwire-client`,
//! sequential and with 64 calls in flight. Prints numbers; asserts nothing.
//!
//! ```sh
//! cargo run --release -p mcpwire-demo-server --example throughput -- 20000
//! ```

use std::process::Stdio;
use std::time::Instant;

use mcpwire_client::{Client, ClientConfig};
use mcpwire_transport::{IoConfig, IoTransport};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn server() -> tokio::process::Child {
    let exe = std::env::current_exe().expect("own path");
    let bin = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .join("mcpwire-demo-server");
    tokio::process::Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("build the demo server first: cargo build --release -p mcpwire-demo-server")
}

async fn raw_sequential(n: usize) -> f64 {
    let mut child = server();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    lines.next_line().await.unwrap();
    let start = Instant::now();
    for i in 1..=n {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"message\":\"x\"}}}}}}\n"
        );
        stdin.write_all(line.as_bytes()).await.unwrap();
        lines.next_line().await.unwrap().unwrap();
    }
    n as f64 / start.elapsed().as_secs_f64()
}

async fn client() -> (Client, tokio::process::Child) {
    let mut child = server();
    let t = IoTransport::new(
        child.stdout.take().unwrap(),
        child.stdin.take().unwrap(),
        IoConfig::new(),
    );
    let client = Client::connect(t, ClientConfig::new()).await.unwrap();
    client.list_all_tools().await.unwrap();
    (client, child)
}

async fn client_sequential(n: usize) -> f64 {
    let (client, _child) = client().await;
    let start = Instant::now();
    for _ in 0..n {
        client
            .call_tool("echo", json!({"message": "x"}))
            .await
            .unwrap();
    }
    n as f64 / start.elapsed().as_secs_f64()
}

async fn client_in_flight(n: usize, width: usize) -> f64 {
    let (client, _child) = client().await;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..width {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..n / width {
                c.call_tool("echo", json!({"message": "x"})).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    (n / width * width) as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    // `current` runs everything on one thread (no cross-thread wake-ups).
    let current = std::env::args().nth(2).as_deref() == Some("current");
    let rt = if current {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    }
    .enable_all()
    .build()
    .unwrap();
    println!(
        "runtime: {}",
        if current {
            "current-thread"
        } else {
            "multi-thread"
        }
    );
    rt.block_on(run(n));
}

async fn run(n: usize) {
    println!(
        "raw pipe, sequential:      {:>9.0} calls/s",
        raw_sequential(n).await
    );
    println!(
        "client, sequential:        {:>9.0} calls/s",
        client_sequential(n).await
    );
    println!(
        "client, 64 in flight:      {:>9.0} calls/s",
        client_in_flight(n, 64).await
    );
}
