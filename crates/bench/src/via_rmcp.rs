//! rmcp, the official Rust SDK, used the way its docs show.

use std::path::Path;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

use crate::workload::Caller;

/// A connected rmcp client.
#[derive(Clone)]
pub(crate) struct Rmcp(Arc<RunningService<RoleClient, ()>>);

impl Rmcp {
    /// Spawns `server stdio` and completes the handshake.
    pub(crate) async fn stdio(server: &Path) -> Result<Self, String> {
        let mut command = tokio::process::Command::new(server);
        command.arg("stdio");
        let transport = TokioChildProcess::new(command).map_err(|e| e.to_string())?;
        let service = ().serve(transport).await.map_err(|e| e.to_string())?;
        Ok(Rmcp(Arc::new(service)))
    }

    /// Opens a Streamable HTTP session on `url` with rmcp's default client.
    pub(crate) async fn http(url: &str) -> Result<Self, String> {
        with_tls();
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        let service = ().serve(transport).await.map_err(|e| e.to_string())?;
        Ok(Rmcp(Arc::new(service)))
    }

    /// Opens a Streamable HTTP session on `url` through `client`, an HTTP
    /// client shared by every session (its pool is shared).
    pub(crate) async fn http_with(client: reqwest::Client, url: &str) -> Result<Self, String> {
        let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let service = ().serve(transport).await.map_err(|e| e.to_string())?;
        Ok(Rmcp(Arc::new(service)))
    }
}

/// One HTTP client for every rmcp session of a run (what rmcp's
/// `from_uri` makes for each session otherwise).
pub(crate) fn http_client() -> reqwest::Client {
    with_tls();
    reqwest::Client::new()
}

/// Makes ring the process's TLS crypto provider (once), as an rmcp user
/// of its `reqwest-tls-no-provider` feature does before the first client.
fn with_tls() {
    // Already installed by an earlier call: nothing to do.
    #[cfg(feature = "rmcp-tls")]
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl Caller for Rmcp {
    async fn echo(&self, message: &str) -> Result<usize, String> {
        let mut arguments = serde_json::Map::new();
        arguments.insert("message".into(), message.into());
        let mut params = CallToolRequestParams::new("echo");
        params.arguments = Some(arguments);
        let result = self.0.call_tool(params).await.map_err(|e| e.to_string())?;
        Ok(result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map_or(0, |t| t.text.len()))
    }

    async fn close(self) {
        if let Ok(service) = Arc::try_unwrap(self.0) {
            let _ = service.cancel().await;
        }
    }
}
