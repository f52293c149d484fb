//! [`Error`]: what can go wrong connecting to, and talking over, a WebSocket.

use std::sync::Arc;
use std::time::Duration;

use mcpwire_transport::{ConnectError, HttpStatus, TransportError};
use tokio_tungstenite::tungstenite;

/// An error of the WebSocket transport.
///
/// Connecting fails with one of the first group of variants. Once connected,
/// the others reach the owner inside
/// [`TransportError::Other`](mcpwire_transport::TransportError::Other): as a
/// non-fatal [`TransportEvent::Error`](mcpwire_transport::TransportEvent::Error),
/// attached to an undelivered frame, or inside the close reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transport could not be set up (a bad URL, no runtime, a bad TLS
    /// configuration), or no connection could be made: nothing reached the
    /// server. Shown as it is.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The TCP connect, TLS handshake and WebSocket upgrade together took
    /// longer than the connect timeout.
    #[error("WebSocket connect timed out")]
    Timeout,
    /// The server answered the upgrade request with an HTTP status other
    /// than 101 (401 for missing credentials, 404 for a wrong path...).
    #[error("WebSocket upgrade refused with HTTP status {}", .0.status)]
    Status(Box<HttpStatus>),
    /// The server accepted the upgrade without selecting the `mcp`
    /// subprotocol we asked for: it is not an MCP WebSocket endpoint (the
    /// Python SDK server and the TypeScript SDK client both insist on it).
    #[error("the server did not select the `mcp` WebSocket subprotocol")]
    SubprotocolNotSelected,
    /// The server selected a subprotocol other than `mcp`.
    #[error("the server selected a WebSocket subprotocol other than `mcp`")]
    SubprotocolMismatch,
    /// The upgrade answer broke the WebSocket handshake rules (a wrong
    /// `Sec-WebSocket-Accept`, a missing `Upgrade` header...).
    #[error("WebSocket handshake failed")]
    Handshake(#[source] tungstenite::Error),

    /// The server sent a binary message. MCP over WebSocket carries each
    /// JSON-RPC message in one text message; the binary one was dropped and
    /// the connection stays open.
    #[error(
        "the server sent a binary message of {len} bytes ({total} so far); it was dropped \
         (MCP over WebSocket uses text messages)"
    )]
    BinaryMessage {
        /// The latest one's length.
        len: usize,
        /// How many binary messages were dropped since the connection opened.
        total: u64,
    },
    /// The server sent a message over the maximum frame length. It was
    /// refused before being buffered whole, and the connection closes.
    #[error("the server sent a message of {size} bytes, over the {max}-byte limit")]
    MessageTooLarge {
        /// The size announced so far (a frame's length, or the message's
        /// length once it passed the limit).
        size: usize,
        /// The configured maximum.
        max: usize,
    },
    /// A frame queued for sending is not UTF-8, so it cannot travel in a
    /// text message.
    #[error("frame is not UTF-8 and cannot be sent as a WebSocket text message")]
    NotUtf8,
    /// The server sent nothing, not even the pong to our ping, within the
    /// keepalive bound: it is considered dead and the connection closes.
    #[error("no answer from the server within {0:?} of a ping")]
    KeepaliveTimeout(Duration),
    /// The server closed the connection with a status code other than a
    /// normal closure or going away.
    #[error("the server closed the WebSocket with code {code}{}", reason_suffix(.reason))]
    ClosedByPeer {
        /// The close code (RFC 6455, section 7.4).
        code: u16,
        /// The reason text the server gave, if any.
        reason: String,
    },
    /// The connection dropped without a closing handshake.
    #[error("the WebSocket connection was reset without a closing handshake")]
    Reset,
    /// The server broke the WebSocket protocol (a bad frame, an invalid
    /// UTF-8 text message...).
    #[error("WebSocket protocol violation")]
    Protocol(#[source] tungstenite::Error),
    /// Reading from or writing to the connection failed.
    #[error("WebSocket connection I/O failed")]
    Io(#[source] std::io::Error),
    /// The connection is closed: the frame was not sent.
    #[error("the WebSocket connection is closed")]
    Closed,
}

fn reason_suffix(reason: &str) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(": {reason}")
    }
}

impl Error {
    /// The HTTP status answer, if the upgrade was refused with one.
    pub fn status(&self) -> Option<&HttpStatus> {
        match self {
            Error::Status(s) => Some(s),
            _ => None,
        }
    }

    /// True for the connect timeout and the keepalive timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout | Error::KeepaliveTimeout(_))
    }

    /// An error of an established connection, from tungstenite's.
    pub(crate) fn from_ws(e: tungstenite::Error) -> Self {
        use tungstenite::error::{CapacityError, ProtocolError};
        match e {
            tungstenite::Error::Io(io) => Error::Io(io),
            tungstenite::Error::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
                Error::MessageTooLarge {
                    size,
                    max: max_size,
                }
            }
            tungstenite::Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
                Error::Reset
            }
            tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
                Error::Closed
            }
            other => Error::Protocol(other),
        }
    }
}

impl From<Error> for TransportError {
    fn from(e: Error) -> Self {
        match e {
            Error::Io(io) => TransportError::Io(Arc::new(io)),
            // The server wants (other) credentials: the status, with its
            // `WWW-Authenticate`, stays reachable by downcasting.
            Error::Status(ref s) if matches!(s.status, 401 | 403) => {
                TransportError::Unauthorized(Arc::new(e))
            }
            Error::Status(s) => TransportError::Http(s),
            Error::Timeout => TransportError::Timeout,
            // Nothing reached the server.
            Error::Connect(ConnectError::Unreachable(_)) => {
                TransportError::Unreachable(Arc::new(e))
            }
            other => TransportError::Other(Arc::new(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn display_says_one_level_and_the_cause_is_a_source() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "peer reset");
        let e = Error::Io(io);
        assert_eq!(e.to_string(), "WebSocket connection I/O failed");
        assert_eq!(e.source().unwrap().to_string(), "peer reset");
        let e = Error::ClosedByPeer {
            code: 1011,
            reason: "boom".into(),
        };
        assert_eq!(
            e.to_string(),
            "the server closed the WebSocket with code 1011: boom"
        );
        let e = Error::ClosedByPeer {
            code: 1008,
            reason: String::new(),
        };
        assert_eq!(
            e.to_string(),
            "the server closed the WebSocket with code 1008"
        );
    }

    #[test]
    fn tungstenite_errors_map_to_typed_variants() {
        use tungstenite::error::{CapacityError, ProtocolError};
        let e = Error::from_ws(tungstenite::Error::Capacity(
            CapacityError::MessageTooLong {
                size: 20,
                max_size: 16,
            },
        ));
        assert!(matches!(e, Error::MessageTooLarge { size: 20, max: 16 }));
        let e = Error::from_ws(tungstenite::Error::Protocol(
            ProtocolError::ResetWithoutClosingHandshake,
        ));
        assert!(matches!(e, Error::Reset));
        let e = Error::from_ws(tungstenite::Error::Protocol(
            ProtocolError::NonZeroReservedBits,
        ));
        assert_eq!(e.to_string(), "WebSocket protocol violation");
        assert!(e.source().is_some());
        let t: TransportError =
            Error::from_ws(tungstenite::Error::Io(std::io::Error::other("x"))).into();
        assert!(matches!(t, TransportError::Io(_)));
    }

    #[test]
    fn a_connection_never_made_is_unreachable() {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let t: TransportError = Error::Connect(ConnectError::Unreachable(Box::new(io))).into();
        assert!(matches!(t, TransportError::Unreachable(_)), "{t:?}");
        let t: TransportError = Error::Connect(ConnectError::NoRuntime).into();
        assert!(matches!(t, TransportError::Other(_)), "{t:?}");
    }
}
