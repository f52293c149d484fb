//! The mcpwire client, used the way its README shows: the facade's
//! `connect_stdio` or `connect`, then `call_tool(name, &json!(..))`. A
//! second way round, `mcpwire-struct`, passes the arguments as a borrowed
//! struct instead of a JSON value.

use std::path::Path;
use std::time::Duration;

use mcpwire::{Client, ClientConfig, HttpClient, HttpConfig, Server, StdioConfig};
use serde::Serialize;
use serde_json::json;

use crate::workload::Caller;

/// How the echo tool's arguments are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arguments {
    /// `&json!({"message": message})`: what the README shows.
    Json,
    /// `&EchoArgs { message }`, serialized straight into the frame without
    /// a JSON value in between.
    Struct,
}

/// A connected mcpwire client.
#[derive(Clone)]
pub(crate) struct Mcpwire {
    client: Client,
    arguments: Arguments,
}

impl Mcpwire {
    /// Spawns `server stdio` and completes the handshake.
    pub(crate) async fn stdio(server: &Path, arguments: Arguments) -> Result<Self, String> {
        let stdio = StdioConfig::new(server).arg("stdio");
        let client = mcpwire::connect_stdio(stdio, ClientConfig::new())
            .await
            .map_err(|e| e.to_string())?;
        Ok(Mcpwire { client, arguments })
    }

    /// Opens a session on `url` through the process-wide `http` client (its
    /// pool is shared, as the docs recommend for many servers).
    pub(crate) async fn http(
        http: &HttpClient,
        url: &str,
        arguments: Arguments,
    ) -> Result<Self, String> {
        let server = Server::http(url).client(http.clone());
        let client = mcpwire::connect(server, ClientConfig::new())
            .await
            .map_err(|e| e.to_string())?;
        Ok(Mcpwire { client, arguments })
    }
}

/// The process-wide HTTP client.
pub(crate) fn http_client() -> Result<HttpClient, String> {
    http_client_with(None)
}

/// An HTTP client, keeping idle connections for `pool_idle` instead of the
/// default.
pub(crate) fn http_client_with(pool_idle: Option<Duration>) -> Result<HttpClient, String> {
    let config = HttpConfig::new().proxy(mcpwire::http::Proxy::none());
    let config = match pool_idle {
        Some(idle) => config.pool_idle_timeout(idle),
        None => config,
    };
    HttpClient::new(config).map_err(|e| e.to_string())
}

/// The echo tool's arguments, borrowed (rmcp's `call_tool` takes a JSON
/// object, so its caller builds one, as the README's mcpwire caller does).
#[derive(Serialize)]
struct EchoArgs<'a> {
    message: &'a str,
}

impl Caller for Mcpwire {
    async fn echo(&self, message: &str) -> Result<usize, String> {
        let result = match self.arguments {
            Arguments::Json => {
                self.client
                    .call_tool("echo", &json!({ "message": message }))
                    .await
            }
            Arguments::Struct => self.client.call_tool("echo", &EchoArgs { message }).await,
        }
        .map_err(|e| e.to_string())?;
        Ok(result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map_or(0, str::len))
    }

    async fn close(self) {
        self.client.close().await;
    }
}
