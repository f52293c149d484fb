//! Every place the suite connects a client or calls a tool: the client's
//! connect functions and `call_tool`'s signature are being reshaped, and
//! only this file should have to follow.

use std::path::Path;
use std::time::Duration;

use mcpwire::{HttpClient, HttpConfig, Server};
use mcpwire_client::types::CallToolResult;
use mcpwire_client::{Client, ClientConfig, Error, RequestOptions};
use mcpwire_http::{HttpMode, Proxy, RetryPolicy};
use mcpwire_stdio::{StderrMode, StdioConfig};
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
        .proxy(Proxy::none())
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

/// Connects over Streamable HTTP to `url` with a new HTTP client.
pub async fn connect_http(
    url: &str,
    http: HttpConfig,
    config: ClientConfig,
) -> Result<Client, Error> {
    let server = Server::http(url)
        .config(http)
        .mode(HttpMode::StreamableHttp);
    mcpwire::connect(server, config).await
}

/// Connects over Streamable HTTP to `url` through `http`, an HTTP client
/// shared with other sessions.
pub async fn connect_http_shared(
    url: &str,
    http: &HttpClient,
    config: ClientConfig,
) -> Result<Client, Error> {
    let server = Server::http(url)
        .client(http.clone())
        .mode(HttpMode::StreamableHttp);
    mcpwire::connect(server, config).await
}

/// Calls tool `name` with JSON `arguments`.
pub async fn call(client: &Client, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
    client.call_tool(name, &arguments).await
}

/// Calls tool `name` with JSON `arguments` and request options.
pub async fn call_with(
    client: &Client,
    name: &str,
    arguments: Value,
    opts: &RequestOptions,
) -> Result<CallToolResult, Error> {
    client
        .call_tool(name, &arguments)
        .options(opts.clone())
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
