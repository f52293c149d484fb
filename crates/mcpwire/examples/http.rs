//! HTTP: start mcpwire's demo MCP server in its Streamable HTTP mode, connect
//! to it by URL, list its tools and call three (one reporting progress).
//!
//! ```sh
//! cargo run -p mcpwire --features http --example http
//! ```
//!
//! The demo server binary is found as for the quickstart (built first when
//! run under cargo). It binds 127.0.0.1 on a free port and prints its URL;
//! this example reads that line and stops the server at the end.

mod support;

use std::process::Stdio;
use std::time::Duration;

use mcpwire::{ClientConfig, RequestOptions};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = tokio::process::Command::new(support::demo_server()?)
        .arg("--http")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = server.stdout.take().ok_or("no stdout")?;
    let url = BufReader::new(stdout)
        .lines()
        .next_line()
        .await?
        .ok_or("the server printed no URL")?;
    println!("demo server at {url}");

    let client = mcpwire::connect_http(&url, ClientConfig::new()).await?;
    let info = client.server_info().ok_or("no server info")?;
    println!(
        "connected to {} {} (protocol {})",
        info.name,
        info.version,
        client.protocol_version().unwrap_or_default()
    );
    for tool in client.list_all_tools().await? {
        println!(
            "  {:<8} {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }

    let echo = client
        .call_tool("echo", &json!({"message": "hello over HTTP"}))
        .await?;
    println!("echo -> {}", echo.text());

    // `add` declares an outputSchema: its structured content is validated.
    let add = client.call_tool("add", &json!({"a": 2, "b": 40})).await?;
    println!(
        "add  -> {} (structured: {})",
        add.text(),
        add.structured_content.unwrap_or_default()
    );

    // Progress arrives on the request's SSE answer before its result.
    let opts = RequestOptions::new()
        .timeout(Duration::from_secs(10))
        .on_progress(|p| println!("  progress {}/{}", p.progress, p.total.unwrap_or_default()));
    let slow = client
        .call_tool("slow", &json!({"steps": 3, "delay_ms": 50}))
        .options(opts)
        .await?;
    println!("slow -> {}", slow.text());

    client.close().await;
    server.kill().await?;
    println!("closed");
    Ok(())
}
