//! Fleet mode: a configuration file of real servers, loaded and used through
//! the manager (`cargo xtask interop`'s fleet case).
//!
//! `mcpwire-conformance fleet --config FILE [--call NAME JSON]...` loads the
//! file (any format `mcpwire::config` reads; variables from this process's
//! environment), starts every server at once, needs all of them connected,
//! lists the aggregated tools and calls each `--call` by its public name.
//! On success it prints one line saying what it did.

use mcpwire::config::{ProcessEnvironment, Resolver};
use mcpwire::manager::{Manager, Transports};
use serde_json::Value;

use crate::scenario::chain;

/// How fleet mode is invoked.
pub(crate) const USAGE: &str =
    "usage: mcpwire-conformance fleet --config FILE [--call PUBLIC_NAME ARGUMENTS_JSON]...";

/// One fleet case.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fleet {
    config: String,
    calls: Vec<(String, Value)>,
}

impl Fleet {
    /// Parses the arguments after `fleet`.
    pub(crate) fn parse(args: &[String]) -> Result<Self, String> {
        let mut it = args.iter();
        let (mut config, mut calls) = (None, Vec::new());
        while let Some(flag) = it.next() {
            match flag.as_str() {
                "--config" => config = Some(it.next().ok_or("--config needs a file")?.clone()),
                "--call" => {
                    let name = it.next().ok_or("--call needs a name")?.clone();
                    let json = it.next().ok_or("--call needs arguments")?;
                    let arguments =
                        serde_json::from_str(json).map_err(|e| format!("--call {name}: {e}"))?;
                    calls.push((name, arguments));
                }
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        Ok(Fleet {
            config: config.ok_or("no --config")?,
            calls,
        })
    }

    /// Runs the case; prints a one-line summary on success.
    pub(crate) async fn run(self) -> Result<(), String> {
        let config = mcpwire::config::load_file(&self.config).map_err(|e| chain(&e))?;
        let transports = Transports::new().map_err(|e| chain(&e))?;
        let manager = Manager::builder()
            .config(&config, &Resolver::new(&ProcessEnvironment), &transports)
            .map_err(|e| chain(&e))?
            .build()
            .map_err(|e| chain(&e))?;
        let outcome = self.exercise(&manager).await;
        manager.close().await;
        println!("{}", outcome?);
        Ok(())
    }

    async fn exercise(&self, manager: &Manager) -> Result<String, String> {
        let report = manager
            .connect_all()
            .await
            .map_err(|e| format!("connect_all: {}", chain(&e)))?;
        if let Some((server, why)) = report.failed.first() {
            return Err(format!("{server} did not start: {}", chain(why)));
        }
        if let Some((server, why)) = report.skipped.first() {
            return Err(format!("{server} was skipped: {why:?}"));
        }
        let tools = manager
            .tools()
            .map_err(|e| format!("tools: {}", chain(&e)))?;
        let mut done = vec![format!(
            "{} servers ({}), {} tools",
            report.connected.len(),
            report.connected.join(", "),
            tools.len()
        )];
        for (name, arguments) in &self.calls {
            let result = manager
                .call_tool(name, arguments)
                .await
                .map_err(|e| format!("{name}: {}", chain(&e)))?;
            if result.is_error == Some(true) {
                return Err(format!("{name} answered an error: {}", result.text()));
            }
            done.push(format!("called {name}"));
        }
        Ok(done.join("; "))
    }
}
