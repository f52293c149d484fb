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
//! # Features
//!
//! - `stdio` (default): spawn local servers ([`connect_stdio`],
//!   [`Server::stdio`], [`Server::command`]).
//! - `http`: reach remote servers over Streamable HTTP and legacy HTTP+SSE
//!   ([`connect_http`], [`Server::http`]).
//! - `full`: both.
//!
//! Not here: an MCP server framework, and authorization flows (a token can
//! be sent with [`HttpConfig::header`]).

// Connecting needs a transport: with neither feature, the facade only
// re-exports the layers (for a transport of one's own).
#[cfg(any(feature = "stdio", feature = "http"))]
mod connect;
#[cfg(any(feature = "stdio", feature = "http"))]
mod server;

pub use mcpwire_client as client;
pub use mcpwire_codec as codec;
#[cfg(feature = "http")]
pub use mcpwire_http as http;
#[cfg(feature = "stdio")]
pub use mcpwire_stdio as stdio;
pub use mcpwire_transport as transport;

#[cfg(any(feature = "stdio", feature = "http"))]
pub use connect::connect;
#[cfg(feature = "http")]
pub use connect::connect_http;
#[cfg(feature = "stdio")]
pub use connect::connect_stdio;
pub use mcpwire_client::types::{
    CallToolResult, ContentBlock, EmbeddedResource, MediaContent, ResourceContents, ResourceLink,
    TextContent, Tool,
};
pub use mcpwire_client::{
    Call, Client, ClientConfig, ConnectionState, Error, ErrorKind, Reconnect, RequestOptions,
};
#[cfg(feature = "http")]
pub use mcpwire_http::{HttpClient, HttpConfig};
#[cfg(feature = "stdio")]
pub use mcpwire_stdio::{StderrMode, StdioConfig};
#[cfg(feature = "http")]
pub use server::HttpServer;
#[cfg(any(feature = "stdio", feature = "http"))]
pub use server::Server;

/// The README's examples, compiled as doctests.
#[cfg(all(doctest, feature = "stdio", feature = "http"))]
#[doc = include_str!("../../../README.md")]
mod readme {}
