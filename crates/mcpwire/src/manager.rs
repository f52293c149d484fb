//! Many servers at once: everything of `mcpwire-manager`, plus
//! [`Transports`], which turns the entries of configuration files into
//! [`Server`]s (stdio commands, HTTP URLs sharing one connection pool) for
//! the manager to connect.
//!
//! ```no_run
//! use mcpwire::config::{ProcessEnvironment, Resolver};
//! use mcpwire::manager::{Manager, Transports};
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let config = mcpwire::config::load_file("claude_desktop_config.json")?;
//! let manager = Manager::builder()
//!     .config(&config, &Resolver::new(&ProcessEnvironment), &Transports::new()?)?
//!     .build()?;
//! let report = manager.connect_all().await?;
//! println!("{} connected, {} failed", report.connected.len(), report.failed.len());
//! for tool in manager.tools()? {
//!     println!("{}", tool.name);
//! }
//! let answer = manager.call_tool("time__get_current_time", &json!({"timezone": "UTC"})).await?;
//! println!("{}", answer.text());
//! manager.close().await;
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;

use mcpwire_client::Error as ClientError;
#[cfg(feature = "http")]
use mcpwire_config::{HttpMode as ConfigMode, ResolvedRemote};
use mcpwire_config::{ResolvedServer, ResolvedTransport};
#[cfg(feature = "http")]
use mcpwire_http::{HeaderName, HeaderValue, HttpClient, HttpConfig, HttpMode};
pub use mcpwire_manager::*;
#[cfg(feature = "stdio")]
use mcpwire_stdio::{InheritEnv, StdioConfig};

use crate::server::Server;

/// Makes the [`Connector`] of each configuration entry: a stdio entry
/// becomes a [`StdioConfig`] (command, arguments, environment with removals,
/// working directory), an HTTP entry an HTTP [`Server`] (URL, headers, the
/// mode: Streamable HTTP, legacy HTTP+SSE, or the automatic fallback) on
/// one shared [`HttpClient`], so every HTTP server of the fleet shares one
/// connection pool. A WebSocket entry is an error naming the transport
/// (no WebSocket transport in this build).
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

impl Connectors for Transports {
    fn connector(&self, server: &ResolvedServer) -> Result<Connector, ClientError> {
        let server = self.server(server)?;
        Ok(Arc::new(move || server.clone().factory()))
    }
}

/// Why a configuration entry cannot be turned into a [`Server`]: the
/// cause of the client [`Error`](crate::Error) (kind `Connect`) that
/// [`Transports`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnusableEntry {
    /// No transport of this kind in this build (WebSocket; stdio or HTTP
    /// without their feature).
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
