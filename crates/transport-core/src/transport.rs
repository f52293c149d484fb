use std::borrow::Cow;
use std::future::{Future, poll_fn};
use std::task::{Context, Poll};

use std::sync::Arc;

use crate::{Active, FrameSender, Tap, TransportEvent};

/// One MCP peer reached through some medium: the contract every mcpwire
/// transport implements.
///
/// # Sending
///
/// [`sender`](Self::sender) hands out a [`FrameSender`]: a cloneable handle
/// onto a bounded queue that the transport drains in order. `Busy` means the
/// queue is full; `Closed` means the transport will never send again. A frame
/// the queue accepted but the transport then failed to deliver comes back as
/// [`TransportEvent::Undelivered`]; nothing is dropped silently.
///
/// # Receiving: active-once flow control
///
/// A **grant** is permission to deliver one inbound frame. The owner sets the
/// number of outstanding grants with [`set_active`](Self::set_active)
/// ([`Active::Once`] = 1, [`Active::Many`] = n, [`Active::Paused`] = 0; a call
/// replaces the count, it does not add). A new transport starts paused.
///
/// - [`poll_event`](Self::poll_event) returns a [`TransportEvent::Frame`] only
///   while a grant is outstanding, and each frame uses one grant up. With no
///   grant it still returns the other events (stderr lines, non-fatal errors,
///   undelivered frames, `Closed`) but never a frame.
/// - A grant is used up exactly when a `Frame` is returned as `Ready`; no
///   other event, and no input the transport skips (blank lines, non-JSON
///   lines), consumes one. Grants left over stay until replaced.
/// - While no grant is outstanding, a transport reads ahead at most a small,
///   bounded amount (documented by each transport: about one read buffer, or a
///   few frames). It then stops reading, so the peer is pushed back by the OS
///   (a full pipe, a closed TCP window) rather than buffered without bound.
/// - Frames are delivered in the order the peer sent them (per stream, for
///   transports with several streams).
/// - A transport may do its reading inside `poll_event` (as
///   [`IoTransport`](crate::IoTransport) does, to save a task hop per
///   frame): the owner keeps polling `poll_event`, which it must do anyway to
///   learn about `Closed`.
///
/// # Closing
///
/// [`Closed`](TransportEvent::Closed) is delivered exactly once and is the last
/// event; after it `poll_event` returns `Ready(None)`. Frames the peer sent
/// before it closed are delivered before `Closed`, as grants allow: `Closed`
/// needs no grant, but it waits behind any complete frame already read. A
/// paused consumer therefore learns of the end at once when no frame is
/// pending, and otherwise once it grants for the pending ones (no more than
/// the bounded read-ahead). [`poll_close`](Self::poll_close) closes from our
/// side: it stops reading (frames not yet delivered are dropped), flushes
/// queued frames best-effort within a bounded time, releases the medium (for
/// a process: the whole shutdown sequence), and completes; the `Closed` event
/// then carries [`CloseReason::Local`] unless the transport had already
/// reported `Closed` for another reason. Frames that fail to be written after
/// `Closed` was reported are not reported as `Undelivered` (the owner already
/// knows everything in flight is lost). Dropping a transport without closing
/// it releases the medium at once (a process group is killed).
///
/// # Cancellation safety
///
/// `poll_event` is cancel-safe: an event is consumed only when it is returned
/// as `Ready`. Dropping a [`close`](TransportExt::close) future before it
/// completes leaves the transport closing; polling again resumes the shutdown.
/// Once closing has started, `poll_event` reports `Closed` (if not already
/// reported) and no more frames.
///
/// [`CloseReason::Local`]: crate::CloseReason::Local
pub trait Transport: Send + 'static {
    /// A handle that queues frames for sending.
    fn sender(&self) -> FrameSender;

    /// Sets how many inbound frames may be delivered (see the type docs).
    fn set_active(&mut self, active: Active);

    /// Polls for the next event. `Ready(None)` after `Closed` was returned.
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>>;

    /// Closes the transport from our side, bounded in time.
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()>;

    /// What this transport is connected to, for debugging.
    fn info(&self) -> TransportInfo;

    /// Shows `tap` every frame sent and received from now on, with the
    /// header fields sent with it, if this transport taps its own frames
    /// (one whose messages have headers, such as HTTP, does). False if it
    /// does not (the default): wrap it in a
    /// [`TappedTransport`](crate::TappedTransport) instead
    /// ([`tap_transport`](crate::tap_transport) chooses). Call it before
    /// taking a [`sender`](Self::sender). A tap never changes what is sent.
    fn set_tap(&mut self, tap: Arc<dyn Tap>) -> bool {
        let _ = tap;
        false
    }
}

impl<T: Transport + ?Sized> Transport for Box<T> {
    fn sender(&self) -> FrameSender {
        (**self).sender()
    }
    fn set_active(&mut self, active: Active) {
        (**self).set_active(active)
    }
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        (**self).poll_event(cx)
    }
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        (**self).poll_close(cx)
    }
    fn info(&self) -> TransportInfo {
        (**self).info()
    }
    fn set_tap(&mut self, tap: Arc<dyn Tap>) -> bool {
        (**self).set_tap(tap)
    }
}

/// `async` conveniences over [`Transport`].
pub trait TransportExt: Transport {
    /// The next event; `None` after `Closed`.
    fn next_event(&mut self) -> impl Future<Output = Option<TransportEvent>> + Send + '_ {
        poll_fn(move |cx| self.poll_event(cx))
    }

    /// Closes the transport (see [`Transport::poll_close`]).
    fn close(&mut self) -> impl Future<Output = ()> + Send + '_ {
        poll_fn(move |cx| self.poll_close(cx))
    }
}

impl<T: Transport + ?Sized> TransportExt for T {}

/// What a transport is connected to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransportInfo {
    /// The kind of transport: `"stdio"`, `"streamable-http"`, `"sse"`, `"io"`.
    pub kind: &'static str,
    /// The peer: a command line or a URL.
    pub peer: String,
    /// The server's process id, for stdio.
    pub pid: Option<u32>,
    /// Anything else worth showing (session id, negotiated HTTP version...).
    pub details: Vec<(Cow<'static, str>, String)>,
}

impl TransportInfo {
    /// Information with no pid and no details.
    pub fn new(kind: &'static str, peer: impl Into<String>) -> Self {
        Self {
            kind,
            peer: peer.into(),
            pid: None,
            details: Vec::new(),
        }
    }

    /// Sets the process id.
    #[must_use]
    pub fn with_pid(mut self, pid: u32) -> Self {
        self.pid = Some(pid);
        self
    }

    /// Adds a detail.
    #[must_use]
    pub fn with_detail(
        mut self,
        key: impl Into<Cow<'static, str>>,
        value: impl Into<String>,
    ) -> Self {
        self.details.push((key.into(), value.into()));
        self
    }
}
