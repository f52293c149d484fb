//! The error chain from the client's `Error` down to its first cause, over
//! HTTP: a refused connection ends in the operating system's `io::Error`, a
//! TLS failure in rustls' error, and a 401 is an authorization error whose
//! chain holds the server's parsed challenge. Each layer's message says its
//! own level only.

use std::error::Error as _;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcpwire::http::RetryPolicy;
use mcpwire::{ClientConfig, ErrorKind, HttpConfig, Server};
use tokio::net::TcpListener;

const LONG: Duration = Duration::from_secs(30);

/// Fails at once instead of retrying a refused connection for a minute.
fn http_config() -> HttpConfig {
    HttpConfig::new().retry(RetryPolicy::never())
}

async fn connect_err(url: &str) -> mcpwire::Error {
    let server = Server::http(url).config(http_config());
    let connect = mcpwire::connect(server, ClientConfig::new());
    tokio::time::timeout(LONG, connect)
        .await
        .expect("fails in time")
        .expect_err("cannot connect")
}

/// Every error of the chain, the client's first, by `source()` alone.
fn chain<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Vec<&'a (dyn std::error::Error + 'static)> {
    let mut out = vec![e];
    let mut at = e;
    while let Some(next) = at.source() {
        out.push(next);
        at = next;
    }
    out
}

fn messages(e: &mcpwire::Error) -> Vec<String> {
    chain(e).iter().map(|e| e.to_string()).collect()
}

#[tokio::test]
async fn a_refused_connection_ends_in_the_io_error() {
    // A port nobody listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = connect_err(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert_eq!(err.kind(), ErrorKind::Transport, "{err:?}");
    assert!(err.is_unreachable(), "{err:?}");
    let io = chain(&err)
        .into_iter()
        .find_map(|e| e.downcast_ref::<std::io::Error>())
        .unwrap_or_else(|| panic!("no io::Error in {:#?}", messages(&err)));
    assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused);
    // The HTTP layer's own error is in the chain, typed.
    let http = chain(&err)
        .into_iter()
        .find_map(|e| e.downcast_ref::<mcpwire::http::Error>())
        .expect("the HTTP error");
    // No retry was allowed: the failure is itself, not a spent budget.
    assert!(
        matches!(
            http,
            mcpwire::http::Error::Connect(mcpwire::transport::ConnectError::Unreachable(_))
        ),
        "{http:?}"
    );
    // One level per message: no message repeats the one below it.
    let all = messages(&err);
    for pair in all.windows(2) {
        assert!(!pair[0].contains(&pair[1]), "{all:#?}");
    }
}

#[tokio::test]
async fn a_tls_failure_ends_in_the_rustls_error() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into());
    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert.cert.der().clone()], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            // The client refuses the certificate: the handshake fails here.
            let _ = acceptor.accept(stream).await;
        }
    });
    let err = connect_err(&format!("https://localhost:{port}/mcp")).await;
    assert_eq!(err.kind(), ErrorKind::Transport, "{err:?}");
    let tls = chain(&err)
        .into_iter()
        .find_map(|e| e.downcast_ref::<rustls::Error>())
        .unwrap_or_else(|| panic!("no rustls::Error in {:#?}", messages(&err)));
    assert!(
        matches!(tls, rustls::Error::InvalidCertificate(_)),
        "{tls:?}"
    );
}

#[tokio::test]
async fn a_401_is_an_authorization_error_with_the_challenge() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = service_fn(|_req| async {
                    let mut resp = http::Response::new(Full::new(Bytes::from_static(b"no")));
                    *resp.status_mut() = http::StatusCode::UNAUTHORIZED;
                    resp.headers_mut().insert(
                        http::header::WWW_AUTHENTICATE,
                        http::HeaderValue::from_static(
                            r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="mcp:tools""#,
                        ),
                    );
                    Ok::<_, std::convert::Infallible>(resp)
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    let err = connect_err(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert!(err.is_authorization(), "{err:?}");
    assert!(!err.is_retryable());
    let http = chain(&err)
        .into_iter()
        .find_map(|e| e.downcast_ref::<mcpwire::http::Error>())
        .expect("the HTTP error");
    let auth = http.authorization().expect("an authorization error");
    assert_eq!(auth.status, 401);
    let bearer = auth.bearer().expect("a Bearer challenge");
    assert_eq!(bearer.scope(), Some("mcp:tools"));
    assert_eq!(
        bearer.resource_metadata(),
        Some("http://127.0.0.1/.well-known/oauth-protected-resource")
    );
    // The messages say it: the server wants authorization, and what kind.
    let all = messages(&err).join(": ");
    assert!(all.contains("requires authorization"), "{all}");
    assert!(all.contains("Bearer") && all.contains("mcp:tools"), "{all}");
}

#[tokio::test]
async fn a_bad_url_is_a_connect_error_not_a_transport_one() {
    let err = connect_err("ftp://127.0.0.1/mcp").await;
    assert!(err.is_connect(), "{err:?}");
    let http = err
        .source()
        .and_then(|s| s.downcast_ref::<mcpwire::http::Error>())
        .expect("the HTTP error is the cause");
    assert!(matches!(
        http,
        mcpwire::http::Error::Connect(mcpwire::transport::ConnectError::UnsupportedScheme { .. })
    ));
}
