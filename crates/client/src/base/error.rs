//! The client's one error type, branched on by meaning.
//!
//! `Display` says what went wrong at the client's level, in one line; the
//! cause (the transport's error, and below it hyper's, rustls', the
//! operating system's) is reached through
//! [`source`](std::error::Error::source). Message text is not stable: branch
//! on [`ErrorKind`] and the accessors.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject};
use mcpwire_transport::{CloseReason, SendError, TransportError};

use crate::base::signal::CloseRequest;

/// The cause of an error: owned, or shared with the transport's event.
enum Source {
    Boxed(Box<dyn std::error::Error + Send + Sync>),
    Shared(Arc<dyn std::error::Error + Send + Sync>),
}

impl Source {
    fn get(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            Source::Boxed(e) => &**e,
            Source::Shared(e) => &**e,
        }
    }

    /// A transport error as a cause. A transport's own error (wrapped in
    /// `Other`, `Unauthorized`, `Unreachable` or `Lost`) becomes the cause
    /// itself, so the chain goes straight from the client to, say,
    /// `mcpwire_http::Error`, which can be downcast.
    fn transport(e: TransportError) -> Self {
        match e {
            TransportError::Other(inner)
            | TransportError::Unauthorized(inner)
            | TransportError::Unreachable(inner)
            | TransportError::Lost(inner) => Source::Shared(inner),
            other => Source::Boxed(Box::new(other)),
        }
    }
}

/// What went wrong, for callers to branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The transport could not be opened: a server process that did not
    /// start, a URL that is not valid (the cause says which).
    Connect,
    /// The transport failed to carry a message (the cause is the
    /// transport's error: a refused connection, a TLS failure, an HTTP
    /// status...).
    Transport,
    /// The server refused the request for want of (other) credentials: an
    /// HTTP 401 or 403. The cause, an `mcpwire_http::Error`, carries its
    /// `WWW-Authenticate` challenges.
    Authorization,
    /// The peer sent something that is not valid MCP (a malformed result, a
    /// missing field), or we could not encode a message.
    Protocol,
    /// The server answered with a JSON-RPC error; see
    /// [`Error::server_error`].
    Server,
    /// The request got no answer in time; the server was told (its answer
    /// stream closed over Streamable HTTP in the stateless era,
    /// `notifications/cancelled` otherwise).
    Timeout,
    /// The request was cancelled on our side.
    Cancelled,
    /// The connection is closed (or not yet ready); see
    /// [`Error::close_reason`] (also the cause) and [`Error::stderr_tail`].
    Closed,
    /// A tool's `structuredContent` does not match its `outputSchema`; see
    /// [`Error::validation_errors`].
    SchemaValidation,
    /// The server chose a protocol version this client does not speak.
    UnsupportedVersion,
    /// A request may or may not have reached the server (its delivery failed
    /// when the session expired, or its response stream broke) and was not
    /// safe to send again.
    OutcomeUnknown,
    /// The server kept asking for input (a multi round-trip request of the
    /// 2026-07-28 revision) past the configured number of rounds, or asked
    /// for input this client has no handler for.
    InputRequired,
    /// A skill's file did not match its listed digest, size or frontmatter
    /// (the skills extension); nothing more of the skill was read.
    SkillVerification,
}

/// An error from the MCP client.
///
/// Cheap to clone. Branch on [`kind`](Self::kind) or the `is_*` helpers; the
/// details hang off accessors, the cause off [`source`](std::error::Error::source).
#[derive(Clone)]
pub struct Error {
    inner: Arc<Inner>,
}

struct Inner {
    kind: ErrorKind,
    detail: Detail,
    source: Option<Source>,
}

enum Detail {
    Message(String),
    Server(ErrorObject),
    Timeout(Duration),
    Closed {
        reason: Option<CloseReason>,
        stderr_tail: Vec<String>,
        /// Why we closed it ourselves, if we did.
        local: Option<CloseRequest>,
    },
    NotReady,
    /// No connection could be made: nothing reached the server.
    Unreachable,
    Validation {
        tool: String,
        errors: Vec<String>,
    },
    Version(String),
}

impl Error {
    fn new(kind: ErrorKind, detail: Detail, source: Option<Source>) -> Self {
        Self {
            inner: Arc::new(Inner {
                kind,
                detail,
                source,
            }),
        }
    }

    /// The transport could not be opened (a server that did not start, a
    /// URL that is not valid, an HTTP client that could not be built);
    /// `source` is the transport's own error. For a
    /// [`TransportFactory`](crate::TransportFactory).
    pub fn connect(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::new(
            ErrorKind::Connect,
            Detail::Message("could not open the transport".into()),
            Some(Source::Boxed(Box::new(source))),
        )
    }

    /// A request the transport could not deliver.
    pub(crate) fn undelivered(e: TransportError) -> Self {
        let message = |what: &str| Detail::Message(what.into());
        let (kind, detail) = match &e {
            TransportError::Unauthorized(_) => (
                ErrorKind::Authorization,
                message("the server refused the request for want of authorization"),
            ),
            TransportError::Lost(_) => (
                ErrorKind::OutcomeUnknown,
                message(
                    "the request reached the server but its answer was lost; it may or may not have run",
                ),
            ),
            TransportError::Unreachable(_) => (ErrorKind::Transport, Detail::Unreachable),
            _ => (
                ErrorKind::Transport,
                message("the request could not be delivered"),
            ),
        };
        Self::new(kind, detail, Some(Source::transport(e)))
    }

    pub(crate) fn send(e: SendError) -> Self {
        Self::new(
            ErrorKind::Transport,
            Detail::Message("the transport refused the message".into()),
            Some(Source::Boxed(Box::new(e))),
        )
    }

    pub(crate) fn protocol(what: impl Into<String>) -> Self {
        Self::new(ErrorKind::Protocol, Detail::Message(what.into()), None)
    }

    pub(crate) fn decode(what: &str, e: serde_json::Error) -> Self {
        Self::new(
            ErrorKind::Protocol,
            Detail::Message(format!("malformed {what}")),
            Some(Source::Boxed(Box::new(e))),
        )
    }

    pub(crate) fn server(e: ErrorObject) -> Self {
        Self::new(ErrorKind::Server, Detail::Server(e), None)
    }

    pub(crate) fn timeout(after: Duration) -> Self {
        Self::new(ErrorKind::Timeout, Detail::Timeout(after), None)
    }

    pub(crate) fn cancelled(why: impl Into<String>) -> Self {
        Self::new(ErrorKind::Cancelled, Detail::Message(why.into()), None)
    }

    /// The connection closed: `local` says why if we closed it, `reason` is
    /// the transport's (also the cause). A transport that closed because the
    /// server wants authorization gives [`ErrorKind::Authorization`].
    pub(crate) fn closed(
        local: Option<CloseRequest>,
        reason: Option<CloseReason>,
        stderr_tail: Vec<String>,
    ) -> Self {
        let kind = match &reason {
            Some(CloseReason::Error(TransportError::Unauthorized(_))) => ErrorKind::Authorization,
            _ => ErrorKind::Closed,
        };
        Self::new(
            kind,
            Detail::Closed {
                reason,
                stderr_tail,
                local,
            },
            None,
        )
    }

    /// No connection is ready yet (connecting, or the transport cannot be
    /// reopened).
    pub(crate) fn not_ready() -> Self {
        Self::new(ErrorKind::Closed, Detail::NotReady, None)
    }

    /// A client made from one transport cannot reconnect.
    pub(crate) fn not_reopenable() -> Self {
        Self::new(
            ErrorKind::Closed,
            Detail::Message(
                "the transport cannot be reopened (connect with a factory to reconnect)".into(),
            ),
            None,
        )
    }

    pub(crate) fn validation(tool: impl Into<String>, errors: Vec<String>) -> Self {
        Self::new(
            ErrorKind::SchemaValidation,
            Detail::Validation {
                tool: tool.into(),
                errors,
            },
            None,
        )
    }

    pub(crate) fn unsupported_version(version: impl Into<String>) -> Self {
        Self::new(
            ErrorKind::UnsupportedVersion,
            Detail::Version(version.into()),
            None,
        )
    }

    pub(crate) fn outcome_unknown(method: &str, cause: TransportError) -> Self {
        Self::new(
            ErrorKind::OutcomeUnknown,
            Detail::Message(format!(
                "{method} may or may not have reached the server and is not safe to repeat"
            )),
            Some(Source::transport(cause)),
        )
    }

    /// A multi round-trip request that could not be completed: `what` says
    /// why (rounds exhausted, no handler).
    pub(crate) fn input_required(what: impl Into<String>) -> Self {
        Self::new(ErrorKind::InputRequired, Detail::Message(what.into()), None)
    }

    /// A skill file that failed verification.
    pub(crate) fn skill_verification(what: impl Into<String>) -> Self {
        Self::new(
            ErrorKind::SkillVerification,
            Detail::Message(what.into()),
            None,
        )
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// True for [`ErrorKind::Timeout`].
    pub fn is_timeout(&self) -> bool {
        self.kind() == ErrorKind::Timeout
    }

    /// True for [`ErrorKind::Closed`].
    pub fn is_closed(&self) -> bool {
        self.kind() == ErrorKind::Closed
    }

    /// True for [`ErrorKind::Authorization`]: the server wants credentials.
    pub fn is_authorization(&self) -> bool {
        self.kind() == ErrorKind::Authorization
    }

    /// True for [`ErrorKind::Connect`].
    pub fn is_connect(&self) -> bool {
        self.kind() == ErrorKind::Connect
    }

    /// True when no connection could be made to the server (refused, no
    /// route, a failed DNS lookup or TLS handshake): nothing reached it, so
    /// sending the request again cannot repeat its effect. Its kind is
    /// [`ErrorKind::Transport`].
    pub fn is_unreachable(&self) -> bool {
        matches!(self.inner.detail, Detail::Unreachable)
    }

    /// True when the failure lies in the connection rather than the request
    /// (a transport that did not open, transport failures, closed
    /// connections, timeouts), so the same request may succeed later.
    /// Retrying a call that is not idempotent can repeat its effect;
    /// [`ErrorKind::OutcomeUnknown`] is never retryable for that reason, and
    /// [`ErrorKind::Authorization`] needs credentials first.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Connect | ErrorKind::Transport | ErrorKind::Closed | ErrorKind::Timeout
        )
    }

    /// The server's JSON-RPC error (code, message, data), for
    /// [`ErrorKind::Server`].
    pub fn server_error(&self) -> Option<&ErrorObject> {
        match &self.inner.detail {
            Detail::Server(e) => Some(e),
            _ => None,
        }
    }

    /// The server's error code, for [`ErrorKind::Server`].
    pub fn code(&self) -> Option<ErrorCode> {
        self.server_error().map(|e| e.code)
    }

    /// Why the transport closed, for [`ErrorKind::Closed`], when known.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        match &self.inner.detail {
            Detail::Closed { reason, .. } => reason.as_ref(),
            _ => None,
        }
    }

    /// The last lines the server wrote to stderr (stdio), oldest first.
    pub fn stderr_tail(&self) -> &[String] {
        match &self.inner.detail {
            Detail::Closed { stderr_tail, .. } => stderr_tail,
            _ => &[],
        }
    }

    /// Each way the output failed its schema, for
    /// [`ErrorKind::SchemaValidation`].
    pub fn validation_errors(&self) -> &[String] {
        match &self.inner.detail {
            Detail::Validation { errors, .. } => errors,
            _ => &[],
        }
    }

    /// The version the server chose, for [`ErrorKind::UnsupportedVersion`].
    pub fn server_version(&self) -> Option<&str> {
        match &self.inner.detail {
            Detail::Version(v) => Some(v),
            _ => None,
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.inner.kind)
            .field("message", &self.to_string());
        if let Some(s) = std::error::Error::source(self) {
            d.field("source", &s);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner.detail {
            Detail::Message(m) => f.write_str(m),
            Detail::Server(e) => write!(f, "server error {e}"),
            Detail::Timeout(d) => write!(f, "request timed out after {d:?}"),
            Detail::Closed {
                reason,
                stderr_tail,
                local,
            } => {
                match (local, reason) {
                    (Some(local), _) => write!(f, "connection {local}")?,
                    (None, Some(CloseReason::Error(TransportError::Unauthorized(_)))) => {
                        f.write_str("connection closed: the server requires authorization")?
                    }
                    (None, _) => f.write_str("connection closed")?,
                }
                // The reason is the cause; an exit's own words already name
                // the last stderr line.
                if !matches!(reason, Some(CloseReason::Exited(_)))
                    && let Some(last) = stderr_tail.last()
                {
                    write!(f, "; last stderr line: {last}")?;
                }
                Ok(())
            }
            Detail::NotReady => f.write_str("not connected"),
            Detail::Unreachable => f.write_str("could not reach the server"),
            Detail::Validation { tool, errors } => {
                write!(
                    f,
                    "structured content of tool {tool:?} does not match its output schema"
                )?;
                if let Some(first) = errors.first() {
                    write!(f, ": {first}")?;
                }
                Ok(())
            }
            Detail::Version(v) => write!(
                f,
                "server chose protocol version {v:?}, which this client does not support (supported: {})",
                crate::base::version::SUPPORTED_VERSIONS.join(", ")
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        if let Detail::Closed {
            reason: Some(reason),
            ..
        } = &self.inner.detail
        {
            return Some(reason);
        }
        self.inner.source.as_ref().map(Source::get)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_accessors() {
        let e = Error::server(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "nope"));
        assert_eq!(e.kind(), ErrorKind::Server);
        assert_eq!(e.code(), Some(ErrorCode::METHOD_NOT_FOUND));
        assert!(!e.is_retryable());
        assert!(e.to_string().contains("nope"));

        let t = Error::timeout(Duration::from_secs(1));
        assert!(t.is_timeout() && t.is_retryable());

        let mut info = mcpwire_transport::ExitInfo::new(Some(3), None);
        info.stderr_tail = vec!["boom".into()];
        let c = Error::closed(None, Some(CloseReason::Exited(info)), vec!["boom".into()]);
        assert!(c.is_closed() && c.is_retryable());
        assert_eq!(c.stderr_tail(), ["boom".to_string()]);
        // The exit is the cause, and says the stderr line itself; the
        // client's own line does not repeat it.
        assert_eq!(c.to_string(), "connection closed");
        let cause = std::error::Error::source(&c).expect("the close reason");
        assert!(cause.to_string().contains("boom"), "{cause}");

        let u = Error::outcome_unknown("tools/call", TransportError::SessionExpired);
        assert!(!u.is_retryable());
        assert!(std::error::Error::source(&u).is_some());
    }

    #[test]
    fn a_transport_error_is_the_cause_itself_and_authorization_has_its_kind() {
        let inner: Arc<dyn std::error::Error + Send + Sync> =
            Arc::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        let e = Error::undelivered(TransportError::Other(inner));
        assert_eq!(e.kind(), ErrorKind::Transport);
        let cause = std::error::Error::source(&e).expect("a cause");
        // Not a TransportError wrapping it: the transport's own error.
        let io = cause
            .downcast_ref::<std::io::Error>()
            .expect("the io error");
        assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused);

        let inner: Arc<dyn std::error::Error + Send + Sync> =
            Arc::new(std::io::Error::other("401"));
        let a = Error::undelivered(TransportError::Unauthorized(inner));
        assert!(a.is_authorization() && !a.is_retryable());
        assert!(a.to_string().contains("authorization"), "{a}");

        let closed = Error::closed(
            None,
            Some(CloseReason::Error(TransportError::Unauthorized(Arc::new(
                std::io::Error::other("401"),
            )))),
            Vec::new(),
        );
        assert!(closed.is_authorization());

        let user = Error::closed(
            Some(CloseRequest::User),
            Some(CloseReason::Local),
            Vec::new(),
        );
        assert_eq!(user.to_string(), "connection closed by the client");
    }
}
