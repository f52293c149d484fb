use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mcpwire_codec::DecodeError;

use crate::Outgoing;

/// Why [`FrameSender`](crate::FrameSender) did not accept a frame. Every
/// variant hands the whole message back (its bytes, what it is and its
/// header fields), so nothing is lost and a caller can offer it again
/// without having kept a copy.
///
/// `Debug` shows what the message is and its length, never its bytes (see
/// [`Outgoing`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// The outbound queue is full: retry later (or use the waiting `send`).
    #[error("transport is busy")]
    Busy(Outgoing),
    /// The transport is closed; the frame will never be sent.
    #[error("transport is closed")]
    Closed(Outgoing),
    /// The frame is longer than the transport's maximum frame length.
    #[error("frame of {} bytes exceeds the maximum of {} bytes", .0.frame.len(), .1)]
    TooLarge(Outgoing, usize),
    /// The frame contains a raw newline, which newline framing cannot carry.
    #[error("frame contains a raw newline")]
    EmbeddedNewline(Outgoing),
    /// This transport cannot send at all (a receive-only SSE stream).
    #[error("sending is not supported by this transport")]
    NotSupported(Outgoing),
}

impl SendError {
    /// The message that was not accepted, whole.
    pub fn into_outgoing(self) -> Outgoing {
        match self {
            SendError::Busy(m)
            | SendError::Closed(m)
            | SendError::TooLarge(m, _)
            | SendError::EmbeddedNewline(m)
            | SendError::NotSupported(m) => m,
        }
    }

    /// The bytes of the message that was not accepted.
    pub fn into_frame(self) -> Bytes {
        self.into_outgoing().frame
    }
}

/// A non-HTTP-library view of an HTTP error answer, so the layers above can
/// branch on it without depending on hyper.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpStatus {
    /// The status code.
    pub status: u16,
    /// The `WWW-Authenticate` header, if any.
    pub www_authenticate: Option<String>,
    /// The `Retry-After` header as a delay, if any.
    pub retry_after: Option<Duration>,
    /// The start of the body, lossily decoded, for diagnostics.
    pub body: String,
}

impl HttpStatus {
    /// A status with no headers and no body.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            www_authenticate: None,
            retry_after: None,
            body: String::new(),
        }
    }
}

/// A boxed error from a layer below (rustls, hyper, the OS).
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a network transport (HTTP, WebSocket) could not be set up, or could
/// not reach its server: the failures before anything was sent, which both
/// transports share. Each transport's own error holds it as its `Connect`
/// variant and shows it as it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The URL could not be parsed or is not absolute.
    #[error("invalid URL {url:?}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it was rejected.
        #[source]
        source: BoxError,
    },
    /// The URL's scheme is not one this transport speaks.
    #[error("unsupported URL scheme {scheme:?} (expected {expected})")]
    UnsupportedScheme {
        /// The scheme as given.
        scheme: String,
        /// The schemes this transport speaks, for the message
        /// (`"http or https"`).
        expected: &'static str,
    },
    /// The TLS configuration could not be built (a bad root certificate, an
    /// unusable platform root store).
    #[error("TLS configuration rejected")]
    Tls(#[source] BoxError),
    /// Setting the transport up needs a tokio runtime and none was running.
    #[error("no tokio runtime is running")]
    NoRuntime,
    /// No connection could be made (refused, unreachable, DNS, a failed TLS
    /// handshake): nothing reached the server, so a retry is safe.
    #[error("could not connect")]
    Unreachable(#[source] BoxError),
}

/// A transport error: reported as a non-fatal
/// [`TransportEvent::Error`](crate::TransportEvent::Error), attached to an
/// undelivered frame, or inside a close reason.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// An I/O error.
    #[error("I/O error")]
    Io(#[source] Arc<io::Error>),
    /// The framing decoder rejected the input.
    #[error("framing error")]
    Frame(#[source] DecodeError),
    /// Lines that are not JSON were skipped (a server logging to stdout).
    #[error("{skipped} non-JSON line(s) skipped so far")]
    NonJson {
        /// How many such lines have been skipped since the transport started.
        skipped: u64,
        /// The start of the latest one.
        sample: String,
    },
    /// An HTTP request got an error status.
    #[error("HTTP status {}", .0.status)]
    Http(Box<HttpStatus>),
    /// The server no longer knows our session (HTTP 404 on a request that
    /// carried a session id). The transport has dropped the session id; the
    /// client must initialize again.
    #[error("session expired")]
    SessionExpired,
    /// A wait ran out of time.
    #[error("timed out")]
    Timeout,
    /// The peer wants (other) credentials: an HTTP 401 or 403. The
    /// transport's own error, shown and chained through this one, carries
    /// what the server asked for (for HTTP, its `WWW-Authenticate`
    /// challenges).
    #[error(transparent)]
    Unauthorized(Arc<dyn std::error::Error + Send + Sync>),
    /// The request reached the peer but its answer was lost (an HTTP
    /// response stream that broke and cannot be resumed): its outcome is
    /// unknown. The transport's own error is shown and chained through
    /// this one.
    #[error(transparent)]
    Lost(Arc<dyn std::error::Error + Send + Sync>),
    /// No connection could be made (refused, no route, a failed DNS lookup
    /// or TLS handshake): nothing reached the peer, so sending the same
    /// frame again is safe. The transport's own error is shown and chained
    /// through this one.
    #[error(transparent)]
    Unreachable(Arc<dyn std::error::Error + Send + Sync>),
    /// Anything else, from a specific transport: its own error, shown and
    /// chained through this one.
    #[error(transparent)]
    Other(Arc<dyn std::error::Error + Send + Sync>),
}

impl From<io::Error> for TransportError {
    fn from(e: io::Error) -> Self {
        TransportError::Io(Arc::new(e))
    }
}

impl From<DecodeError> for TransportError {
    fn from(e: DecodeError) -> Self {
        TransportError::Frame(e)
    }
}
