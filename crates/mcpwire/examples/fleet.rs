//! Many servers from a Claude Desktop style configuration file: load it,
//! connect every server at once, print the aggregated tools, and call one
//! through the routing table.
//!
//! ```sh
//! cargo run -p mcpwire --features full --example fleet
//! cargo run -p mcpwire --features full --example fleet -- CONFIG.json [TOOL [ARGUMENTS_JSON]]
//! ```
//!
//! Without arguments it writes its own file, with the demo server twice
//! (over stdio, and over Streamable HTTP on 127.0.0.1), a server whose
//! program does not exist (to show that one failure is reported, not
//! fatal), and a disabled one; then it calls `local__add`. With a file, it
//! loads that (any format `mcpwire::config` reads) and calls the tool
//! named, if any.

mod support;

use std::process::Stdio;

use mcpwire::config::{ProcessEnvironment, Resolver};
use mcpwire::manager::{Event, Manager, Transports};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Kept alive (and the file's folder) until the end.
    let mut demo_http = None;
    let dir = std::env::temp_dir().join(format!("mcpwire-fleet-{}", std::process::id()));
    let (path, tool, arguments) = match args.first() {
        Some(path) => (
            path.into(),
            args.get(1).cloned(),
            args.get(2)
                .map(|a| serde_json::from_str(a))
                .transpose()?
                .unwrap_or(json!({})),
        ),
        None => {
            let demo = support::demo_server()?;
            let mut server = tokio::process::Command::new(&demo)
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
            demo_http = Some(server);
            let file = json!({
                "mcpServers": {
                    "local": {"command": demo},
                    "remote": {"type": "http", "url": url},
                    "broken": {"command": "/nonexistent/mcp-server"},
                    "off": {"command": "anything", "disabled": true}
                }
            });
            std::fs::create_dir_all(&dir)?;
            let path = dir.join("claude_desktop_config.json");
            std::fs::write(&path, serde_json::to_string_pretty(&file)?)?;
            (
                path,
                Some("local__add".to_owned()),
                json!({"a": 2, "b": 40}),
            )
        }
    };

    let config = mcpwire::config::load_file(&path)?;
    println!(
        "{}: {} servers, {} warnings",
        path.display(),
        config.servers.len(),
        config.warnings.len()
    );
    for warning in &config.warnings {
        println!("  warning: {warning}");
    }
    let manager = Manager::builder()
        .config(
            &config,
            &Resolver::new(&ProcessEnvironment),
            &Transports::new()?,
        )?
        .build()?;
    let mut events = manager.events();

    let report = manager.connect_all().await?;
    println!("connected: {}", report.connected.join(", "));
    for (server, why) in &report.failed {
        println!("failed:    {server}: {}", chain(why));
    }
    for (server, why) in &report.skipped {
        println!("skipped:   {server}: {why:?}");
    }
    for (server, health) in manager.health_all() {
        println!("  {server:<8} {}", health.name());
    }

    println!("tools:");
    for routed in manager.tools()? {
        let description = routed.tool.description.clone().unwrap_or_default();
        println!("  {:<24} {description}", routed.name);
    }

    if let Some(tool) = tool {
        let (server, own) = manager.route(&tool)?;
        println!("{tool} routes to tool {own:?} of server {server:?}");
        let result = manager.call_tool(&tool, &arguments).await?;
        println!("{tool} -> {}", result.text());
    }

    // What the fleet reported along the way.
    while let Ok(event) = events.try_recv() {
        if let Event::CatalogueChanged { servers } = event {
            println!("catalogue changed: {}", servers.join(", "));
        }
    }
    manager.close().await;
    if let Some(mut server) = demo_http {
        server.kill().await?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("closed");
    Ok(())
}

/// An error and its causes, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
