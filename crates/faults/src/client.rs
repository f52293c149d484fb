//! Every place the suite connects a client or calls a tool: the client's
//! connect functions and `call_tool`'s signature are being reshaped, and
//! only this file should have to follow.

use std::path::Path;
use std::time::Duration;

use mcpwire_client::types::{CallToolParams, CallToolResult};
use mcpwire_client::{Client, ClientConfig, Error, RequestOptions, TransportFactory};
use mcpwire_http::{HttpClient, HttpConfig, HttpTransport, RetryPolicy};
use mcpwire_stdio::{StderrMode, StdioConfig};
use mcpwire_transport::Transport;
use serde_json::Value;

use crate::probe::{TAG_VAR, tag};

/// The scripted stdio server `mode` (see [`crate::stdio_server`]), tagged
/// so that a leftover process is found.
pub fn scripted_stdio(exe: &Path, mode: &str) -> StdioConfig {
    StdioConfig::new(exe)
        .args(["stdio-server", mode])
        .env(TAG_VAR, tag())
        .stderr(StderrMode::Discard)
}

/// Connects over stdio (spawning the server) with `config`.
pub async fn connect_stdio(stdio: StdioConfig, config: ClientConfig) -> Result<Client, Error> {
    mcpwire::connect_stdio(stdio, config).await
}

/// An HTTP configuration for loopback: no proxy from the environment, a
/// quick retry policy, short connect and request bounds.
pub fn http_config() -> HttpConfig {
    HttpConfig::new()
        .proxy_from_env(false)
        .connect_timeout(Duration::from_secs(3))
        .request_timeout(Duration::from_secs(10))
        .close_timeout(Duration::from_secs(1))
        .retry(
            RetryPolicy::default()
                .initial_delay(Duration::from_millis(20))
                .max_delay(Duration::from_millis(200))
                .max_attempts(4)
                .max_elapsed(Duration::from_secs(5)),
        )
}

/// A factory of Streamable HTTP transports to `url` over `http` (one
/// shared HTTP client: its pool serves every reconnection).
pub fn http_factory(http: &HttpClient, url: &str) -> TransportFactory {
    let http = http.clone();
    let url = url.to_owned();
    Box::new(move || {
        let t = HttpTransport::streamable(&http, &url);
        Box::pin(async move {
            t.map(|t| Box::new(t) as Box<dyn Transport>)
                .map_err(Error::spawn)
        })
    })
}

/// Connects over Streamable HTTP to `url` with a new HTTP client.
pub async fn connect_http(
    url: &str,
    http: HttpConfig,
    config: ClientConfig,
) -> Result<Client, Error> {
    let http = HttpClient::new(http).map_err(Error::spawn)?;
    Client::connect_with(http_factory(&http, url), config).await
}

/// Calls tool `name` with JSON `arguments`.
pub async fn call(client: &Client, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
    client.call_tool(name, arguments).await
}

/// Calls tool `name` with JSON `arguments` and request options.
pub async fn call_with(
    client: &Client,
    name: &str,
    arguments: Value,
    opts: &RequestOptions,
) -> Result<CallToolResult, Error> {
    client
        .call_tool_with(CallToolParams::new(name, arguments), opts)
        .await
}

/// Calls `echo` and checks the answer echoes `message`.
pub async fn echo(client: &Client, message: &str) -> Result<(), String> {
    let r = call(client, "echo", serde_json::json!({ "message": message }))
        .await
        .map_err(|e| format!("echo failed: {e} ({:?})", e.kind()))?;
    if r.text() == message {
        Ok(())
    } else {
        Err(format!("echo answered {:?}, not {message:?}", r.text()))
    }
}
