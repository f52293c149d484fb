//! The rustls client configuration for `wss` URLs, with the same root-store
//! choices as the HTTP transport.

use std::sync::Arc;

use mcpwire_transport::ConnectError;
use mcpwire_transport::tls::{self, Roots};

use crate::{Error, WsConfig};

/// Builds the TLS configuration: webpki roots and/or the platform's, plus
/// any extra roots; ALPN offers only `http/1.1`, the one HTTP version a
/// WebSocket upgrade runs over here.
pub(crate) fn client_config(config: &WsConfig) -> Result<Arc<rustls::ClientConfig>, Error> {
    let roots = Roots {
        webpki: config.webpki_roots,
        native: config.native_roots,
        extra: &config.extra_roots,
    };
    tls::client_config(roots, vec![b"http/1.1".to_vec()])
        .map(Arc::new)
        .map_err(|e| ConnectError::Tls(e).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_extra_root_is_a_tls_error() {
        let config = WsConfig::new().add_root_certificate(vec![1, 2, 3]);
        assert!(matches!(
            client_config(&config),
            Err(Error::Connect(ConnectError::Tls(_)))
        ));
        let tls = client_config(&WsConfig::new()).unwrap();
        assert_eq!(tls.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }
}
