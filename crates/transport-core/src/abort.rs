//! Aborting one request in flight: for transports that carry each request
//! on a stream of its own (Streamable HTTP), where closing that stream is how
//! a request is cancelled.
//!
//! A transport that can do it installs a [`RequestAbort`] on its sender
//! ([`FrameSender::abort_sink`](crate::FrameSender::abort_sink)); a caller
//! asks with [`FrameSender::abort`](crate::FrameSender::abort), which answers
//! `false` when the transport cannot (stdio, where the caller tells the peer
//! with a message instead).

use std::fmt;

use mcpwire_codec::jsonrpc::Id;

/// A transport's way to stop the exchange of one request, found by its
/// JSON-RPC id. Called on the caller's task: it must not block or wait.
pub trait RequestAbort: Send + Sync + fmt::Debug {
    /// Stops the exchange of the request `id`: closes its answer stream if
    /// it is in flight, or sends nothing if it has not been sent yet. True
    /// if the transport took care of it (whether or not it still found the
    /// request: an answer that already came needs nothing); false if it
    /// cannot cancel this way (then nothing was done).
    fn abort(&self, id: &Id) -> bool;
}
