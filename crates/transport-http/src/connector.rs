use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use mcpwire_transport::tls::TcpOrTls;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::demand::{self, Live};
use crate::error::BoxError;
use crate::proxy::ProxyRules;
use crate::resolve::Resolver;
use crate::tls_setup::TlsSetup;

/// Connects TCP, then TLS for `https` URLs, offering `h2` and `http/1.1`
/// through ALPN; the whole connect is bounded by the connect timeout.
///
/// Through a proxy, an `https` URL is tunnelled with `CONNECT` (TLS is end to
/// end, the proxy sees only the host and port); an `http` URL is sent to the
/// proxy in absolute form.
///
/// A connector made with [`Resolver::public_only`] connects directly only
/// to public addresses; through a proxy the proxy resolves the name, and
/// the policy cannot be held (the proxy itself may be on a private address).
#[derive(Clone)]
pub(crate) struct Connector {
    tcp: HttpConnector<Resolver>,
    /// The connector to proxies: any address the system resolver gives.
    proxy_tcp: HttpConnector<Resolver>,
    tls: TlsSetup,
    timeout: Duration,
    proxy: Option<Arc<ProxyRules>>,
}

impl Connector {
    pub(crate) fn new(
        tls: TlsSetup,
        timeout: Duration,
        proxy: Option<Arc<ProxyRules>>,
        resolver: Resolver,
    ) -> Self {
        let tcp = |resolver| {
            let mut tcp = HttpConnector::new_with_resolver(resolver);
            tcp.enforce_http(false);
            tcp.set_nodelay(true);
            tcp.set_connect_timeout(Some(timeout));
            tcp.set_keepalive(Some(TCP_KEEPALIVE));
            tcp
        };
        Self {
            tcp: tcp(resolver),
            proxy_tcp: tcp(Resolver::any()),
            tls,
            timeout,
            proxy,
        }
    }
}

impl tower_service::Service<Uri> for Connector {
    type Response = TokioIo<PooledConn>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.tcp.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let mut tcp = self.tcp.clone();
        let mut proxy_tcp = self.proxy_tcp.clone();
        let tls = self.tls.clone();
        let timeout = self.timeout;
        let intercept = self.proxy.as_ref().and_then(|m| m.intercept(&uri));
        // The request the pool connects for, when one of ours is sending.
        let waiting = demand::sending();
        Box::pin(async move {
            if let Some(waiting) = &waiting {
                waiting.needed().await?;
            }
            let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
            let host = uri
                .host()
                .unwrap_or_default()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            let connect = async move {
                let stream = match (&intercept, https) {
                    (None, _) => tcp.call(uri).await?.into_inner(),
                    (Some(proxy), true) => {
                        let mut tunnel = Tunnel::new(proxy.uri().clone(), proxy_tcp);
                        if let Some(auth) = proxy.basic_auth() {
                            tunnel = tunnel.with_auth(auth.clone());
                        }
                        tunnel.call(uri).await?.into_inner()
                    }
                    (Some(proxy), false) => {
                        let stream = proxy_tcp.call(proxy.uri().clone()).await?.into_inner();
                        let stream = TcpOrTls::Plain(stream);
                        return Ok::<_, BoxError>(PooledConn::new(stream, Route::ForwardingProxy));
                    }
                };
                if !https {
                    return Ok(PooledConn::new(TcpOrTls::Plain(stream), Route::Direct));
                }
                let name = ServerName::try_from(host.clone())?;
                let stream = tls
                    .connector()?
                    .connect(name, stream)
                    .await
                    .map_err(|e| handshake_error(host, e))?;
                Ok(PooledConn::new(
                    TcpOrTls::Tls(Box::new(stream)),
                    Route::Direct,
                ))
            };
            match tokio::time::timeout(timeout, connect).await {
                Ok(stream) => {
                    let mut stream = stream?;
                    stream.live = waiting.as_deref().map(demand::Waiting::live);
                    Ok(TokioIo::new(stream))
                }
                Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out").into()),
            }
        })
    }
}

/// A TLS handshake that failed. Its source is rustls' own error: the
/// `io::Error` tokio-rustls returns carries it, but `io::Error::source`
/// skips the error it wraps, so a walk of the chain would never meet it.
#[derive(Debug, thiserror::Error)]
#[error("TLS handshake with {host} failed")]
struct TlsHandshake {
    host: String,
    #[source]
    source: BoxError,
}

fn handshake_error(host: String, e: io::Error) -> BoxError {
    let source: BoxError = if e.get_ref().is_some() {
        e.into_inner()
            .unwrap_or_else(|| "the TLS handshake failed".into())
    } else {
        Box::new(e)
    };
    Box::new(TlsHandshake { host, source })
}

/// How long a pooled connection may sit idle before TCP keepalive probes
/// ask whether the peer is still there: a dead peer (a server that rebooted,
/// a NAT that forgot us) is then found before a request is lost on it.
const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// A connection hyper pools: plain TCP or TLS over TCP, and whether it
/// goes to a forwarding proxy (hyper then sends absolute URIs).
pub(crate) struct PooledConn {
    stream: TcpOrTls,
    via: Route,
    /// Counted as live in its pool's demand while hyper holds it.
    live: Option<Live>,
}

/// Where a plain connection leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// To the server itself (or through a tunnel: the proxy no longer reads it).
    Direct,
    /// To a forwarding proxy that reads each request.
    ForwardingProxy,
}

impl PooledConn {
    fn new(stream: TcpOrTls, via: Route) -> Self {
        Self {
            stream,
            via,
            live: None,
        }
    }
}

impl Connection for PooledConn {
    fn connected(&self) -> Connected {
        match &self.stream {
            TcpOrTls::Plain(s) => s.connected().proxy(self.via == Route::ForwardingProxy),
            TcpOrTls::Tls(s) => {
                let (tcp, session) = s.get_ref();
                let connected = tcp.connected();
                if session.alpn_protocol() == Some(b"h2") {
                    connected.negotiated_h2()
                } else {
                    connected
                }
            }
        }
    }
}

impl AsyncRead for PooledConn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_read(cx, buf);
        if matches!(poll, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            ack_now(this.stream.tcp());
        }
        poll
    }
}

/// Acknowledges what was just read at once instead of up to 40 ms later.
///
/// A server that writes an answer in two pieces (an SSE answer's headers
/// and priming event, then the message once its handler is done) with
/// Nagle's algorithm on holds the second piece until the first is
/// acknowledged; on a pooled connection Linux delays that acknowledgement
/// (it expects to piggyback it on our next request), and each answer then
/// takes 40 ms more (seen with rmcp's server behind hyper without
/// `TCP_NODELAY`). A fresh connection acknowledges at once, which is why
/// clients that open a connection per request never see it. One
/// `setsockopt` per read; Linux resets the flag by itself, so it is set
/// again after each read.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn ack_now(tcp: &TcpStream) {
    let _ = tcp.set_quickack(true);
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn ack_now(_tcp: &TcpStream) {}

impl AsyncWrite for PooledConn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use std::io::IoSlice;

    use hyper_util::client::proxy::matcher::Matcher;
    use mcpwire_test_support::http::{TestCert, TestTls};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio_rustls::TlsAcceptor;
    use tower_service::Service;

    use super::*;
    use crate::config::HttpConfig;

    const WAIT: Duration = Duration::from_secs(20);

    /// A plain, direct connection to a listener of ours, and the peer's end.
    async fn pair() -> (PooledConn, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (ours, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
        let conn = PooledConn::new(TcpOrTls::Plain(ours.unwrap()), Route::Direct);
        (conn, accepted.unwrap().0)
    }

    fn connector(config: &HttpConfig, proxy: Option<ProxyRules>) -> Connector {
        let tls = TlsSetup::of(config).unwrap();
        Connector::new(tls, WAIT, proxy.map(Arc::new), Resolver::any())
    }

    async fn connect(
        connector: &mut Connector,
        url: &str,
    ) -> Result<TokioIo<PooledConn>, BoxError> {
        std::future::poll_fn(|cx| connector.poll_ready(cx)).await?;
        connector.call(url.parse().unwrap()).await
    }

    /// A TLS server on 127.0.0.1 for one connection, whose certificate is
    /// for `localhost`, offering `alpn`; its port. The server's end is held
    /// by its task until the test ends.
    async fn tls_server(tls: &TestTls, alpn: &[&[u8]]) -> u16 {
        let mut config = (**tls.acceptor.config()).clone();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let stream = acceptor.accept(tcp).await;
            std::future::pending::<()>().await;
            drop(stream);
        });
        port
    }

    /// hyper speaks HTTP/2 on a TLS connection only when the connector says
    /// ALPN chose `h2`; a server that chose `http/1.1` gets HTTP/1.1.
    #[tokio::test]
    async fn a_tls_connection_reports_whether_alpn_chose_h2() {
        let tls = TestTls::new(TestCert::Valid);
        let config = HttpConfig::default()
            .webpki_roots(false)
            .add_root_certificate(tls.ca_der.clone());
        for (offered, h2) in [
            (&[b"h2".as_slice(), b"http/1.1"][..], true),
            (&[b"http/1.1"], false),
        ] {
            let port = tls_server(&tls, offered).await;
            let conn = connect(
                &mut connector(&config, None),
                &format!("https://localhost:{port}/"),
            )
            .await
            .unwrap();
            let connected = conn.connected();
            assert_eq!(
                connected.is_negotiated_h2(),
                h2,
                "server offered {offered:?}"
            );
            assert!(!connected.is_proxied());
        }
    }

    /// A plain connection to a forwarding proxy says so, and hyper sends it
    /// absolute URIs; a direct one does not.
    #[tokio::test]
    async fn a_connection_to_a_forwarding_proxy_is_reported_as_proxied() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let matcher = Matcher::builder().all(format!("http://{addr}")).build();
        let mut via_proxy = connector(
            &HttpConfig::default(),
            Some(ProxyRules::new(matcher, false)),
        );
        let (conn, accepted) = tokio::join!(
            connect(&mut via_proxy, "http://mcp.example/mcp"),
            listener.accept()
        );
        accepted.unwrap();
        let connected = conn.unwrap().connected();
        assert!(connected.is_proxied());
        assert!(!connected.is_negotiated_h2());

        let mut direct = connector(&HttpConfig::default(), None);
        let url = format!("http://{addr}/mcp");
        let (conn, accepted) = tokio::join!(connect(&mut direct, &url), listener.accept());
        accepted.unwrap();
        assert!(!conn.unwrap().connected().is_proxied());
    }

    /// A rejected certificate is reported as a failed handshake with the
    /// host, and rustls' own error is reachable as its source.
    #[tokio::test]
    async fn a_failed_handshake_names_the_host_and_keeps_the_rustls_error() {
        let tls = TestTls::new(TestCert::Valid);
        let port = tls_server(&tls, &[b"h2", b"http/1.1"]).await;
        // No roots: the server's CA is unknown.
        let config = HttpConfig::default().webpki_roots(false);
        let url = format!("https://localhost:{port}/");
        let Err(err) = connect(&mut connector(&config, None), &url).await else {
            panic!("the handshake succeeded without a trusted root");
        };
        assert_eq!(err.to_string(), "TLS handshake with localhost failed");
        let source = err.source().expect("the handshake error has a source");
        assert!(
            matches!(
                source.downcast_ref::<rustls::Error>(),
                Some(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::UnknownIssuer
                ))
            ),
            "{source:?}"
        );
    }

    /// Shutting the connection down sends its end of stream: the peer reads
    /// what was written, then the end.
    #[tokio::test]
    async fn a_shutdown_ends_the_stream_for_the_peer() {
        let (mut conn, mut peer) = pair().await;
        conn.write_all(b"bye").await.unwrap();
        conn.shutdown().await.unwrap();
        let mut read = Vec::new();
        let ended = tokio::time::timeout(WAIT, peer.read_to_end(&mut read)).await;
        assert!(ended.is_ok(), "the peer saw no end of stream");
        assert_eq!(read, b"bye");
    }

    /// The connection takes vectored writes when its stream does (hyper
    /// then queues a body's chunks instead of copying them into one
    /// buffer), and what they write reaches the peer.
    #[tokio::test]
    async fn vectored_writes_reach_the_peer() {
        let (mut conn, mut peer) = pair().await;
        assert!(conn.stream.is_write_vectored());
        assert!(conn.is_write_vectored());
        let whole = b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}";
        let mut sent = 0;
        while sent < whole.len() {
            let (a, b) = whole[sent..].split_at((whole.len() - sent) / 2);
            let n = conn
                .write_vectored(&[IoSlice::new(a), IoSlice::new(b)])
                .await
                .unwrap();
            assert!(n > 0, "a vectored write wrote nothing");
            sent += n;
        }
        conn.shutdown().await.unwrap();
        let mut read = Vec::new();
        let ended = tokio::time::timeout(WAIT, peer.read_to_end(&mut read)).await;
        assert!(ended.is_ok(), "the peer saw no end of stream");
        assert_eq!(read, whole);
    }

    /// A read that brings bytes sets TCP_QUICKACK again. Linux leaves
    /// quick-ack mode by itself (it does when it expects to piggyback the
    /// acknowledgement on our next request); the test leaves it by hand,
    /// once the bytes are there and acknowledged, so no delayed
    /// acknowledgement is pending that could set the flag back on its own.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_read_that_brings_bytes_acknowledges_at_once() {
        let (mut conn, mut peer) = pair().await;
        peer.write_all(b"event: message\n").await.unwrap();
        conn.stream.tcp().readable().await.unwrap();
        conn.stream.tcp().set_quickack(false).unwrap();
        assert!(!conn.stream.tcp().quickack().unwrap());
        let mut buf = [0; 64];
        let n = conn.read(&mut buf).await.unwrap();
        assert!(n > 0);
        assert!(
            conn.stream.tcp().quickack().unwrap(),
            "TCP_QUICKACK not set after a read"
        );
    }

    /// The read that meets the end of the stream brings no bytes and sets
    /// no TCP_QUICKACK. The peer's FIN puts Linux in delayed-ack mode; the
    /// read of the last byte (which takes the FIN with it) sets the flag
    /// and sends the pending acknowledgement; the test then leaves
    /// quick-ack mode by hand, and only a `setsockopt` could set it again.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_end_of_the_stream_sets_no_quickack() {
        let (mut conn, mut peer) = pair().await;
        peer.write_all(b"x").await.unwrap();
        peer.shutdown().await.unwrap();
        loop {
            let ready = conn
                .stream
                .tcp()
                .ready(tokio::io::Interest::READABLE)
                .await
                .unwrap();
            if ready.is_read_closed() {
                break;
            }
            tokio::task::yield_now().await;
        }
        let mut buf = [0; 64];
        assert_eq!(conn.read(&mut buf).await.unwrap(), 1);
        assert!(conn.stream.tcp().quickack().unwrap());
        conn.stream.tcp().set_quickack(false).unwrap();
        assert_eq!(conn.read(&mut buf).await.unwrap(), 0);
        assert!(
            !conn.stream.tcp().quickack().unwrap(),
            "TCP_QUICKACK set after the end of the stream"
        );
    }

    /// A listener that holds the connections it accepts.
    async fn holding_listener() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((tcp, _)) = listener.accept().await {
                held.push(tcp);
            }
        });
        url
    }

    #[tokio::test]
    async fn a_connect_for_a_sending_request_is_counted_live_until_dropped() {
        let url = holding_listener().await;
        let demand = crate::demand::Demand::default();
        let uri: Uri = url.parse().unwrap();
        let open = demand.open(&uri).unwrap();
        let mut connector = connector(&HttpConfig::new(), None);
        let conn = crate::demand::SENDING
            .scope(Some(open.waiting()), connect(&mut connector, &url))
            .await
            .unwrap();
        assert_eq!(demand.counts(&uri), (1, 1));
        drop(conn);
        assert_eq!(demand.counts(&uri), (1, 0));
        drop(open);
        // Outside a send, nothing is counted.
        let conn = connect(&mut connector, &url).await.unwrap();
        assert_eq!(demand.counts(&uri), (0, 0));
        drop(conn);
    }

    #[tokio::test]
    async fn a_connect_whose_request_got_a_pooled_connection_is_not_made() {
        let url = holding_listener().await;
        let demand = crate::demand::Demand::default();
        let uri: Uri = url.parse().unwrap();
        // One live connection, busy with this request's predecessor's
        // return: as many live as open.
        let open = demand.open(&uri).unwrap();
        let live = open.waiting().live();
        let mut connector = connector(&HttpConfig::new(), None);
        std::future::poll_fn(|cx| connector.poll_ready(cx))
            .await
            .unwrap();
        let connecting =
            crate::demand::SENDING.sync_scope(Some(open.waiting()), || connector.call(uri.clone()));
        let connecting = tokio::spawn(connecting);
        tokio::task::yield_now().await;
        // The pooled connection came back and the request went out on it.
        let body = open.answered();
        let err = connecting
            .await
            .unwrap()
            .err()
            .expect("no connection is made");
        assert!(err.is::<crate::demand::NotNeeded>(), "{err}");
        drop((body, live));
    }
}
