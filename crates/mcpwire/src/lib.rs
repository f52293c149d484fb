//! mcpwire: a fast, correct Model Context Protocol client.
//!
//! Connect to a local server over stdio or to a remote one over HTTP, then
//! list and call its tools, read its resources, get its prompts. Everything
//! the common path needs is at this crate's root; the layers below are
//! re-exported as modules ([`client`], [`transport`], [`codec`], [`stdio`],
//! [`http`]) for the rest.
//!
//! # A local server (stdio)
//!
//! ```no_run
//! # #[cfg(feature = "stdio")] mod demo {
//! use mcpwire::{ClientConfig, StdioConfig};
//! use serde_json::json;
//!
//! # pub async fn main() -> Result<(), mcpwire::Error> {
//! // No shell; only a safe allow-list of environment variables is passed.
//! let server = StdioConfig::new("uvx").arg("mcp-server-time");
//! let client = mcpwire::connect_stdio(server, ClientConfig::new()).await?;
//! for tool in client.list_all_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let now = client
//!     .call_tool("get_current_time", &json!({"timezone": "UTC"}))
//!     .await?;
//! println!("{}", now.text());
//! client.close().await;
//! # Ok(()) }
//! # }
//! ```
//!
//! # A remote server (HTTP)
//!
//! ```no_run
//! # #[cfg(feature = "http")] mod demo {
//! use std::time::Duration;
//!
//! use mcpwire::{ClientConfig, Reconnect};
//! use serde_json::json;
//!
//! # pub async fn main() -> Result<(), mcpwire::Error> {
//! // Streamable HTTP, or legacy HTTP+SSE if that is all the server speaks;
//! // reconnects (a new session) if the connection is lost.
//! let config = ClientConfig::new().reconnect(Reconnect::new());
//! let client = mcpwire::connect_http("https://example.com/mcp", config).await?;
//! let result = client
//!     .call_tool("echo", &json!({"message": "hello"}))
//!     .timeout(Duration::from_secs(10))
//!     .await?;
//! println!("{}", result.text());
//! client.close().await;
//! # Ok(()) }
//! # }
//! ```
//!
//! Many servers, one HTTP connection pool: build one [`HttpClient`] and give
//! it to each [`Server::http`] with [`HttpServer::client`], then
//! [`connect`] each.
//!
//! # Errors
//!
//! Every fallible call returns [`Error`]: branch on [`Error::kind`] and the
//! `is_*` helpers (`is_timeout`, `is_closed`, `is_authorization`...). Its
//! `Display` says what went wrong at the client's level in one line; the
//! cause, down to the operating system's or rustls' error, is its
//! [`source`](std::error::Error::source) chain (an HTTP server's
//! `WWW-Authenticate` challenges are on the [`http::Error`] in it). Message
//! text is not stable.
//!
//! # Stability
//!
//! Every `mcpwire-*` crate shares one version. Before 1.0 a breaking change
//! bumps the minor version (0.1 to 0.2), and `CHANGELOG.md` names each one;
//! a patch release never breaks. Within that promise:
//!
//! - Enums and structs marked `#[non_exhaustive]` (error kinds, events,
//!   wire types) may gain variants and fields in a minor release: match
//!   them with a wildcard arm.
//! - Items hidden from the documentation (`#[doc(hidden)]`, such as the
//!   macro that writes every request builder's option setters and
//!   [`client::Operation::run`]) are not part of the API.
//! - Error messages (`Display`) are for people and may change; branch on
//!   [`Error::kind`] and the typed variants instead.
//! - Wire types keep members they do not know (`extra`), so a newer
//!   server's fields survive a round trip; which MCP revisions the client
//!   speaks, and in which era, is listed in `docs/eras.md` and changes only
//!   with a minor release.
//!
//! # Eras
//!
//! With the default [`ClientConfig`], the client probes each server with
//! `server/discover` and speaks the stateless 2026-07-28 revision to a server
//! that answers it, the `initialize` handshake (2024-11-05 to 2025-11-25) to
//! any other; [`Client::era`] says which it chose, and
//! [`ClientConfig::era`] pins one (`docs/eras.md`).
//!
//! # Features
//!
//! - `stdio` (default): spawn local servers ([`connect_stdio`],
//!   [`Server::stdio`], [`Server::command`]).
//! - `http`: reach remote servers over Streamable HTTP and legacy HTTP+SSE
//!   ([`connect_http`], [`Server::http`]).
//! - `ws`: reach servers that speak MCP over a WebSocket, a compatibility
//!   transport the MCP specification does not define ([`connect_ws`],
//!   [`Server::ws`]; [`Server::url`] takes `ws://` and `wss://` URLs).
//! - `config`: read the configuration files users already have
//!   ([`config`]) and make a [`Server`] of an entry (`Server::try_from`,
//!   after [`config_resolver`]).
//! - `manager`: many servers at once ([`manager`]: one client per server,
//!   health, an aggregated catalogue of tools, prompts and resources, calls
//!   routed by name) from the configuration files users already have ([`config`]: Claude
//!   Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, Codex);
//!   implies `config`.
//! - `otel`: W3C trace context (`traceparent`, `tracestate`) in every
//!   request's `_meta`, from the current `tracing` span's OpenTelemetry
//!   context (`tracing-opentelemetry`), when the request sets no explicit
//!   [`TraceContext`](client::TraceContext).
//! - `full`: all of them.
//!
//! # Authorization
//!
//! An OAuth-protected server is reached by its URL alone: when it answers
//! `401`, the client discovers its authorization server, registers, and
//! asks the user to authorize in a browser (where a terminal is attached),
//! then keeps and renews the tokens. Other ways are one setter on
//! [`HttpServer`]:
//!
//! ```no_run
//! # #[cfg(feature = "http")] mod demo {
//! use mcpwire::{ClientConfig, Server};
//!
//! # pub async fn main() -> Result<(), mcpwire::Error> {
//! let token = Server::http("https://example.com/mcp").bearer_token("s3cret")?;
//! let service = Server::http("https://example.com/mcp").client_credentials("my-service", "s3cret");
//! let client = mcpwire::connect(service, ClientConfig::new()).await?;
//! # let _ = (token, client); Ok(()) }
//! # }
//! ```
//!
//! [`auth`] has the rest (client credentials with a private key, workload
//! identity, enterprise-managed authorization, token stores, redirect
//! steps); `docs/auth.md` describes the flows.
//!
//! Not here: an MCP server framework.

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Connecting needs a transport: with no transport feature, the facade only
// re-exports the layers (for a transport of one's own).
#[cfg(feature = "ws")]
mod ws_server;
#[cfg(any(feature = "stdio", feature = "http", feature = "ws"))]
mod server;
#[cfg(any(feature = "stdio", feature = "http", feature = "ws"))]
mod connect;
#[cfg(all(
    feature = "config",
    any(feature = "stdio", feature = "http", feature = "ws")
))]
mod from_config;
#[cfg(all(
    feature = "manager",
    any(feature = "stdio", feature = "http", feature = "ws")
))]
pub mod manager;

pub use mcpwire_client as client;
pub use mcpwire_codec as codec;
#[cfg(feature = "config")]
pub use mcpwire_config as config;
#[cfg(feature = "http")]
pub use mcpwire_http as http;
#[cfg(feature = "http")]
pub use mcpwire_http::auth;
#[cfg(feature = "stdio")]
pub use mcpwire_stdio as stdio;
pub use mcpwire_transport as transport;
#[cfg(feature = "ws")]
pub use mcpwire_ws as ws;

#[cfg(any(feature = "stdio", feature = "http", feature = "ws"))]
pub use connect::connect;
#[cfg(feature = "http")]
pub use connect::connect_http;
#[cfg(feature = "stdio")]
pub use connect::connect_stdio;
#[cfg(feature = "ws")]
pub use connect::connect_ws;
#[cfg(all(
    feature = "config",
    any(feature = "stdio", feature = "http", feature = "ws")
))]
pub use from_config::{Transports, UnusableEntry, config_resolver};
pub use mcpwire_client::types::{
    CallToolResult, ContentBlock, EmbeddedResource, MediaContent, ResourceContents, ResourceLink,
    TextContent, Tool,
};
pub use mcpwire_client::{
    Call, Client, ClientConfig, ConnectionState, Era, EraChoice, Error, ErrorKind, Reconnect,
    RequestOptions,
};
#[cfg(feature = "http")]
pub use mcpwire_http::auth::Auth;
#[cfg(feature = "http")]
pub use mcpwire_http::{HttpClient, HttpConfig};
#[cfg(feature = "stdio")]
pub use mcpwire_stdio::{StderrMode, StdioConfig};
#[cfg(feature = "http")]
pub use server::HttpServer;
#[cfg(any(feature = "stdio", feature = "http", feature = "ws"))]
pub use server::Server;
#[cfg(feature = "ws")]
pub use ws_server::WsServer;

/// The README's examples, compiled as doctests.
#[cfg(all(doctest, feature = "stdio", feature = "http", feature = "manager"))]
#[doc = include_str!("../../../README.md")]
mod readme {}
