//! The rustls client configuration both network transports build (feature
//! `tls`): which roots to trust, on the ring provider, with the safe
//! default protocol versions. Each transport adds its own ALPN list.

use std::sync::Arc;

/// The error of [`client_config`]: a root that does not parse, a platform
/// root store with no usable certificate, or a provider rustls refuses.
pub type TlsError = Box<dyn std::error::Error + Send + Sync>;

/// The roots a client trusts.
#[derive(Debug, Clone, Copy)]
pub struct Roots<'a> {
    /// The Mozilla roots (`webpki-roots`).
    pub webpki: bool,
    /// The platform's root store (`rustls-native-certs`).
    pub native: bool,
    /// Extra roots, DER-encoded.
    pub extra: &'a [Vec<u8>],
}

/// A rustls client configuration trusting `roots` and offering `alpn`.
pub fn client_config(
    roots: Roots<'_>,
    alpn: Vec<Vec<u8>>,
) -> Result<rustls::ClientConfig, TlsError> {
    let mut store = rustls::RootCertStore::empty();
    if roots.webpki {
        store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    if roots.native {
        let found = rustls_native_certs::load_native_certs();
        let (added, _ignored) = store.add_parsable_certificates(found.certs);
        if added == 0 {
            let why = found
                .errors
                .first()
                .map_or_else(|| "no certificates found".to_owned(), ToString::to_string);
            return Err(format!("platform root store unusable: {why}").into());
        }
    }
    for der in roots.extra {
        store.add(rustls::pki_types::CertificateDer::from(der.clone()))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(store)
        .with_no_client_auth();
    tls.alpn_protocols = alpn;
    Ok(tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusts_the_roots_asked_for_and_refuses_a_bad_one() {
        let none = Roots {
            webpki: false,
            native: false,
            extra: &[],
        };
        let tls = client_config(
            Roots {
                webpki: true,
                ..none
            },
            vec![b"h2".to_vec()],
        )
        .unwrap();
        assert_eq!(tls.alpn_protocols, vec![b"h2".to_vec()]);
        let bad = [vec![1, 2, 3]];
        assert!(
            client_config(
                Roots {
                    extra: &bad,
                    ..none
                },
                Vec::new()
            )
            .is_err()
        );
    }
}
