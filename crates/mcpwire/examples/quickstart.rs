//! Quickstart: spawn mcpwire's demo MCP server, list its tools, call two.
//!
//! ```sh
//! cargo build -p mcpwire-demo-server && cargo run -p mcpwire --example quickstart
//! ```
//!
//! The demo server binary is looked for in `$MCPWIRE_DEMO_SERVER`, then next
//! to this example's own executable (`target/<profile>/`); if it is not
//! there and the example runs under cargo, it is built first.

mod support;

use mcpwire::{ClientConfig, StderrMode, StdioConfig};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = support::demo_server()?;
    println!("spawning {}", server.display());
    // No shell, a minimal environment; the server's stderr goes to ours.
    let stdio = StdioConfig::new(&server).stderr(StderrMode::Inherit);
    let client = mcpwire::connect_stdio(stdio, ClientConfig::new()).await?;
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
        .call_tool("echo", &json!({"message": "hello from mcpwire"}))
        .await?;
    println!("echo -> {}", echo.text());

    // `add` declares an outputSchema: its structured content is validated.
    let add = client.call_tool("add", &json!({"a": 2, "b": 40})).await?;
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
