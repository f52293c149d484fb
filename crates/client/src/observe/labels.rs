//! What the client's spans and metrics say of a request beyond its method
//! (the tool or prompt it names) and of the connection under it (its
//! transport, the server's address, the protocol version), in the terms of
//! the OpenTelemetry semantic conventions for MCP.

use std::sync::Arc;

use mcpwire_transport::TransportInfo;

use crate::base::lock::RwLock;
use crate::base::stamp::Route;

/// What one connection's spans and metrics say of its transport and
/// session, learned when it opens and when its handshake ends.
#[derive(Debug, Default)]
pub(crate) struct Peer {
    /// `network.transport`: `pipe` for stdio, `tcp` for HTTP.
    pub(crate) transport: Option<&'static str>,
    /// `network.protocol.name`: `http`, `websocket`.
    pub(crate) protocol: Option<&'static str>,
    /// `server.address` and `server.port`, from the URL.
    pub(crate) address: Option<(Arc<str>, u16)>,
    /// `mcpwire.server.name`: the name the user gave the server
    /// ([`ClientConfig::server_label`](crate::ClientConfig::server_label)).
    pub(crate) label: Option<Arc<str>>,
    /// `mcp.protocol.version`, once the handshake settled it.
    version: RwLock<Option<Arc<str>>>,
    /// `mcp.session.id`: the transport's session (Streamable HTTP in the
    /// `initialize` era), once the handshake made one.
    session: RwLock<Option<Arc<str>>>,
}

impl Peer {
    /// The transport's facts, from what it says of itself.
    pub(crate) fn from_info(info: &TransportInfo, label: Option<Arc<str>>) -> Self {
        let (transport, protocol) = match info.kind {
            "stdio" => (Some("pipe"), None),
            "websocket" => (Some("tcp"), Some("websocket")),
            "streamable-http" | "http" | "sse" => (Some("tcp"), Some("http")),
            _ => (None, None),
        };
        let address = protocol.and_then(|_| host_and_port(&info.peer));
        Self {
            transport,
            protocol,
            address,
            label,
            version: RwLock::new(None),
            session: RwLock::new(None),
        }
    }

    pub(crate) fn set_version(&self, version: &str) {
        self.declare_version(Some(version));
    }

    /// Takes the session id the transport reports (its `session-id`
    /// detail), or forgets the old one.
    pub(crate) fn set_session(&self, info: &TransportInfo) {
        let id = info
            .details
            .iter()
            .find(|(k, _)| k == "session-id")
            .map(|(_, v)| Arc::from(v.as_str()));
        *self.session.write() = id;
    }

    pub(crate) fn session(&self) -> Option<Arc<str>> {
        self.session.read().clone()
    }

    /// The version requests declare from now on, if any.
    pub(crate) fn declare_version(&self, version: Option<&str>) {
        *self.version.write() = version.map(Arc::from);
    }

    pub(crate) fn version(&self) -> Option<Arc<str>> {
        self.version.read().clone()
    }
}

/// The host and port of an `http(s)` or `ws(s)` URL, the port defaulted by
/// its scheme.
fn host_and_port(url: &str) -> Option<(Arc<str>, u16)> {
    let uri: http::Uri = url.parse().ok()?;
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().or(match uri.scheme_str()? {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    })?;
    Some((Arc::from(host), port))
}

/// What a request is about, beyond its method: the tool or prompt named in
/// the span's name and its metrics, or the resource read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Subject {
    Tool(Arc<str>),
    Prompt(Arc<str>),
    Resource,
    None,
}

impl Subject {
    pub(crate) fn of(method: &str, route: Option<&Route>) -> Self {
        let name = route.and_then(|r| r.name.as_deref());
        match (method, name) {
            ("tools/call", Some(n)) => Self::Tool(Arc::from(n)),
            ("prompts/get", Some(n)) => Self::Prompt(Arc::from(n)),
            ("resources/read" | "resources/subscribe" | "resources/unsubscribe", Some(_)) => {
                Self::Resource
            }
            _ => Self::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_gives_its_host_and_the_port_its_scheme_implies() {
        assert_eq!(
            host_and_port("https://example.com/mcp"),
            Some(("example.com".into(), 443))
        );
        assert_eq!(
            host_and_port("http://127.0.0.1:8080/mcp"),
            Some(("127.0.0.1".into(), 8080))
        );
        assert_eq!(host_and_port("ws://[::1]/x"), Some(("::1".into(), 80)));
        assert_eq!(host_and_port("npx server"), None);
    }

    #[test]
    fn each_transport_names_its_network_transport_and_protocol() {
        let stdio = Peer::from_info(&TransportInfo::new("stdio", "npx server"), None);
        assert_eq!((stdio.transport, stdio.protocol), (Some("pipe"), None));
        assert_eq!(stdio.address, None);
        let http = Peer::from_info(
            &TransportInfo::new("streamable-http", "http://h:9/mcp"),
            None,
        );
        assert_eq!((http.transport, http.protocol), (Some("tcp"), Some("http")));
        assert_eq!(http.address, Some(("h".into(), 9)));
        let ws = Peer::from_info(&TransportInfo::new("websocket", "wss://h/mcp"), None);
        assert_eq!(
            (ws.transport, ws.protocol),
            (Some("tcp"), Some("websocket"))
        );
        let memory = Peer::from_info(&TransportInfo::new("memory", "in-memory peer"), None);
        assert_eq!((memory.transport, memory.protocol), (None, None));
    }
}
