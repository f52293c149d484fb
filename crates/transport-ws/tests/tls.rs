//! `wss`: TLS with the configured roots, ALPN `http/1.1`, then the upgrade,
//! against a scripted server with a test CA on 127.0.0.1.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use mcpwire_transport::{Active, ConnectError, Transport, TransportEvent, TransportExt};
use mcpwire_ws::{Error, WsConfig, WsConnector, WsTransport};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};

/// A TLS acceptor for `localhost` and the DER of the CA that signed it.
fn test_tls() -> (tokio_rustls::TlsAcceptor, Vec<u8>) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca)
        .unwrap();
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
    (
        tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        ca.as_ref().der().to_vec(),
    )
}

/// A `wss` server that echoes one message; returns its URL and a task
/// giving the ALPN protocol the client chose (`None` if TLS failed).
async fn echo_server(
    acceptor: tokio_rustls::TlsAcceptor,
) -> (String, tokio::task::JoinHandle<Option<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "wss://localhost:{}/ws",
        listener.local_addr().unwrap().port()
    );
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let tls = acceptor.accept(tcp).await.ok()?;
        let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        #[allow(clippy::result_large_err, reason = "tungstenite's callback signature")]
        let callback = |_: &Request, mut resp: Response| {
            resp.headers_mut()
                .insert("sec-websocket-protocol", "mcp".parse().unwrap());
            Ok(resp)
        };
        let mut ws = tokio_tungstenite::accept_hdr_async(tls, callback)
            .await
            .unwrap();
        let m = ws.next().await.unwrap().unwrap();
        ws.send(m).await.unwrap();
        while let Some(Ok(_)) = ws.next().await {}
        alpn
    });
    (url, task)
}

#[tokio::test]
async fn wss_with_a_trusted_root_speaks_http_1_1_and_carries_messages() {
    let (acceptor, ca) = test_tls();
    let (url, server) = echo_server(acceptor).await;
    let config = WsConfig::new()
        .webpki_roots(false)
        .add_root_certificate(ca)
        .ping_interval(None);
    let connector = WsConnector::new(config).unwrap();
    let mut t = WsTransport::connect(&connector, &url).await.unwrap();
    let frame = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"hello"}"#);
    t.sender().send(frame.clone()).await.unwrap();
    t.set_active(Active::Once);
    match t.next_event().await {
        Some(TransportEvent::Frame(f)) => assert_eq!(f, frame),
        other => panic!("{other:?}"),
    }
    t.close().await;
    assert_eq!(server.await.unwrap().as_deref(), Some(&b"http/1.1"[..]));
}

#[tokio::test]
async fn wss_with_an_unknown_root_fails_to_connect() {
    let (acceptor, _ca) = test_tls();
    let (url, server) = echo_server(acceptor).await;
    // The Mozilla roots do not include the test CA.
    let connector = WsConnector::new(WsConfig::new()).unwrap();
    let err = WsTransport::connect(&connector, &url).await.unwrap_err();
    assert!(
        matches!(err, Error::Connect(ConnectError::Unreachable(_))),
        "{err:?}"
    );
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(cause.contains("certificate"), "{cause}");
    assert!(server.await.unwrap().is_none());
}
