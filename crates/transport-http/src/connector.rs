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
        Box::pin(async move {
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
                Ok(stream) => Ok(TokioIo::new(stream?)),
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
        Self { stream, via }
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
