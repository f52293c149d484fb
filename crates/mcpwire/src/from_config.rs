//! From the configuration files users already have to servers:
//! [`config_resolver`] resolves entries of the transports this build can
//! reach, and [`Transports`] makes each resolved entry a [`Server`] (a
//! single one also converts with `Server::try_from`).
//!
//! Only how to reach the server is taken from the entry; its policy
//! (enabled, timeouts, tool filters) is for whoever holds many servers (the
//! manager).

use std::fmt;

use mcpwire_client::Error as ClientError;
#[cfg(feature = "http")]
use mcpwire_config::HttpMode as ConfigMode;
#[cfg(any(feature = "http", feature = "ws"))]
use mcpwire_config::ResolvedRemote;
#[cfg(feature = "ws")]
use mcpwire_config::TransportKind;
use mcpwire_config::{Environment, ResolvedServer, ResolvedTransport, Resolver};
#[cfg(feature = "http")]
use mcpwire_http::{HttpClient, HttpConfig, HttpMode};
// The same `http` crate types, re-exported by either transport.
#[cfg(feature = "http")]
use mcpwire_http::{HeaderName, HeaderValue};
#[cfg(feature = "stdio")]
use mcpwire_stdio::{InheritEnv, StdioConfig};
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

impl TryFrom<&ResolvedServer> for Server {
    type Error = ClientError;

    /// The server `resolved` describes, as [`Transports::new`] makes it (a
    /// stdio command, an HTTP URL in its mode, a WebSocket URL). To make
    /// many, build one [`Transports`]: its HTTP servers share a connection
    /// pool.
    fn try_from(resolved: &ResolvedServer) -> Result<Server, ClientError> {
        Transports::new()?.server(resolved)
    }
}

/// Makes a [`Server`] of each configuration entry (the manager's connector,
/// with the `manager` feature): a stdio entry becomes a [`StdioConfig`] (command, arguments, environment with removals,
/// working directory), an HTTP entry an HTTP [`Server`] (URL, headers, the
/// mode: Streamable HTTP, legacy HTTP+SSE, or the automatic fallback) on
/// one shared [`HttpClient`], so every HTTP server of the fleet shares one
/// connection pool, and a WebSocket entry a WebSocket [`Server`] (with the
/// `ws` feature; without it, an error naming the transport).
#[derive(Clone)]
pub struct Transports {
    #[cfg(feature = "http")]
    http: HttpClient,
    #[cfg(feature = "stdio")]
    inherit_env: InheritEnv,
}

impl fmt::Debug for Transports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transports").finish_non_exhaustive()
    }
}

impl Transports {
    /// Stdio servers get the safe environment allow-list plus their
    /// entry's variables; HTTP servers share one [`HttpClient`] with the
    /// default [`HttpConfig`]. Fails only if that client cannot be built
    /// (an unusable TLS root store).
    pub fn new() -> Result<Self, ClientError> {
        Ok(Self {
            #[cfg(feature = "http")]
            http: HttpClient::new(HttpConfig::new()).map_err(ClientError::connect)?,
            #[cfg(feature = "stdio")]
            inherit_env: InheritEnv::SafeList,
        })
    }

    /// Shares `client` (its pool, TLS roots, proxy, retry policy) among the
    /// HTTP servers instead. Each server's own headers are added to it.
    #[cfg(feature = "http")]
    pub fn http_client(mut self, client: HttpClient) -> Self {
        self.http = client;
        self
    }

    /// What stdio servers inherit of this process's environment. Default:
    /// [`InheritEnv::SafeList`]; their entry's `env` comes on top, and a
    /// `null` value in it removes an inherited variable. Some clients pass
    /// their whole environment; [`InheritEnv::All`] does that, at the cost
    /// of handing every secret in it to every server.
    #[cfg(feature = "stdio")]
    pub fn inherit_env(mut self, inherit: InheritEnv) -> Self {
        self.inherit_env = inherit;
        self
    }

    /// The [`Server`] a resolved entry describes.
    pub fn server(&self, resolved: &ResolvedServer) -> Result<Server, ClientError> {
        let name = &resolved.name;
        match &resolved.transport {
            #[cfg(feature = "stdio")]
            ResolvedTransport::Stdio(stdio) => {
                let mut config = StdioConfig::new(&stdio.command)
                    .args(&stdio.args)
                    .inherit_env(self.inherit_env);
                for (key, value) in &stdio.env {
                    config = match value {
                        Some(value) => config.env(key, value),
                        None => config.env_remove(key),
                    };
                }
                if let Some(cwd) = &stdio.cwd {
                    config = config.cwd(cwd);
                }
                Ok(Server::stdio(config))
            }
            #[cfg(feature = "http")]
            ResolvedTransport::Http { remote, mode } => self.http_server(name, remote, *mode),
            #[cfg(feature = "ws")]
            ResolvedTransport::WebSocket(remote) => ws_server(name, remote),
            other => Err(ClientError::connect(UnusableEntry::UnsupportedTransport {
                server: name.clone(),
                kind: match other {
                    ResolvedTransport::Stdio(_) => "stdio",
                    ResolvedTransport::Http { .. } => "http",
                    _ => "websocket",
                },
            })),
        }
    }

    #[cfg(feature = "http")]
    fn http_server(
        &self,
        name: &str,
        remote: &ResolvedRemote,
        mode: ConfigMode,
    ) -> Result<Server, ClientError> {
        let headers = headers(name, remote)?;
        let client = if headers.is_empty() {
            self.http.clone()
        } else {
            self.http.with_headers(headers)
        };
        let server = Server::http(&remote.url).client(client);
        Ok(match mode {
            ConfigMode::Streamable => server.mode(HttpMode::StreamableHttp),
            ConfigMode::Sse => server.mode(HttpMode::LegacySse),
            _ => server,
        }
        .into())
    }
}

/// The entry's headers, parsed, their values marked sensitive.
#[cfg(any(feature = "http", feature = "ws"))]
fn headers(
    name: &str,
    remote: &ResolvedRemote,
) -> Result<Vec<(HeaderName, HeaderValue)>, ClientError> {
    let mut headers = Vec::with_capacity(remote.headers.len());
    for (key, value) in &remote.headers {
        let invalid = || {
            // The value may be a credential: only the name is told.
            ClientError::connect(UnusableEntry::InvalidHeader {
                server: name.to_owned(),
                header: key.clone(),
            })
        };
        let key = HeaderName::from_bytes(key.as_bytes()).map_err(|_| invalid())?;
        let mut value = HeaderValue::from_str(value).map_err(|_| invalid())?;
        value.set_sensitive(true);
        headers.push((key, value));
    }
    Ok(headers)
}

#[cfg(feature = "ws")]
fn ws_server(name: &str, remote: &ResolvedRemote) -> Result<Server, ClientError> {
    let mut config = mcpwire_ws::WsConfig::new();
    for (key, value) in headers(name, remote)? {
        config = config.header(key, value);
    }
    Ok(Server::ws(&remote.url).config(config).into())
}

/// Why a configuration entry cannot be turned into a [`Server`]: the
/// cause of the client [`Error`](crate::Error) (kind `Connect`) that
/// [`Transports`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnusableEntry {
    /// No transport of this kind in this build (stdio, HTTP or WebSocket
    /// without its feature).
    UnsupportedTransport {
        /// The server.
        server: String,
        /// `websocket`, `stdio` or `http`.
        kind: &'static str,
    },
    /// A header name or value cannot be sent over HTTP.
    InvalidHeader {
        /// The server.
        server: String,
        /// The header's name (its value is not shown: it may be a secret).
        header: String,
    },
}

impl fmt::Display for UnusableEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnusableEntry::UnsupportedTransport { server, kind } => write!(
                f,
                "server {server:?} needs the {kind} transport, which this build does not have"
            ),
            UnusableEntry::InvalidHeader { server, header } => write!(
                f,
                "server {server:?}: header {header:?} is not a valid HTTP header name or value"
            ),
        }
    }
}

impl std::error::Error for UnusableEntry {}
