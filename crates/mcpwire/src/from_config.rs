//! From the configuration files users already have to servers:
//! [`config_resolver`] resolves entries of the transports this build can
//! reach, and a [`ResolvedServer`] becomes a [`Server`] with `try_from`.
//!
//! Only how to reach the server is taken from the entry; its policy
//! (enabled, timeouts, tool filters) is for whoever holds many servers.

use std::fmt;

use mcpwire_client::Error;
#[cfg(any(feature = "http", feature = "ws"))]
use mcpwire_config::ResolvedRemote;
use mcpwire_config::{Environment, ResolvedServer, ResolvedTransport, Resolver, TransportKind};
// The same `http` crate types, re-exported by either transport.
#[cfg(feature = "http")]
use mcpwire_http::{HeaderName, HeaderValue};
#[cfg(all(feature = "ws", not(feature = "http")))]
use mcpwire_ws::{HeaderName, HeaderValue};

use crate::server::Server;

/// A [`Resolver`] reading variables from `env` that accepts every transport
/// this build of mcpwire can reach: stdio and HTTP, and WebSocket with the
/// `ws` feature. Without it a `ws` or `websocket` entry fails to resolve
/// with [`ResolveError::UnsupportedTransport`](mcpwire_config::ResolveError::UnsupportedTransport),
/// as with [`Resolver::new`].
pub fn config_resolver(env: &dyn Environment) -> Resolver<'_> {
    let resolver = Resolver::new(env);
    #[cfg(feature = "ws")]
    let resolver = resolver.accept(TransportKind::WebSocket);
    resolver
}

/// Why a resolved entry cannot become a [`Server`] here.
#[derive(Debug)]
enum Unusable {
    /// The transport's feature is off in this build.
    Transport { server: String, kind: TransportKind },
    /// A header name or value is not valid HTTP. The value is not kept: it
    /// may be a credential.
    #[cfg(any(feature = "http", feature = "ws"))]
    Header { server: String, name: String },
    /// `env` unsets a variable the process would inherit, which the stdio
    /// transport cannot do (it passes only a safe allow-list anyway).
    #[cfg(feature = "stdio")]
    Unset { server: String, variable: String },
}

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unusable::Transport { server, kind } => write!(
                f,
                "server {server:?}: this build of mcpwire cannot reach {kind} servers \
                 (enable the feature)"
            ),
            #[cfg(any(feature = "http", feature = "ws"))]
            Unusable::Header { server, name } => {
                write!(f, "server {server:?}: header {name:?} is not valid HTTP")
            }
            #[cfg(feature = "stdio")]
            Unusable::Unset { server, variable } => write!(
                f,
                "server {server:?}: cannot unset {variable}, which a spawned server inherits"
            ),
        }
    }
}

impl std::error::Error for Unusable {}

impl TryFrom<&ResolvedServer> for Server {
    type Error = Error;

    /// The server `resolved` describes: a spawned command, an HTTP URL (in
    /// its mode: automatic, Streamable HTTP or legacy SSE) or a WebSocket
    /// URL, with its headers or environment. A transport whose feature is
    /// off, a header that is not valid HTTP, or an unset variable the
    /// process would inherit is a [connect error](crate::ErrorKind::Connect).
    fn try_from(resolved: &ResolvedServer) -> Result<Server, Error> {
        let name = resolved.name.as_str();
        match &resolved.transport {
            #[cfg(feature = "stdio")]
            ResolvedTransport::Stdio(stdio) => self::stdio(name, stdio),
            #[cfg(feature = "http")]
            ResolvedTransport::Http { remote, mode } => http(name, remote, *mode),
            #[cfg(feature = "ws")]
            ResolvedTransport::WebSocket(remote) => ws(name, remote),
            other => Err(Error::connect(Unusable::Transport {
                server: name.to_owned(),
                kind: kind_of(other),
            })),
        }
    }
}

fn kind_of(transport: &ResolvedTransport) -> TransportKind {
    match transport {
        ResolvedTransport::Stdio(_) => TransportKind::Stdio,
        ResolvedTransport::WebSocket(_) => TransportKind::WebSocket,
        _ => TransportKind::Http,
    }
}

#[cfg(feature = "stdio")]
fn stdio(name: &str, stdio: &mcpwire_config::ResolvedStdio) -> Result<Server, Error> {
    let mut config = mcpwire_stdio::StdioConfig::new(&stdio.command).args(&stdio.args);
    for (key, value) in &stdio.env {
        match value {
            Some(value) => config = config.env(key, value),
            // Not passed anyway unless it is on the allow-list.
            None if !mcpwire_stdio::SAFE_ENV_VARS.contains(&key.as_str()) => {}
            None => {
                return Err(Error::connect(Unusable::Unset {
                    server: name.to_owned(),
                    variable: key.clone(),
                }));
            }
        }
    }
    if let Some(cwd) = &stdio.cwd {
        config = config.cwd(cwd);
    }
    Ok(Server::stdio(config))
}

/// The entry's headers, parsed.
#[cfg(any(feature = "http", feature = "ws"))]
fn headers(name: &str, remote: &ResolvedRemote) -> Result<Vec<(HeaderName, HeaderValue)>, Error> {
    remote
        .headers
        .iter()
        .map(|(key, value)| {
            let parsed = HeaderName::try_from(key.as_str())
                .ok()
                .zip(HeaderValue::try_from(value.as_str()).ok());
            parsed.ok_or_else(|| {
                Error::connect(Unusable::Header {
                    server: name.to_owned(),
                    name: key.clone(),
                })
            })
        })
        .collect()
}

#[cfg(feature = "http")]
fn http(
    name: &str,
    remote: &ResolvedRemote,
    mode: mcpwire_config::HttpMode,
) -> Result<Server, Error> {
    use mcpwire_config::HttpMode as Configured;
    use mcpwire_http::{HttpConfig, HttpMode};
    let mut config = HttpConfig::new();
    for (key, value) in headers(name, remote)? {
        config = config.header(key, value);
    }
    let server = Server::http(&remote.url).config(config);
    let server = match mode {
        Configured::Streamable => server.mode(HttpMode::StreamableHttp),
        Configured::Sse => server.mode(HttpMode::LegacySse),
        // Automatic: Streamable HTTP, falling back to legacy SSE.
        _ => server,
    };
    Ok(server.into())
}

#[cfg(feature = "ws")]
fn ws(name: &str, remote: &ResolvedRemote) -> Result<Server, Error> {
    let mut config = mcpwire_ws::WsConfig::new();
    for (key, value) in headers(name, remote)? {
        config = config.header(key, value);
    }
    Ok(Server::ws(&remote.url).config(config).into())
}
