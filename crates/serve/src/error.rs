//! [`ServeError`]: how serving one client can end badly.

use mcpwire_transport::CloseReason;

/// Why [`Server::serve`](crate::Server::serve) ended other than by the
/// client closing its side (or us closing ours).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The connection to the client failed: a fatal transport error, or a
    /// frame over the transport's limit. The reason is the source.
    #[error("the connection to the client failed")]
    Transport(#[source] CloseReason),
}
