//! The errors of the HTTP transports. Each `Display` says what went wrong
//! at this layer; the cause (hyper's error, rustls', the operating system's)
//! is the [`source`](std::error::Error::source). Message text is not stable:
//! branch on the variants.

use std::fmt;
use std::sync::Arc;

use mcpwire_transport::{ConnectError, HttpStatus, TransportError};

use mcpwire_auth::Challenge;

/// A boxed error from a layer below us (hyper, rustls, the OS).
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An error of the HTTP transports.
///
/// Status errors come first: an answer with an error status is always
/// [`Error::Status`] (or [`Error::Authorization`] for 401 and 403), whatever
/// its body holds, so a proxy's HTML error page is never reported as a JSON
/// parse error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transport could not be set up (a bad URL, no runtime, a bad TLS
    /// configuration), or no connection could be made: nothing reached the
    /// server. Shown as it is.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// A header value given to us is not a valid HTTP header value.
    #[error("invalid header value {0:?}")]
    InvalidHeaderValue(String),
    /// The request could not be sent or its answer could not be read
    /// (the connection was reset or closed mid-answer).
    #[error("HTTP request failed")]
    Request(#[source] BoxError),
    /// Connecting took longer than the connect timeout, or the answer's headers
    /// took longer than the request timeout.
    #[error("HTTP request timed out")]
    Timeout,
    /// The server answered with an error status (other than 401 and 403).
    #[error("HTTP status {}", .0.status)]
    Status(Box<HttpStatus>),
    /// The server answered 401 Unauthorized or 403 Forbidden: it wants
    /// (other) credentials. See [`AuthorizationRequired`] for its challenges.
    #[error("the server requires authorization ({0})")]
    Authorization(Box<AuthorizationRequired>),
    /// The server requires authorization and the authorizer (see
    /// [`HttpConfig::auth`](crate::HttpConfig::auth)) could not provide it:
    /// why is the source (discovery, a refused grant, the step-up limit...).
    #[error("{}", match .required { Some(r) => format!("the server requires authorization ({r}), and it could not be obtained"), None => "authorization could not be obtained".to_owned() })]
    AuthorizationFailed {
        /// What the server's last answer asked for, if the failure followed
        /// one.
        required: Option<Box<AuthorizationRequired>>,
        /// Why the authorizer failed.
        #[source]
        source: mcpwire_auth::AuthError,
    },
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
    /// The retry budget ran out before the operation succeeded; the source
    /// is the last attempt's error.
    #[error("retry budget exhausted")]
    RetriesExhausted(#[source] Box<Error>),
    /// The legacy SSE stream did not announce a usable `endpoint`.
    #[error("legacy SSE endpoint missing or rejected")]
    Endpoint(#[source] EndpointError),
    /// The server refused `initialize` over Streamable HTTP (400, 404 or
    /// 405) and a GET of the same URL found no legacy HTTP+SSE stream
    /// either: the URL is probably not an MCP endpoint. The source is what
    /// the GET found; [`status`](Self::status) is the POST's answer.
    #[error(
        "the server refused the MCP request (HTTP {status}) and offers no legacy HTTP+SSE stream at this URL either"
    )]
    NoEndpoint {
        /// The POST's status.
        status: u16,
        /// The POST's answer.
        post: Box<Error>,
        /// What the GET for a legacy stream found.
        #[source]
        legacy: Box<Error>,
    },
}

/// What a 401 or 403 answer said: its status, its `WWW-Authenticate`
/// challenges (RFC 9110 §11.6.1; for MCP servers a `Bearer` challenge with
/// `resource_metadata` and `scope`), and the start of its body.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationRequired {
    /// 401 or 403.
    pub status: u16,
    /// Every challenge of every `WWW-Authenticate` header, in order.
    pub challenges: Vec<Challenge>,
    /// The start of the body, lossily decoded, for diagnostics.
    pub body: String,
}

impl AuthorizationRequired {
    /// The first `Bearer` challenge, the one MCP servers send.
    pub fn bearer(&self) -> Option<&Challenge> {
        self.challenges.iter().find(|c| c.is("Bearer"))
    }
}

impl fmt::Display for AuthorizationRequired {
    /// `HTTP 401`, then the first challenge's scheme, error and scope.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        let Some(c) = self.bearer().or(self.challenges.first()) else {
            return f.write_str(", no challenge");
        };
        write!(f, ", {}", c.scheme())?;
        if let Some(error) = c.error() {
            write!(f, " error {error:?}")?;
        }
        if let Some(scope) = c.scope() {
            write!(f, " scope {scope:?}")?;
        }
        Ok(())
    }
}

/// Why the legacy transport's `endpoint` could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EndpointError {
    /// The stream opened but sent no `endpoint` event in time (the
    /// wait given).
    #[error("the SSE stream opened but sent no endpoint event within {0:?}")]
    NotInTime(std::time::Duration),
    /// The stream ended before an `endpoint` event.
    #[error("the stream ended before an endpoint event")]
    StreamEnded,
    /// A frame was to be posted before any endpoint was announced.
    #[error("no endpoint announced yet")]
    NotAnnounced,
    /// The event's data is not UTF-8.
    #[error("the endpoint is not UTF-8")]
    NotUtf8(#[source] std::str::Utf8Error),
    /// The announced endpoint is not a URL reference, or does not resolve
    /// against the SSE URL to one.
    #[error("endpoint {endpoint:?} is not a usable URL")]
    Invalid {
        /// The endpoint as announced.
        endpoint: String,
        /// The URL parser's error.
        #[source]
        source: BoxError,
    },
    /// The endpoint is on another origin (scheme, host or port) than the SSE
    /// URL: refused, so messages and credentials go only where the user
    /// pointed.
    #[error("endpoint {endpoint} is not on the SSE URL's origin")]
    OtherOrigin {
        /// The endpoint, resolved.
        endpoint: String,
    },
}

impl Error {
    /// The HTTP status answer, if this error is one (looking through retries).
    pub fn status(&self) -> Option<&HttpStatus> {
        match self {
            Error::Status(s) => Some(s),
            Error::RetriesExhausted(e) => e.status(),
            Error::NoEndpoint { post, .. } => post.status(),
            _ => None,
        }
    }

    /// The authorization the server wants, for a 401 or 403 answer (looking
    /// through retries).
    pub fn authorization(&self) -> Option<&AuthorizationRequired> {
        match self {
            Error::Authorization(a) => Some(a),
            Error::AuthorizationFailed { required, .. } => required.as_deref(),
            Error::RetriesExhausted(e) => e.authorization(),
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

impl From<EndpointError> for Error {
    fn from(e: EndpointError) -> Self {
        Error::Endpoint(e)
    }
}

impl From<Error> for TransportError {
    fn from(e: Error) -> Self {
        match e {
            Error::Status(s) => TransportError::Http(s),
            Error::Timeout => TransportError::Timeout,
            // Nothing reached the server, on the only attempt or the last.
            Error::Connect(ConnectError::Unreachable(_)) => {
                TransportError::Unreachable(Arc::new(e))
            }
            Error::RetriesExhausted(ref inner)
                if matches!(**inner, Error::Connect(ConnectError::Unreachable(_))) =>
            {
                TransportError::Unreachable(Arc::new(e))
            }
            Error::Authorization(_) | Error::AuthorizationFailed { .. } => {
                TransportError::Unauthorized(Arc::new(e))
            }
            // The request was taken and its answer stream broke.
            Error::StreamEnded => TransportError::Lost(Arc::new(e)),
            Error::RetriesExhausted(ref inner) if matches!(**inner, Error::StreamEnded) => {
                TransportError::Lost(Arc::new(e))
            }
            // The last status or timeout matters more to the caller than the
            // fact that retries ran out: keep it typed.
            Error::RetriesExhausted(inner)
                if matches!(
                    *inner,
                    Error::Status(_) | Error::Timeout | Error::Authorization(_)
                ) =>
            {
                (*inner).into()
            }
            other => TransportError::Other(Arc::new(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> Error {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        ConnectError::Unreachable(Box::new(io)).into()
    }

    #[test]
    fn a_connection_never_made_is_unreachable_also_when_retries_ran_out() {
        let t: TransportError = refused().into();
        assert!(matches!(t, TransportError::Unreachable(_)), "{t:?}");
        assert_eq!(t.to_string(), "could not connect");
        let t: TransportError = Error::RetriesExhausted(Box::new(refused())).into();
        assert!(matches!(t, TransportError::Unreachable(_)), "{t:?}");
        assert_eq!(t.to_string(), "retry budget exhausted");
        // A request that failed once connected may have reached the server.
        let t: TransportError = Error::Request(Box::new(std::io::Error::other("reset"))).into();
        assert!(matches!(t, TransportError::Other(_)), "{t:?}");
        let t: TransportError = Error::RetriesExhausted(Box::new(Error::Request(Box::new(
            std::io::Error::other("reset"),
        ))))
        .into();
        assert!(matches!(t, TransportError::Other(_)), "{t:?}");
    }
}
