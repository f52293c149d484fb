//! Where an MCP server is and how to reach it: [`Server`], a URL or a local
//! command, made into a transport factory so a client can reconnect.

#[cfg(feature = "stdio")]
use std::ffi::OsString;
use std::fmt;

use mcpwire_client::{Error, TransportFactory};
#[cfg(feature = "http")]
use mcpwire_http::{HttpClient, HttpConfig, HttpMode, HttpTransport};
#[cfg(feature = "stdio")]
use mcpwire_stdio::{StdioConfig, StdioTransport};
use mcpwire_transport::Transport;

/// An MCP server to connect to: a URL ([`Server::http`]) or a local command
/// ([`Server::stdio`], [`Server::command`]). [`connect`](crate::connect)
/// takes one; so does anything that holds many servers.
///
/// Each (re)connection opens a fresh transport from it: a server process is
/// spawned again, an HTTP session is started again (over the same pooled
/// connections).
#[derive(Clone)]
pub struct Server {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    #[cfg(feature = "http")]
    Http(Box<HttpServer>),
    #[cfg(feature = "stdio")]
    Stdio(Box<StdioConfig>),
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            #[cfg(feature = "http")]
            Kind::Http(ref h) => h.fmt(f),
            #[cfg(feature = "stdio")]
            Kind::Stdio(ref s) => f.debug_tuple("Server::Stdio").field(s).finish(),
        }
    }
}

impl Server {
    /// A server reached over HTTP at `url`: Streamable HTTP, or legacy
    /// HTTP+SSE if that is all it speaks (decided on the first connection
    /// and remembered). Options go on the returned [`HttpServer`].
    #[cfg(feature = "http")]
    pub fn http(url: impl Into<String>) -> HttpServer {
        HttpServer {
            url: url.into(),
            client: ClientChoice::New(Box::new(HttpConfig::new())),
            mode: None,
        }
    }

    /// A server spawned from `config` and reached over its stdin and stdout.
    #[cfg(feature = "stdio")]
    pub fn stdio(config: StdioConfig) -> Server {
        Server {
            kind: Kind::Stdio(Box::new(config)),
        }
    }

    /// A server spawned as `program` with `args` (no shell; the safe
    /// environment allow-list of [`StdioConfig`]).
    #[cfg(feature = "stdio")]
    pub fn command<I, S>(program: impl Into<OsString>, args: I) -> Server
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Server::stdio(StdioConfig::new(program).args(args))
    }

    /// A factory that opens a new transport to this server on each call:
    /// what [`Client::connect_with`](mcpwire_client::Client::connect_with)
    /// and [`Client::start`](mcpwire_client::Client::start) take. Fails only
    /// if an HTTP client cannot be built from its configuration.
    pub fn factory(self) -> Result<TransportFactory, Error> {
        match self.kind {
            #[cfg(feature = "http")]
            Kind::Http(h) => h.factory(),
            #[cfg(feature = "stdio")]
            Kind::Stdio(config) => Ok(stdio_factory(*config)),
        }
    }
}

#[cfg(feature = "stdio")]
impl From<StdioConfig> for Server {
    fn from(config: StdioConfig) -> Self {
        Server::stdio(config)
    }
}

#[cfg(feature = "stdio")]
fn stdio_factory(config: StdioConfig) -> TransportFactory {
    Box::new(move || {
        let config = config.clone();
        Box::pin(async move {
            match StdioTransport::spawn(config).await {
                Ok(t) => Ok(Box::new(t) as Box<dyn Transport>),
                Err(e) => Err(Error::connect(e)),
            }
        })
    })
}

/// A server reached over HTTP, with its options; made by
/// [`Server::http`], and a [`Server`] once converted (`.into()`, or passed
/// to [`connect`](crate::connect)).
#[cfg(feature = "http")]
#[derive(Clone)]
#[must_use]
pub struct HttpServer {
    url: String,
    client: ClientChoice,
    mode: Option<HttpMode>,
}

#[cfg(feature = "http")]
#[derive(Clone)]
enum ClientChoice {
    /// A client of its own, built from this configuration.
    New(Box<HttpConfig>),
    /// A client shared with other servers: one connection pool.
    Shared(HttpClient),
}

#[cfg(feature = "http")]
impl fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server::Http")
            .field("url", &self.url)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "http")]
impl HttpServer {
    /// The HTTP configuration (timeouts, TLS roots, headers, proxy, retry
    /// policy) of a client made for this server alone. Default:
    /// [`HttpConfig::new`]. Ignored with [`client`](Self::client).
    pub fn config(mut self, config: HttpConfig) -> Self {
        self.client = ClientChoice::New(Box::new(config));
        self
    }

    /// Shares `client` (its connection pool and its per-URL memory of the
    /// fallback) with other servers, instead of making one; the client's own
    /// configuration applies.
    pub fn client(mut self, client: HttpClient) -> Self {
        self.client = ClientChoice::Shared(client);
        self
    }

    /// Speaks `mode` without the automatic fallback's probe. Default: decided
    /// by the server (Streamable HTTP, or legacy HTTP+SSE on 400, 404 or 405).
    pub fn mode(mut self, mode: HttpMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn factory(self) -> Result<TransportFactory, Error> {
        let client = match self.client {
            ClientChoice::Shared(client) => client,
            ClientChoice::New(config) => HttpClient::new(*config).map_err(Error::connect)?,
        };
        let (url, mode) = (self.url, self.mode);
        Ok(Box::new(move || {
            let opened = match mode {
                None => HttpTransport::connect(&client, &url),
                Some(HttpMode::LegacySse) => HttpTransport::legacy_sse(&client, &url),
                Some(HttpMode::ReceiveOnlySse) => HttpTransport::receive_only_sse(&client, &url),
                Some(_) => HttpTransport::streamable(&client, &url),
            };
            let opened = opened
                .map(|t| Box::new(t) as Box<dyn Transport>)
                .map_err(Error::connect);
            Box::pin(std::future::ready(opened))
        }))
    }
}

#[cfg(feature = "http")]
impl From<HttpServer> for Server {
    fn from(http: HttpServer) -> Self {
        Server {
            kind: Kind::Http(Box::new(http)),
        }
    }
}
