//! [`WsServer`]: a server reached over a WebSocket, with its options.

use std::fmt;
use std::sync::Arc;

use mcpwire_client::{Error, TransportFactory};
use mcpwire_transport::Transport;
use mcpwire_ws::{WsConfig, WsConnector, WsTransport};

/// A server reached over a WebSocket (`ws://` or `wss://`, subprotocol
/// `mcp`), with its options; made by [`Server::ws`](crate::Server::ws), and
/// a [`Server`](crate::Server) once converted (`.into()`, or passed to
/// [`connect`](crate::connect)).
///
/// WebSocket is not an MCP specification transport; this is for the servers
/// and gateways that speak it (the Python SDK 1.x WebSocket server, for
/// one). See `docs/transports.md`.
#[derive(Clone)]
#[must_use]
pub struct WsServer {
    url: String,
    connector: ConnectorChoice,
}

#[derive(Clone)]
enum ConnectorChoice {
    /// A connector of its own, built from this configuration.
    New(Box<WsConfig>),
    /// A connector shared with other servers (its TLS root store is loaded
    /// once).
    Shared(WsConnector),
}

impl fmt::Debug for WsServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server::Ws")
            .field("url", &redacted(&self.url))
            .finish_non_exhaustive()
    }
}

/// The URL without credentials or query, either of which may hold a secret.
fn redacted(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or_default();
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit('@').next().unwrap_or_default();
            format!("{scheme}://{host}{path}")
        }
        None => url.to_owned(),
    }
}

impl WsServer {
    pub(crate) fn new(url: String) -> Self {
        Self {
            url,
            connector: ConnectorChoice::New(Box::new(WsConfig::new())),
        }
    }

    /// The WebSocket configuration (headers, timeouts, keepalive, TLS
    /// roots) of a connector made for this server alone. Default:
    /// [`WsConfig::new`]. Ignored with [`connector`](Self::connector).
    pub fn config(mut self, config: WsConfig) -> Self {
        self.connector = ConnectorChoice::New(Box::new(config));
        self
    }

    /// Shares `connector` with other servers instead of making one; its own
    /// configuration applies.
    pub fn connector(mut self, connector: WsConnector) -> Self {
        self.connector = ConnectorChoice::Shared(connector);
        self
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub(crate) fn factory(self) -> Result<TransportFactory, Error> {
        let connector = match self.connector {
            ConnectorChoice::Shared(connector) => connector,
            ConnectorChoice::New(config) => WsConnector::new(*config).map_err(Error::connect)?,
        };
        let url: Arc<str> = self.url.into();
        Ok(Box::new(move || {
            let (connector, url) = (connector.clone(), url.clone());
            Box::pin(async move {
                WsTransport::connect(&connector, &url)
                    .await
                    .map(|t| Box::new(t) as Box<dyn Transport>)
                    .map_err(Error::connect)
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_credentials_and_query() {
        let server = WsServer::new("wss://user:pw@example.com:8443/ws?token=s3cret#x".into());
        let shown = format!("{server:?}");
        assert!(shown.contains("wss://example.com:8443/ws"), "{shown}");
        assert!(
            !shown.contains("pw") && !shown.contains("s3cret"),
            "{shown}"
        );
        assert_eq!(redacted("ws://h"), "ws://h");
    }
}
