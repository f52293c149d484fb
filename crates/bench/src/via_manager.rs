//! mcpwire's manager: the same echo calls routed by public name
//! (`bench__echo`) through a `Manager` holding the one server, to measure
//! what routing costs over a direct `Client` call; and W5, a fleet of 20
//! stdio servers started at once by `connect_all`, against the same
//! servers connected one by one with the facade.

use std::path::Path;
use std::time::{Duration, Instant};

use mcpwire::manager::{Manager, ServerSpec};
use mcpwire::{ClientConfig, HttpClient, Server, StdioConfig};
use serde_json::json;

use crate::measure::cpu_time;
use crate::workload::{Caller, Samples};

/// A manager holding one server, named `bench`.
#[derive(Clone)]
pub(crate) struct ViaManager {
    manager: Manager,
}

impl ViaManager {
    /// Spawns `server stdio` through the manager.
    pub(crate) async fn stdio(server: &Path) -> Result<Self, String> {
        Self::start(Server::stdio(StdioConfig::new(server).arg("stdio"))).await
    }

    /// Reaches `url` through the manager, on the process-wide `http` pool.
    pub(crate) async fn http(http: &HttpClient, url: &str) -> Result<Self, String> {
        Self::start(Server::http(url).client(http.clone()).into()).await
    }

    async fn start(server: Server) -> Result<Self, String> {
        let manager = Manager::builder()
            .server(ServerSpec::new("bench", move || server.clone().factory()))
            .client_config(ClientConfig::new())
            .build()
            .map_err(|e| e.to_string())?;
        let report = manager.connect_all().await.map_err(|e| e.to_string())?;
        if let Some((_, e)) = report.failed.first() {
            return Err(e.to_string());
        }
        Ok(ViaManager { manager })
    }
}

impl Caller for ViaManager {
    async fn echo(&self, message: &str) -> Result<usize, String> {
        let result = self
            .manager
            .call_tool("bench__echo", &json!({ "message": message }))
            .await
            .map_err(|e| e.to_string())?;
        Ok(result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map_or(0, str::len))
    }

    async fn close(self) {
        self.manager.close().await;
    }
}

/// W5: `rounds` times, start `size` stdio servers until every one is ready
/// (timed): with the manager, all at once (`parallel`), or with the facade,
/// one after the other, each connected and its tools listed (what the
/// manager does for each); then close them all (not timed).
pub(crate) async fn fleet(
    server: &Path,
    size: usize,
    rounds: usize,
    parallel: bool,
) -> Result<Samples, String> {
    let stdio = StdioConfig::new(server).arg("stdio");
    let mut latencies = Vec::with_capacity(rounds);
    let mut elapsed = Duration::ZERO;
    let cpu = cpu_time();
    for _ in 0..rounds {
        let t = Instant::now();
        if parallel {
            let mut builder = Manager::builder().client_config(ClientConfig::new());
            for i in 0..size {
                let server = Server::stdio(stdio.clone());
                builder = builder.server(ServerSpec::new(format!("s{i}"), move || {
                    server.clone().factory()
                }));
            }
            let manager = builder.build().map_err(|e| e.to_string())?;
            let report = manager.connect_all().await.map_err(|e| e.to_string())?;
            let took = t.elapsed();
            if report.connected.len() != size {
                return Err(format!(
                    "{} of {size} servers started",
                    report.connected.len()
                ));
            }
            latencies.push(took);
            elapsed += took;
            manager.close().await;
        } else {
            let mut clients = Vec::with_capacity(size);
            for _ in 0..size {
                let client = mcpwire::connect_stdio(stdio.clone(), ClientConfig::new())
                    .await
                    .map_err(|e| e.to_string())?;
                client.list_all_tools().await.map_err(|e| e.to_string())?;
                clients.push(client);
            }
            let took = t.elapsed();
            latencies.push(took);
            elapsed += took;
            for client in clients {
                client.close().await;
            }
        }
    }
    Ok(Samples {
        ops: rounds,
        elapsed,
        cpu: cpu_time().saturating_sub(cpu),
        latencies,
        message_len: None,
        heap_stacks_kib: None,
    })
}
