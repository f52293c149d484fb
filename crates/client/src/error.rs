//! The client's one error type, branched on by meaning.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject};
use mcpwire_transport::{CloseReason, TransportError};

type Source = Box<dyn std::error::Error + Send + Sync>;

/// What went wrong, for callers to branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The transport failed to carry a message (the cause is the
    /// [`TransportError`] or send error).
    Transport,
    /// The peer sent something that is not valid MCP (a malformed result, a
    /// missing field), or we could not encode a message.
    Protocol,
    /// The server answered with a JSON-RPC error; see
    /// [`Error::server_error`].
    Server,
    /// The request got no answer in time; `notifications/cancelled` was sent.
    Timeout,
    /// The request was cancelled on our side.
    Cancelled,
    /// The connection is closed (or not yet ready); see
    /// [`Error::close_reason`] and [`Error::stderr_tail`].
    Closed,
    /// A tool's `structuredContent` does not match its `outputSchema`; see
    /// [`Error::validation_errors`].
    SchemaValidation,
    /// The server chose a protocol version this client does not speak.
    UnsupportedVersion,
    /// A request may or may not have reached the server (its delivery failed
    /// when the session expired) and was not safe to send again.
    OutcomeUnknown,
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
        why: String,
    },
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

    pub(crate) fn transport(what: impl Into<String>, source: Option<TransportError>) -> Self {
        Self::new(
            ErrorKind::Transport,
            Detail::Message(what.into()),
            source.map(|e| Box::new(e) as Source),
        )
    }

    /// The transport could not be opened (a server that failed to spawn);
    /// `source` is the transport's own error.
    pub fn spawn(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::new(
            ErrorKind::Transport,
            Detail::Message("could not open the transport".into()),
            Some(Box::new(source)),
        )
    }

    pub(crate) fn send(e: mcpwire_transport::SendError) -> Self {
        Self::new(
            ErrorKind::Transport,
            Detail::Message("the transport refused the message".into()),
            Some(Box::new(e)),
        )
    }

    pub(crate) fn protocol(what: impl Into<String>, source: Option<Source>) -> Self {
        Self::new(ErrorKind::Protocol, Detail::Message(what.into()), source)
    }

    pub(crate) fn decode(what: &str, e: serde_json::Error) -> Self {
        Self::protocol(format!("malformed {what}"), Some(Box::new(e)))
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

    pub(crate) fn closed(
        why: impl Into<String>,
        reason: Option<CloseReason>,
        stderr_tail: Vec<String>,
    ) -> Self {
        Self::new(
            ErrorKind::Closed,
            Detail::Closed {
                reason,
                stderr_tail,
                why: why.into(),
            },
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
            Some(Box::new(cause)),
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

    /// True when the failure lies in the connection rather than the request
    /// (transport failures, closed connections, timeouts), so the same request
    /// may succeed later. Retrying a call that is not idempotent can repeat
    /// its effect; [`ErrorKind::OutcomeUnknown`] is never retryable for that
    /// reason.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Transport | ErrorKind::Closed | ErrorKind::Timeout
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
        if let Some(s) = &self.inner.source {
            d.field("source", s);
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
                why,
            } => {
                f.write_str(why)?;
                if let Some(r) = reason {
                    // ExitInfo's Display already names the last stderr line.
                    write!(f, ": {r}")?;
                    if matches!(r, CloseReason::Exited(_)) {
                        return Ok(());
                    }
                }
                if let Some(last) = stderr_tail.last() {
                    write!(f, "; last stderr line: {last}")?;
                }
                Ok(())
            }
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
                crate::version::SUPPORTED_VERSIONS.join(", ")
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
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
        let c = Error::closed(
            "connection closed",
            Some(CloseReason::Exited(info)),
            vec!["boom".into()],
        );
        assert!(c.is_closed() && c.is_retryable());
        assert_eq!(c.stderr_tail(), ["boom".to_string()]);
        let text = c.to_string();
        assert_eq!(text.matches("boom").count(), 1, "{text}");

        let u = Error::outcome_unknown("tools/call", TransportError::SessionExpired);
        assert!(!u.is_retryable());
        assert!(std::error::Error::source(&u).is_some());
    }
}
