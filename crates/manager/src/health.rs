//! [`Health`]: how one server of the fleet is doing, as a `watch` shows it.

use mcpwire_client::ConnectionState;

use crate::error::Error;

/// How one server is doing.
///
/// ```text
/// Disconnected -> Connecting -> Ready <-> Degraded (reconnecting, or a listing failed)
///                     |           |
///                     v           v
///          Failed / NeedsAuthorization   (a call can retry, see ToolCall::retry_failed)
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Health {
    /// Not connected: a lazy or manual server not started yet, or one
    /// closed on request.
    Disconnected,
    /// Starting: spawning or connecting, the handshake, the first listing.
    Connecting,
    /// Connected, its catalogue listed.
    Ready,
    /// Connected once, but not fully working: the connection was lost and
    /// the client is reconnecting (by its [`Reconnect`](mcpwire_client::Reconnect)
    /// policy), or reading its catalogue again failed. Calls may fail
    /// meanwhile; the error says why.
    Degraded(Error),
    /// Not working and not trying any more: it did not start, or its
    /// connection ended for good. The error says why.
    Failed(Error),
    /// The server answered 401 or 403: it needs (other) credentials. The
    /// error carries the server's `WWW-Authenticate` challenges in its
    /// source chain.
    NeedsAuthorization(Error),
}

impl Health {
    /// True in `Ready`.
    pub fn is_ready(&self) -> bool {
        matches!(self, Health::Ready)
    }

    /// True in `Failed` and `NeedsAuthorization`: the server will not come
    /// back by itself.
    pub fn is_failed(&self) -> bool {
        matches!(self, Health::Failed(_) | Health::NeedsAuthorization(_))
    }

    /// Why the server is degraded or failed.
    pub fn error(&self) -> Option<&Error> {
        match self {
            Health::Degraded(e) | Health::Failed(e) | Health::NeedsAuthorization(e) => Some(e),
            _ => None,
        }
    }

    /// A short name of the state (`ready`, `degraded`...), for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Health::Disconnected => "disconnected",
            Health::Connecting => "connecting",
            Health::Ready => "ready",
            Health::Degraded(_) => "degraded",
            Health::Failed(_) => "failed",
            Health::NeedsAuthorization(_) => "needs authorization",
        }
    }

    /// A failure: `NeedsAuthorization` when the cause is an authorization
    /// error, `Failed` otherwise.
    pub(crate) fn failure(error: Error) -> Health {
        if error.is_authorization() {
            Health::NeedsAuthorization(error)
        } else {
            Health::Failed(error)
        }
    }

    /// The health of a server that was ready once, from its client's
    /// state; `None` while it connects again (the `Backoff` before said
    /// why, and that stays).
    pub(crate) fn from_state(server: &str, state: &ConnectionState) -> Option<Health> {
        let lost = |e: &mcpwire_client::Error| Error::Connect {
            server: server.to_owned(),
            source: e.clone(),
        };
        Some(match state {
            ConnectionState::Ready => Health::Ready,
            ConnectionState::Backoff { cause, .. } if cause.is_authorization() => {
                Health::NeedsAuthorization(lost(cause))
            }
            ConnectionState::Backoff { cause, .. } => Health::Degraded(lost(cause)),
            ConnectionState::Closed(Some(e)) => Health::failure(lost(e)),
            ConnectionState::Closed(None) | ConnectionState::Closing => Health::Disconnected,
            _ => return None,
        })
    }

    /// Whether two healths are the same state (errors not compared).
    pub(crate) fn same_state(&self, other: &Health) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}
