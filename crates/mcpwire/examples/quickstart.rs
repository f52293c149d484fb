//! Quickstart: spawn mcpwire's demo MCP server, list its tools, call two.
//!
//! ```sh
//! cargo build -p mcpwire-demo-server && cargo run -p mcpwire --example quickstart
//! ```
//!
//! The demo server binary is looked for in `$MCPWIRE_DEMO_SERVER`, then next
//! to this example's own executable (`target/<profile>/`); if it is not
//! there and the example runs under cargo, it is built first.

use std::path::{Path, PathBuf};

use mcpwire::client::ClientConfig;
use mcpwire::connect_stdio;
use mcpwire::stdio::{StderrMode, StdioConfig};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = demo_server()?;
    println!("spawning {}", server.display());
    // No shell, a minimal environment; the server's stderr goes to ours.
    let stdio = StdioConfig::new(&server).stderr(StderrMode::Inherit);
    let client = connect_stdio(stdio, ClientConfig::new()).await?;
    let info = client.server_info().ok_or("no server info")?;
    println!(
        "connected to {} {} (protocol {})",
        info.name,
        info.version,
        client.protocol_version().unwrap_or_default()
    );

    println!("tools:");
    for tool in client.list_all_tools().await? {
        let description = tool.description.unwrap_or_default();
        println!("  {:<10} {description}", tool.name);
    }

    let echo = client
        .call_tool("echo", json!({"message": "hello from mcpwire"}))
        .await?;
    println!("echo -> {}", echo.text());

    // `add` declares an outputSchema: its structured content is validated.
    let add = client.call_tool("add", json!({"a": 2, "b": 40})).await?;
    println!(
        "add  -> {} (structured: {})",
        add.text(),
        add.structured_content.unwrap_or_default()
    );

    // Closes stdin, waits for the server to exit (then SIGTERM, SIGKILL).
    client.close().await;
    println!("closed");
    Ok(())
}

/// Finds the demo server binary, building it when run under cargo.
fn demo_server() -> Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(path) = std::env::var_os("MCPWIRE_DEMO_SERVER") {
        return Ok(path.into());
    }
    let name = format!("mcpwire-demo-server{}", std::env::consts::EXE_SUFFIX);
    // This example lives in target/<profile>/examples/; binaries one up.
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot locate the target directory")?;
    let candidate = profile_dir.join(&name);
    if candidate.exists() {
        return Ok(candidate);
    }
    if let Some(cargo) = std::env::var_os("CARGO") {
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let mut cmd = std::process::Command::new(cargo);
        cmd.args(["build", "-p", "mcpwire-demo-server"]);
        if release {
            cmd.arg("--release");
        }
        if cmd.status()?.success() && candidate.exists() {
            return Ok(candidate);
        }
    }
    Err(format!(
        "demo server not found at {}; run `cargo build -p mcpwire-demo-server` first",
        candidate.display()
    )
    .into())
}
