use std::sync::Arc;

use mcpwire_transport::{HttpStatus, TransportError};

/// A boxed error from a layer below us (hyper, rustls, the OS).
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An error of the HTTP transports.
///
/// Status errors come first: an answer with an error status is always
/// [`Error::Status`], whatever its body holds, so a proxy's HTML error page is
/// never reported as a JSON parse error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL could not be parsed or is not absolute.
    #[error("invalid URL {url:?}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it was rejected.
        #[source]
        source: BoxError,
    },
    /// The URL scheme is neither `http` nor `https`.
    #[error("unsupported URL scheme {0:?} (expected http or https)")]
    UnsupportedScheme(String),
    /// The TLS configuration could not be built (a bad root certificate).
    #[error("TLS configuration rejected")]
    Tls(#[source] BoxError),
    /// Constructing a transport needs a tokio runtime and none was running.
    #[error("no tokio runtime is running")]
    NoRuntime,
    /// No connection could be made (refused, unreachable, DNS, TLS handshake,
    /// connect timeout): nothing reached the server, so a retry is safe.
    #[error("could not connect")]
    Connect(#[source] BoxError),
    /// A header value given to us is not a valid HTTP header value.
    #[error("invalid header value {0:?}")]
    InvalidHeaderValue(String),
    /// The request could not be sent or its answer could not be read
    /// (connection refused, reset, TLS handshake failure...).
    #[error("HTTP request failed")]
    Request(#[source] BoxError),
    /// Connecting took longer than the connect timeout, or the answer's headers
    /// took longer than the request timeout.
    #[error("HTTP request timed out")]
    Timeout,
    /// The server answered with an error status.
    #[error("HTTP status {}", .0.status)]
    Status(Box<HttpStatus>),
    /// A body was longer than the configured maximum frame length.
    #[error("HTTP body exceeds the {max}-byte limit")]
    BodyTooLarge {
        /// The limit.
        max: usize,
    },
    /// A success answer carried a content type we cannot read.
    #[error("unexpected content type {0:?}")]
    UnexpectedContentType(String),
    /// An SSE body could not be decoded (an event over the maximum length).
    #[error("SSE stream rejected")]
    Sse(#[source] mcpwire_codec::DecodeError),
    /// An SSE stream ended before the answer to the request it carried.
    #[error("SSE stream ended before the response arrived")]
    StreamEnded,
    /// The retry budget ran out before the operation succeeded.
    #[error("retry budget exhausted")]
    RetriesExhausted(#[source] Box<Error>),
    /// The legacy SSE stream did not announce a usable `endpoint`.
    #[error("legacy SSE endpoint missing or rejected: {0}")]
    Endpoint(String),
}

impl Error {
    /// The HTTP status answer, if this error is one (looking through retries).
    pub fn status(&self) -> Option<&HttpStatus> {
        match self {
            Error::Status(s) => Some(s),
            Error::RetriesExhausted(e) => e.status(),
            _ => None,
        }
    }

    /// True for timeouts (looking through retries).
    pub fn is_timeout(&self) -> bool {
        match self {
            Error::Timeout => true,
            Error::RetriesExhausted(e) => e.is_timeout(),
            _ => false,
        }
    }
}

impl From<Error> for TransportError {
    fn from(e: Error) -> Self {
        match e {
            Error::Status(s) => TransportError::Http(s),
            Error::Timeout => TransportError::Timeout,
            // The last status or timeout matters more to the caller than the
            // fact that retries ran out: keep it typed.
            Error::RetriesExhausted(inner)
                if matches!(*inner, Error::Status(_) | Error::Timeout) =>
            {
                (*inner).into()
            }
            other => TransportError::Other(Arc::new(other)),
        }
    }
}
