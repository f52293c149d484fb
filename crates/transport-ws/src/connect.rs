//! [`WsConnector`]: opens WebSocket connections (TCP, TLS for `wss`, the
//! upgrade with the `mcp` subprotocol), all within the connect timeout.

use std::sync::Arc;

use http::header::{RETRY_AFTER, WWW_AUTHENTICATE};
use mcpwire_transport::{ConnectError, HttpStatus};
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::error::{ProtocolError, SubProtocolError};
use tokio_tungstenite::tungstenite::handshake::client::Response;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, http::HeaderMap};

use crate::request::{Target, upgrade_request};
use crate::{Error, WsConfig};
use mcpwire_transport::tls::TcpOrTls;

/// How much of a refused upgrade's body is kept for diagnostics.
const ERROR_BODY_LIMIT: usize = 1024;

/// Opens WebSocket connections with one [`WsConfig`]; build it once and
/// connect as often as needed (cheap to clone; the TLS configuration, root
/// store included, is built once here).
#[derive(Clone)]
pub struct WsConnector {
    inner: Arc<Inner>,
}

struct Inner {
    config: WsConfig,
    tls: Arc<rustls::ClientConfig>,
}

impl std::fmt::Debug for WsConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsConnector")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl WsConnector {
    /// A connector with `config`. Fails only on a bad TLS configuration (an
    /// extra root that does not parse, an unusable platform root store).
    pub fn new(config: WsConfig) -> Result<Self, Error> {
        let tls = crate::tls::client_config(&config)?;
        Ok(Self {
            inner: Arc::new(Inner { config, tls }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &WsConfig {
        &self.inner.config
    }

    /// Connects to `target` and completes the upgrade, all within the
    /// connect timeout.
    pub(crate) async fn handshake(
        &self,
        target: &Target,
    ) -> Result<WebSocketStream<TcpOrTls>, Error> {
        let config = &self.inner.config;
        let connect = async {
            let tcp = TcpStream::connect((target.host.as_str(), target.port))
                .await
                .map_err(|e| ConnectError::Unreachable(Box::new(e)))?;
            // Small messages (a request, an answer) go out at once.
            let _ = tcp.set_nodelay(true);
            let stream = if target.tls {
                let name = ServerName::try_from(target.host.clone()).map_err(|e| {
                    ConnectError::InvalidUrl {
                        url: target.uri.to_string(),
                        source: Box::new(e),
                    }
                })?;
                let tls = TlsConnector::from(self.inner.tls.clone())
                    .connect(name, tcp)
                    .await
                    .map_err(|e| ConnectError::Unreachable(Box::new(e)))?;
                TcpOrTls::Tls(Box::new(tls))
            } else {
                TcpOrTls::Plain(tcp)
            };
            let request = upgrade_request(target, config)?;
            let (ws, _response) = tokio_tungstenite::client_async_with_config(
                request,
                stream,
                Some(ws_config(config)),
            )
            .await
            .map_err(handshake_error)?;
            Ok(ws)
        };
        match tokio::time::timeout(config.connect_timeout, connect).await {
            Ok(result) => result,
            Err(_) => Err(Error::Timeout),
        }
    }
}

/// tungstenite's limits: a frame or a message over the maximum frame length
/// is refused when its header (or the fragment that passes the limit)
/// arrives, before its payload is buffered.
fn ws_config(config: &WsConfig) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(config.max_frame_len))
        .max_frame_size(Some(config.max_frame_len))
}

/// A refused or broken upgrade, as the typed error a caller can act on.
fn handshake_error(e: tungstenite::Error) -> Error {
    match e {
        tungstenite::Error::Http(response) => Error::Status(Box::new(status(&response))),
        tungstenite::Error::Protocol(ProtocolError::SecWebSocketSubProtocolError(sub)) => match sub
        {
            SubProtocolError::NoSubProtocol => Error::SubprotocolNotSelected,
            _ => Error::SubprotocolMismatch,
        },
        tungstenite::Error::Io(io) => ConnectError::Unreachable(Box::new(io)).into(),
        other => Error::Handshake(other),
    }
}

fn status(response: &Response) -> HttpStatus {
    let mut out = HttpStatus::new(response.status().as_u16());
    let headers: &HeaderMap = response.headers();
    out.www_authenticate = headers
        .get(WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    out.retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(std::time::Duration::from_secs);
    if let Some(body) = response.body() {
        out.body = String::from_utf8_lossy(&body[..body.len().min(ERROR_BODY_LIMIT)]).into_owned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_errors_are_typed() {
        let mut response = Response::new(Some(b"no token".to_vec()));
        *response.status_mut() = http::StatusCode::UNAUTHORIZED;
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, "Bearer realm=\"x\"".parse().unwrap());
        response
            .headers_mut()
            .insert(RETRY_AFTER, "7".parse().unwrap());
        let e = handshake_error(tungstenite::Error::Http(Box::new(response)));
        let s = e.status().expect("a status");
        assert_eq!(s.status, 401);
        assert_eq!(s.www_authenticate.as_deref(), Some("Bearer realm=\"x\""));
        assert_eq!(s.retry_after, Some(std::time::Duration::from_secs(7)));
        assert_eq!(s.body, "no token");
        let sub = |s| {
            handshake_error(tungstenite::Error::Protocol(
                ProtocolError::SecWebSocketSubProtocolError(s),
            ))
        };
        assert!(matches!(
            sub(SubProtocolError::NoSubProtocol),
            Error::SubprotocolNotSelected
        ));
        assert!(matches!(
            sub(SubProtocolError::InvalidSubProtocol),
            Error::SubprotocolMismatch
        ));
        assert!(matches!(
            handshake_error(tungstenite::Error::Protocol(
                ProtocolError::SecWebSocketAcceptKeyMismatch
            )),
            Error::Handshake(_)
        ));
    }
}
