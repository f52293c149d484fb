//! The mcpwire client, used the way its docs show.

use std::path::Path;

use mcpwire_client::{Client, ClientConfig};
use mcpwire_http::{HttpClient, HttpConfig, HttpTransport};
use mcpwire_stdio::{StdioConfig, StdioTransport};
use serde::Serialize;

use crate::workload::Caller;

/// A connected mcpwire client.
#[derive(Clone)]
pub(crate) struct Mcpwire(Client);

impl Mcpwire {
    /// Spawns `server stdio` and completes the handshake.
    pub(crate) async fn stdio(server: &Path) -> Result<Self, String> {
        let transport = StdioTransport::spawn(StdioConfig::new(server).arg("stdio"))
            .await
            .map_err(|e| e.to_string())?;
        Self::connect(transport).await
    }

    /// Opens a Streamable HTTP session on `url` through the process-wide
    /// `http` client (its pool is shared, as the docs recommend).
    pub(crate) async fn http(http: &HttpClient, url: &str) -> Result<Self, String> {
        let transport = HttpTransport::streamable(http, url).map_err(|e| e.to_string())?;
        Self::connect(transport).await
    }

    async fn connect<T: mcpwire_transport::Transport>(transport: T) -> Result<Self, String> {
        let client = Client::connect(transport, ClientConfig::new())
            .await
            .map_err(|e| e.to_string())?;
        Ok(Mcpwire(client))
    }
}

/// The process-wide HTTP client.
pub(crate) fn http_client() -> Result<HttpClient, String> {
    HttpClient::new(HttpConfig::new().proxy_from_env(false)).map_err(|e| e.to_string())
}

/// The echo tool's arguments, borrowed: `call_tool_args` serializes them
/// straight into the request frame, with no `serde_json::Value` copy of the
/// message (rmcp's `call_tool` takes a JSON object, so its caller builds one).
#[derive(Serialize)]
struct EchoArgs<'a> {
    message: &'a str,
}

impl Caller for Mcpwire {
    async fn echo(&self, message: &str) -> Result<usize, String> {
        let result = self
            .0
            .call_tool_args("echo", &EchoArgs { message })
            .await
            .map_err(|e| e.to_string())?;
        Ok(result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map_or(0, str::len))
    }

    async fn close(self) {
        self.0.close().await;
    }
}
