//! The rustls client configuration for `wss` URLs, with the same root-store
//! choices as the HTTP transport.

use std::sync::Arc;

use crate::{Error, WsConfig};

/// Builds the TLS configuration: webpki roots and/or the platform's, plus
/// any extra roots; ALPN offers only `http/1.1`, the one HTTP version a
/// WebSocket upgrade runs over here.
pub(crate) fn client_config(config: &WsConfig) -> Result<Arc<rustls::ClientConfig>, Error> {
    let mut roots = rustls::RootCertStore::empty();
    if config.webpki_roots {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    if config.native_roots {
        let found = rustls_native_certs::load_native_certs();
        let (added, _ignored) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            let why = found
                .errors
                .first()
                .map_or_else(|| "no certificates found".to_owned(), ToString::to_string);
            return Err(Error::Tls(
                format!("platform root store unusable: {why}").into(),
            ));
        }
    }
    for der in &config.extra_roots {
        roots
            .add(rustls::pki_types::CertificateDer::from(der.clone()))
            .map_err(|e| Error::Tls(Box::new(e)))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(Box::new(e)))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(tls))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_extra_root_is_a_tls_error() {
        let config = WsConfig::new().add_root_certificate(vec![1, 2, 3]);
        assert!(matches!(client_config(&config), Err(Error::Tls(_))));
        let tls = client_config(&WsConfig::new()).unwrap();
        assert_eq!(tls.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }
}
