//! The connection's state, observable through a `tokio::sync::watch`.

use std::time::Duration;

use crate::base::error::Error;

/// Where the connection is in its life.
///
/// `Connecting → Initializing → Ready`, then on an unexpected close either
/// `Closed` or, with reconnection on, `Backoff → Connecting → …`; a local
/// close goes `Closing → Closed`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ConnectionState {
    /// Opening the transport (attempt 0 is the first).
    Connecting {
        /// Which attempt this is.
        attempt: u32,
    },
    /// The transport is open; the handshake is under way.
    Initializing,
    /// Requests may be sent.
    Ready,
    /// Waiting before the next attempt to reconnect.
    Backoff {
        /// The attempt that comes next.
        attempt: u32,
        /// How long we wait.
        delay: Duration,
        /// Why the previous connection ended.
        cause: Error,
    },
    /// Closing on the user's request.
    Closing,
    /// Closed for good: `None` when closed on the user's request.
    Closed(Option<Error>),
}

impl ConnectionState {
    /// True in `Ready`.
    pub fn is_ready(&self) -> bool {
        matches!(self, ConnectionState::Ready)
    }

    /// True in `Closed`.
    pub fn is_closed(&self) -> bool {
        matches!(self, ConnectionState::Closed(_))
    }
}
