//! The TLS side of a client's connections, made when it is first needed.

use std::sync::{Arc, OnceLock};

use mcpwire_transport::ConnectError;
use mcpwire_transport::tls::{self, Roots};
use tokio_rustls::TlsConnector;

use crate::config::{Http2, HttpConfig};
use crate::error::Error;

/// How a client's connector gets its TLS configuration.
///
/// On the default roots (the Mozilla roots, nothing added) it is made at
/// the first `https` connection, and once per process (see
/// [`default_config`]): a client that only reaches `http` URLs, as with a
/// local server, never loads the root store, whose code and data otherwise
/// stay resident in the process. Any other roots are loaded when the client
/// is made, so a bad root or an unusable platform store is refused then.
#[derive(Clone)]
pub(crate) enum TlsSetup {
    Ready(TlsConnector),
    Default {
        h2_only: bool,
        made: Arc<OnceLock<TlsConnector>>,
    },
}

impl TlsSetup {
    /// The setup `config` asks for; loads its roots now unless they are the
    /// default ones.
    pub(crate) fn of(config: &HttpConfig) -> Result<Self, Error> {
        let h2_only = config.http2 == Http2::PriorKnowledge;
        if config.webpki_roots && !config.native_roots && config.extra_roots.is_empty() {
            return Ok(Self::Default {
                h2_only,
                made: Arc::new(OnceLock::new()),
            });
        }
        let roots = Roots {
            webpki: config.webpki_roots,
            native: config.native_roots,
            extra: &config.extra_roots,
        };
        let made = build(roots, h2_only)?;
        Ok(Self::Ready(TlsConnector::from(Arc::new(made))))
    }

    /// The connector of an `https` connection.
    pub(crate) fn connector(&self) -> Result<TlsConnector, Error> {
        match self {
            Self::Ready(tls) => Ok(tls.clone()),
            Self::Default { h2_only, made } => {
                if let Some(tls) = made.get() {
                    return Ok(tls.clone());
                }
                let tls = TlsConnector::from(default_config(*h2_only)?);
                Ok(made.get_or_init(|| tls).clone())
            }
        }
    }

    /// Whether the TLS configuration is loaded yet.
    #[cfg(test)]
    pub(crate) fn is_loaded(&self) -> bool {
        match self {
            Self::Ready(_) => true,
            Self::Default { made, .. } => made.get().is_some(),
        }
    }
}

/// The TLS configuration on the default roots: one per process, so a
/// gateway that builds a client per server pays for the root store and the
/// session cache once, not per client. Clients on the default roots share
/// the TLS session cache, as clones of one client do: a resumed session
/// carries no credentials of ours.
fn default_config(h2_only: bool) -> Result<Arc<rustls::ClientConfig>, Error> {
    static DEFAULT: [OnceLock<Arc<rustls::ClientConfig>>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = &DEFAULT[usize::from(h2_only)];
    if let Some(tls) = slot.get() {
        return Ok(tls.clone());
    }
    let roots = Roots {
        webpki: true,
        native: false,
        extra: &[],
    };
    let tls = Arc::new(build(roots, h2_only)?);
    Ok(slot.get_or_init(|| tls).clone())
}

fn build(roots: Roots<'_>, h2_only: bool) -> Result<rustls::ClientConfig, Error> {
    let alpn = if h2_only {
        vec![b"h2".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    tls::client_config(roots, alpn).map_err(|e| ConnectError::Tls(e).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_roots_are_loaded_at_the_first_https_connection() {
        let setup = TlsSetup::of(&HttpConfig::default()).unwrap();
        assert!(!setup.is_loaded());
        let clone = setup.clone();
        let first = setup.connector().unwrap();
        assert!(setup.is_loaded());
        assert!(clone.is_loaded(), "shared with the client's clones");
        let again = clone.connector().unwrap();
        assert!(Arc::ptr_eq(first.config(), again.config()));
        // One configuration per process for the default roots.
        let other = TlsSetup::of(&HttpConfig::default()).unwrap();
        assert!(Arc::ptr_eq(
            first.config(),
            other.connector().unwrap().config()
        ));
        let h2 = TlsSetup::of(&HttpConfig::default().http2(Http2::PriorKnowledge)).unwrap();
        let h2 = h2.connector().unwrap();
        assert!(!Arc::ptr_eq(first.config(), h2.config()));
        assert_eq!(h2.config().alpn_protocols, vec![b"h2".to_vec()]);
        assert_eq!(
            first.config().alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }

    #[test]
    fn other_roots_are_loaded_and_checked_when_the_client_is_made() {
        let bad = HttpConfig::default().add_root_certificate(b"not a certificate".to_vec());
        assert!(matches!(
            TlsSetup::of(&bad),
            Err(Error::Connect(ConnectError::Tls(_)))
        ));
        let none = HttpConfig::default().webpki_roots(false);
        let setup = TlsSetup::of(&none).unwrap();
        assert!(setup.is_loaded());
    }
}
