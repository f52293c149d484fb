//! `serve`: the fleet of the `--config` files offered as one MCP server on
//! this process's stdin and stdout, so one entry in a host's configuration
//! gives it every server (their tools named `{server}__{tool}`, each
//! entry's filters applied by the manager).
//!
//! stdout carries the protocol and nothing else: every word for people
//! goes to stderr.

use std::io::Write;

use mcpwire::config::ProcessEnvironment;
use mcpwire::manager::{Manager, ServerSkip, Transports};
use mcpwire::transport::{IoConfig, IoTransport};
use mcpwire_serve::Server;
use serde_json::Value;

use crate::args::Global;
use crate::commands::Shown;
use crate::failure::{Exit, Failure};
use crate::target;

/// Builds the fleet, starts it, and serves one client on stdio until it
/// closes its side (or Ctrl-C).
pub(crate) async fn run(global: &Global) -> Result<Shown, Failure> {
    let config = target::load_configs(global)?;
    if config.servers.is_empty() {
        return Err(Failure::usage(
            "serve needs servers: give --config FILE (a Claude Desktop, Cursor, VS Code... file)",
        ));
    }
    let transports = Transports::new()
        .map_err(|e| Failure::caused(Exit::Usage, "cannot prepare the transports", e))?;
    let manager = Manager::builder()
        .config(
            &config,
            &mcpwire::config_resolver(&ProcessEnvironment),
            &transports,
        )
        .and_then(|b| b.build())
        .map_err(|e| Failure::caused(Exit::Usage, "cannot build the fleet", e))?;
    let report = manager
        .connect_all()
        .await
        .map_err(|e| Failure::caused(Exit::Unreachable, "the fleet did not start", e))?;
    {
        let mut err = std::io::stderr().lock();
        for (server, why) in &report.failed {
            let _ = writeln!(err, "mcpwire serve: server {server:?} did not start: {why}");
        }
        for (server, why) in manager.skipped_servers() {
            let why = match why {
                ServerSkip::Disabled => "disabled in its configuration".to_owned(),
                ServerSkip::InvalidName(e) => e.to_string(),
                ServerSkip::Unusable(e) => e.to_string(),
                _ => "not usable".to_owned(),
            };
            let _ = writeln!(err, "mcpwire serve: server {server:?} left out: {why}");
        }
        let tools = manager.tools().map(|t| t.len()).unwrap_or(0);
        let _ = writeln!(
            err,
            "mcpwire serve: {} of {} servers up, {tools} tools; serving on stdio",
            report.connected.len(),
            manager.servers().len(),
        );
    }
    let stdio = IoTransport::new(tokio::io::stdin(), tokio::io::stdout(), IoConfig::new());
    let server = Server::new(manager.clone());
    let served = tokio::select! {
        served = server.serve(stdio) => served,
        _ = tokio::signal::ctrl_c() => Ok(()),
    };
    manager.close().await;
    served.map_err(|e| Failure::caused(Exit::Unreachable, "serving stopped", e))?;
    Ok(Shown {
        json: Value::Null,
        items: None,
        text: String::new(),
        failure: None,
    })
}
