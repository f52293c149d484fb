//! Connecting a client: to a [`Server`], to a URL, or to a local command.
//! Each connects with a transport factory, so the client can reconnect (see
//! [`ClientConfig::reconnect`]).

use std::future::Future;

use mcpwire_client::{Client, ClientConfig, Error};
#[cfg(feature = "stdio")]
use mcpwire_stdio::StdioConfig;

use crate::server::Server;

/// Connects a client to `server` (a URL or a local command) and runs the
/// handshake; returns once the client is ready, or why it could not be.
///
/// Every (re)connection opens a fresh transport: with
/// [`ClientConfig::reconnect`] set, a server process that exits is spawned
/// again and a dropped HTTP session is started again, each re-initialized;
/// without it, the client closes when the transport does.
///
/// Nothing happens until the future is first polled. The server and the
/// configuration wait in one box meanwhile, so the future stays small (a
/// caller opening many sessions at once holds one per session).
pub fn connect(
    server: impl Into<Server>,
    config: ClientConfig,
) -> impl Future<Output = Result<Client, Error>> + Send {
    let args = Box::new((server.into(), config));
    async move {
        // Out of the box by value: the box is freed here, not when the
        // handshake is over (a `*args` move would keep it until then).
        let (server, config) = unbox(args);
        let factory = server.factory()?;
        Client::connect_with(factory, config).await
    }
}

/// The arguments out of their box, the box freed now.
fn unbox(args: Box<(Server, ClientConfig)>) -> (Server, ClientConfig) {
    *args
}

/// Connects to the MCP server at `url` over HTTP (Streamable HTTP, or legacy
/// HTTP+SSE if that is all it speaks), with the default [`HttpConfig`](crate::HttpConfig).
/// For other HTTP options, or one connection pool shared by many servers:
/// [`connect`] with [`Server::http`].
#[cfg(feature = "http")]
pub fn connect_http(
    url: &str,
    config: ClientConfig,
) -> impl Future<Output = Result<Client, Error>> + Send {
    connect(Server::http(url), config)
}

/// Connects to the MCP server at the WebSocket `url` (`ws://` or `wss://`,
/// subprotocol `mcp`), with the default [`WsConfig`](crate::ws::WsConfig). For
/// other options: [`connect`] with [`Server::ws`].
#[cfg(feature = "ws")]
pub fn connect_ws(
    url: &str,
    config: ClientConfig,
) -> impl Future<Output = Result<Client, Error>> + Send {
    connect(Server::ws(url), config)
}

/// Spawns the server `stdio` describes and connects to it over its stdin
/// and stdout.
///
/// With [`ClientConfig::reconnect`] set, a server that exits unexpectedly is
/// spawned again and re-initialized (the 2026 specification says a client
/// SHOULD restart it); without it, the client closes when the server exits.
#[cfg(feature = "stdio")]
pub fn connect_stdio(
    stdio: StdioConfig,
    config: ClientConfig,
) -> impl Future<Output = Result<Client, Error>> + Send {
    connect(Server::stdio(stdio), config)
}
