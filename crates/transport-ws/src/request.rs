//! The WebSocket upgrade request: the one place where it is built, so every
//! header that reaches the server (ours, the caller's, later the
//! authorization layer's) is added here.

use http::header::{SEC_WEBSOCKET_PROTOCOL, USER_AGENT};
use http::{HeaderName, HeaderValue, Uri};
use mcpwire_transport::ConnectError;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Request;

use crate::{Error, WsConfig};

/// The subprotocol MCP servers select: the Python SDK's server accepts with
/// it, the TypeScript SDK's client asks for it.
pub(crate) const SUBPROTOCOL: &str = "mcp";

/// Where to connect: the parsed URL and what the connection needs from it.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) uri: Uri,
    pub(crate) tls: bool,
    /// The host as TLS and DNS want it (no IPv6 brackets).
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl Target {
    /// The URL without credentials or query (either may carry a secret),
    /// for `Debug` and [`TransportInfo`](mcpwire_transport::TransportInfo).
    pub(crate) fn redacted(&self) -> String {
        let scheme = if self.tls { "wss" } else { "ws" };
        let host = self.uri.host().unwrap_or_default();
        let port = self.uri.port().map(|p| format!(":{p}")).unwrap_or_default();
        format!("{scheme}://{host}{port}{}", self.uri.path())
    }

    /// Parses a `ws://` or `wss://` URL.
    pub(crate) fn parse(url: &str) -> Result<Self, Error> {
        let invalid = |source: Box<dyn std::error::Error + Send + Sync>| ConnectError::InvalidUrl {
            url: url.to_owned(),
            source,
        };
        let uri: Uri = url.parse().map_err(|e| invalid(Box::new(e)))?;
        let tls = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("ws") => false,
            Some(s) if s.eq_ignore_ascii_case("wss") => true,
            Some(other) => {
                return Err(ConnectError::UnsupportedScheme {
                    scheme: other.to_owned(),
                    expected: "ws or wss",
                }
                .into());
            }
            None => return Err(invalid("not an absolute URL".into()).into()),
        };
        let host = uri
            .host()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| invalid("no host".into()))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        Ok(Self {
            uri,
            tls,
            host,
            port,
        })
    }
}

/// The headers the handshake itself owns; a caller's header of one of these
/// names would make the request invalid, so it is skipped.
fn owned_by_handshake(name: &HeaderName) -> bool {
    let name = name.as_str();
    matches!(name, "host" | "connection" | "upgrade") || name.starts_with("sec-websocket-")
}

/// Builds the upgrade request for `target`: the handshake's own headers,
/// `Sec-WebSocket-Protocol: mcp`, the user agent, then the configured
/// headers.
pub(crate) fn upgrade_request(target: &Target, config: &WsConfig) -> Result<Request, Error> {
    let mut request =
        target
            .uri
            .clone()
            .into_client_request()
            .map_err(|e| ConnectError::InvalidUrl {
                url: target.uri.to_string(),
                source: Box::new(e),
            })?;
    let headers = request.headers_mut();
    headers.insert(
        SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(SUBPROTOCOL),
    );
    headers.insert(USER_AGENT, config.user_agent.clone());
    for (name, value) in &config.headers {
        if !owned_by_handshake(name) {
            headers.insert(name, value.clone());
        }
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_ports_defaulted() {
        let t = Target::parse("wss://example.com/mcp").unwrap();
        assert!(t.tls);
        assert_eq!((t.host.as_str(), t.port), ("example.com", 443));
        let t = Target::parse("ws://[::1]:8080/ws?x=1").unwrap();
        assert!(!t.tls);
        assert_eq!((t.host.as_str(), t.port), ("::1", 8080));
        assert!(matches!(
            Target::parse("http://example.com/"),
            Err(Error::Connect(ConnectError::UnsupportedScheme { scheme, .. })) if scheme == "http"
        ));
        assert!(matches!(
            Target::parse("/relative"),
            Err(Error::Connect(ConnectError::InvalidUrl { .. }))
        ));
        let t = Target::parse("wss://user:secret@example.com:8443/mcp?token=s3").unwrap();
        assert_eq!(t.redacted(), "wss://example.com:8443/mcp");
        assert!(matches!(
            Target::parse("ws://exa mple/"),
            Err(Error::Connect(ConnectError::InvalidUrl { .. }))
        ));
    }

    #[test]
    fn the_request_asks_for_mcp_and_carries_the_configured_headers() {
        let config = WsConfig::new()
            .header(
                HeaderName::from_static("authorization"),
                HeaderValue::from_static("Bearer t"),
            )
            .header(
                HeaderName::from_static("sec-websocket-protocol"),
                HeaderValue::from_static("other"),
            )
            .header(
                HeaderName::from_static("host"),
                HeaderValue::from_static("evil"),
            );
        let target = Target::parse("ws://127.0.0.1:9/mcp").unwrap();
        let request = upgrade_request(&target, &config).unwrap();
        let h = request.headers();
        assert_eq!(h["sec-websocket-protocol"], "mcp");
        assert_eq!(h["authorization"], "Bearer t");
        assert_eq!(h["host"], "127.0.0.1:9");
        assert_eq!(h.get_all("host").iter().count(), 1);
        assert!(h["user-agent"].to_str().unwrap().starts_with("mcpwire/"));
        assert_eq!(request.uri().path(), "/mcp");
    }
}
