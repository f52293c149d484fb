//! Test certificates: a fresh CA per server and a leaf for `localhost`
//! signed by it, valid or expired.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, date_time_ymd};

/// Which leaf certificate a [`TestTls`] presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TestCert {
    /// Valid now, for `localhost`.
    Valid,
    /// For `localhost`, but expired (valid from 2019 to 2020).
    Expired,
}

/// A TLS acceptor and the certificate of the CA that signed its leaf.
#[derive(Clone)]
pub struct TestTls {
    /// Accepts TLS connections; ALPN offers h2 and http/1.1.
    pub acceptor: tokio_rustls::TlsAcceptor,
    /// The CA's certificate (DER): trust it and the leaf verifies (unless
    /// it expired); leave it out and the CA is unknown.
    pub ca_der: Vec<u8>,
}

impl std::fmt::Debug for TestTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestTls").finish_non_exhaustive()
    }
}

impl TestTls {
    /// A fresh CA and a `cert` leaf for `localhost` signed by it.
    pub fn new(cert: TestCert) -> Self {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        let leaf_key = KeyPair::generate().unwrap();
        let mut leaf_params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        if cert == TestCert::Expired {
            leaf_params.not_before = date_time_ymd(2019, 1, 1);
            leaf_params.not_after = date_time_ymd(2020, 1, 1);
        }
        let leaf = leaf_params.signed_by(&leaf_key, &ca).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
            )
            .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        TestTls {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            ca_der: ca.as_ref().der().to_vec(),
        }
    }
}
