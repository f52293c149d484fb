//! What both network transports share for TLS (feature `tls`): the rustls
//! client configuration they build (which roots to trust, on the ring
//! provider, with the safe default protocol versions; each transport adds
//! its own ALPN list), and [`TcpOrTls`], the connection they talk over.
//!
//! Stability: for mcpwire's own transports; it may change with them
//! before 1.0.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

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

/// A connection: plain TCP (`http`, `ws`) or TLS over TCP (`https`,
/// `wss`). Reads and writes go to whichever it holds.
#[derive(Debug)]
pub enum TcpOrTls {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP.
    Tls(Box<TlsStream<TcpStream>>),
}

impl TcpOrTls {
    /// The TCP connection underneath (for socket options).
    pub fn tcp(&self) -> &TcpStream {
        match self {
            TcpOrTls::Plain(s) => s,
            TcpOrTls::Tls(s) => s.get_ref().0,
        }
    }
}

impl AsyncRead for TcpOrTls {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            TcpOrTls::Plain(s) => Pin::new(s).poll_read(cx, buf),
            TcpOrTls::Tls(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for TcpOrTls {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            TcpOrTls::Plain(s) => Pin::new(s).poll_write(cx, buf),
            TcpOrTls::Tls(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            TcpOrTls::Plain(s) => Pin::new(s).poll_flush(cx),
            TcpOrTls::Tls(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            TcpOrTls::Plain(s) => Pin::new(s).poll_shutdown(cx),
            TcpOrTls::Tls(s) => Pin::new(s).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            TcpOrTls::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            TcpOrTls::Tls(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            TcpOrTls::Plain(s) => s.is_write_vectored(),
            TcpOrTls::Tls(s) => s.is_write_vectored(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shutting a plain connection down sends its end of stream: the peer
    /// reads what was written, then the end, at once.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_shutdown_ends_the_stream_for_the_peer() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (ours, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
        let mut ours = TcpOrTls::Plain(ours.unwrap());
        let (mut theirs, _) = accepted.unwrap();
        ours.write_all(b"bye").await.unwrap();
        ours.shutdown().await.unwrap();
        let mut read = Vec::new();
        let ended = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            theirs.read_to_end(&mut read),
        )
        .await;
        assert!(ended.is_ok(), "the peer saw no end of stream");
        assert_eq!(read, b"bye");
    }

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
