use std::fmt;

use bytes::Bytes;

use crate::TransportError;

/// What a transport reports to its owner through
/// [`Transport::poll_event`](crate::Transport::poll_event).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TransportEvent {
    /// One inbound frame (one JSON-RPC message or batch). Uses up one grant;
    /// never delivered without one.
    Frame(Bytes),
    /// One line the peer wrote to its stderr (stdio, in capture mode).
    Stderr(String),
    /// A non-fatal error: the transport stays open.
    Error(TransportError),
    /// A frame that [`FrameSender`](crate::FrameSender) accepted could not be
    /// delivered (an HTTP POST that failed, say). The owner gets the frame back
    /// to fail or replay the request it carried. The transport stays open.
    Undelivered {
        /// The frame, as it was queued.
        frame: Bytes,
        /// Why it was not delivered.
        error: TransportError,
    },
    /// The transport is closed: reported exactly once, as the last event.
    Closed(CloseReason),
}

/// How a server process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExitInfo {
    /// The exit code, if it exited normally.
    pub code: Option<i32>,
    /// The signal that killed it, if any (Unix).
    pub signal: Option<i32>,
    /// The last lines it wrote to stderr, oldest first.
    pub stderr_tail: Vec<String>,
    /// The program that ran, as resolved (so an error names it).
    pub command: Option<String>,
}

impl ExitInfo {
    /// Exit information with an empty stderr tail.
    pub fn new(code: Option<i32>, signal: Option<i32>) -> Self {
        Self {
            code,
            signal,
            stderr_tail: Vec::new(),
            command: None,
        }
    }

    /// Names the program that ran.
    #[must_use]
    pub fn with_command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }
}

impl fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(command) = &self.command {
            write!(f, "`{command}` ")?;
        }
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exited with status {c}")?,
            (None, Some(s)) => write!(f, "killed by signal {s}")?,
            (None, None) => write!(f, "exited")?,
        }
        if let Some(last) = self.stderr_tail.last() {
            write!(f, "; last stderr line: {last}")?;
        }
        Ok(())
    }
}

/// Why a transport closed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CloseReason {
    /// We closed it (close or drop).
    Local,
    /// The peer closed its side (EOF on the read side, connection closed).
    Eof,
    /// The server process ended.
    Exited(ExitInfo),
    /// The peer sent a frame over the maximum frame length.
    FrameTooLong {
        /// The configured maximum.
        max: usize,
    },
    /// A fatal error.
    Error(TransportError),
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::Local => f.write_str("closed locally"),
            CloseReason::Eof => f.write_str("closed by the peer"),
            CloseReason::Exited(e) => write!(f, "server process {e}"),
            CloseReason::FrameTooLong { max } => {
                write!(f, "peer sent a frame over the {max}-byte limit")
            }
            CloseReason::Error(_) => f.write_str("fatal transport error"),
        }
    }
}

/// A close reason is an error in its own right (the last thing a transport
/// reports), so it can be the cause of a higher layer's error; a fatal
/// transport error is its source.
impl std::error::Error for CloseReason {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CloseReason::Error(e) => Some(e),
            _ => None,
        }
    }
}
