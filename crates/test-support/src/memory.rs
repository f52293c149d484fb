//! An in-memory [`Transport`] over channels that honours grants exactly.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use mcpwire_transport::{
    Active, CloseReason, FrameMeta, FrameSender, Grants, Outgoing, Transport, TransportError,
    TransportEvent, TransportInfo,
};
use tokio::sync::{mpsc, watch};

/// How deep the queue from the peer to the transport is. The peer's sends wait
/// when it is full, which is how a consumer that grants nothing pushes back.
const PEER_QUEUE: usize = 64;

/// What the peer end pushes towards the transport's owner.
#[derive(Debug)]
pub(crate) enum PeerEvent {
    Frame(Bytes),
    Stderr(String),
    Undelivered(Bytes, TransportError),
    Close(CloseReason),
}

/// Counters a test can read to check how the owner used the transport.
#[derive(Debug, Default)]
pub struct MemoryStats {
    frames_delivered: AtomicU64,
    set_active_calls: AtomicU64,
}

impl MemoryStats {
    /// Frames handed to the owner so far (each used one grant).
    pub fn frames_delivered(&self) -> u64 {
        self.frames_delivered.load(Ordering::Relaxed)
    }

    /// How many times the owner called `set_active`.
    pub fn set_active_calls(&self) -> u64 {
        self.set_active_calls.load(Ordering::Relaxed)
    }
}

/// The transport half of an in-memory pair: give it to the client.
///
/// Grants are honoured exactly: a frame is returned from `poll_event` only
/// while a grant is outstanding. While paused it reads ahead at most one
/// frame from the peer, so the peer's queue fills and its sends wait.
#[derive(Debug)]
pub struct MemoryTransport {
    sender: FrameSender,
    inbound: mpsc::Receiver<PeerEvent>,
    /// One frame read ahead while no grant was outstanding.
    held: Option<Bytes>,
    /// Events to deliver before anything else (the final `Closed`).
    queued: VecDeque<TransportEvent>,
    grants: Grants,
    closed: bool,
    done: bool,
    local_close: watch::Sender<bool>,
    stats: Arc<MemoryStats>,
    /// What `info` reports: kind and peer.
    named: Option<(&'static str, String)>,
    details: Vec<(&'static str, String)>,
}

/// The peer half of an in-memory pair: a test (or [`FakeServer`]) drives it.
///
/// [`FakeServer`]: crate::FakeServer
#[derive(Debug)]
pub struct MemoryPeer {
    pub(crate) from_client: mpsc::Receiver<Outgoing>,
    fields: SentFields,
    pub(crate) to_client: mpsc::Sender<PeerEvent>,
    pub(crate) local_close: watch::Receiver<bool>,
    pub(crate) stats: Arc<MemoryStats>,
}

/// A connected in-memory pair whose outbound queue holds `capacity` frames.
pub fn memory_pair(capacity: usize) -> (MemoryTransport, MemoryPeer) {
    let (sender, from_client) = FrameSender::channel(capacity);
    let (to_client, inbound) = mpsc::channel(PEER_QUEUE);
    let (local_close, local_close_rx) = watch::channel(false);
    let stats = Arc::new(MemoryStats::default());
    (
        MemoryTransport {
            sender,
            inbound,
            held: None,
            queued: VecDeque::new(),
            grants: Grants::default(),
            closed: false,
            done: false,
            local_close,
            stats: stats.clone(),
            named: None,
            details: Vec::new(),
        },
        MemoryPeer {
            from_client,
            fields: SentFields::default(),
            to_client,
            local_close: local_close_rx,
            stats,
        },
    )
}

impl MemoryTransport {
    /// The same transport, asking the client for each frame's header
    /// fields (as HTTP does: see [`FrameSender::reads_meta`]); the peer
    /// keeps them ([`MemoryPeer::sent_fields`]).
    #[must_use]
    pub fn reading_meta(mut self) -> Self {
        self.sender = self.sender.reads_meta();
        self
    }

    /// The same transport, reporting `kind` and `peer` in its
    /// [`TransportInfo`] (say `"stdio"` and a command line), as a real
    /// transport names its server: the client then keeps what it learns of
    /// the server (its era) under that name.
    #[must_use]
    pub fn named(mut self, kind: &'static str, peer: impl Into<String>) -> Self {
        self.named = Some((kind, peer.into()));
        self
    }

    /// The same transport, adding `key: value` to the details of its
    /// [`TransportInfo`] (say `"session-id"`, as Streamable HTTP reports
    /// the session a server made).
    #[must_use]
    pub fn with_detail(mut self, key: &'static str, value: impl Into<String>) -> Self {
        self.details.push((key, value.into()));
        self
    }

    /// The counters shared with the peer.
    pub fn stats(&self) -> Arc<MemoryStats> {
        self.stats.clone()
    }

    fn deliver_frame(&mut self, frame: Bytes) -> Poll<Option<TransportEvent>> {
        let took = self.grants.take();
        debug_assert!(took, "frame delivered without a grant");
        self.stats.frames_delivered.fetch_add(1, Ordering::Relaxed);
        Poll::Ready(Some(TransportEvent::Frame(frame)))
    }
}

impl Transport for MemoryTransport {
    fn sender(&self) -> FrameSender {
        self.sender.clone()
    }

    fn set_active(&mut self, active: Active) {
        self.stats.set_active_calls.fetch_add(1, Ordering::Relaxed);
        self.grants.set(active);
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(ev) = self.queued.pop_front() {
            if matches!(ev, TransportEvent::Closed(_)) {
                self.done = true;
            }
            return Poll::Ready(Some(ev));
        }
        if self.held.is_some() {
            if !self.grants.any() {
                return Poll::Pending;
            }
            let frame = self.held.take().expect("checked above");
            return self.deliver_frame(frame);
        }
        if self.closed {
            self.done = true;
            return Poll::Ready(Some(TransportEvent::Closed(CloseReason::Local)));
        }
        match self.inbound.poll_recv(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => {
                self.done = true;
                Poll::Ready(Some(TransportEvent::Closed(CloseReason::Eof)))
            }
            Poll::Ready(Some(ev)) => match ev {
                PeerEvent::Frame(f) if self.grants.any() => self.deliver_frame(f),
                PeerEvent::Frame(f) => {
                    // Read ahead one frame, then stop reading until a grant
                    // arrives; `set_active` is always followed by a poll.
                    self.held = Some(f);
                    Poll::Pending
                }
                PeerEvent::Stderr(line) => Poll::Ready(Some(TransportEvent::Stderr(line))),
                PeerEvent::Undelivered(frame, error) => {
                    Poll::Ready(Some(TransportEvent::Undelivered { frame, error }))
                }
                PeerEvent::Close(reason) => {
                    self.done = true;
                    Poll::Ready(Some(TransportEvent::Closed(reason)))
                }
            },
        }
    }

    fn poll_close(&mut self, _cx: &mut Context<'_>) -> Poll<()> {
        if !self.closed {
            self.closed = true;
            self.inbound.close();
            let _ = self.local_close.send(true);
        }
        Poll::Ready(())
    }

    fn info(&self) -> TransportInfo {
        let info = match &self.named {
            Some((kind, peer)) => TransportInfo::new(kind, peer.clone()),
            None => TransportInfo::new("memory", "in-memory peer"),
        };
        self.details
            .iter()
            .fold(info, |info, (k, v)| info.with_detail(*k, v.clone()))
    }
}

/// See [`MemoryPeer::sent_fields`].
pub type SentFields = Arc<std::sync::Mutex<Vec<(Bytes, Arc<FrameMeta>)>>>;

impl MemoryPeer {
    /// The next frame the client sent, or `None` once the client closed or
    /// dropped the transport and every queued frame was read.
    pub async fn recv_frame(&mut self) -> Option<Bytes> {
        let mut close = self.local_close.clone();
        tokio::select! {
            biased;
            f = self.from_client.recv() => f,
            _ = close.wait_for(|c| *c) => self.from_client.try_recv().ok(),
        }
        .map(|out| {
            if let Some(meta) = out.meta {
                let mut fields = self.fields.lock().unwrap_or_else(|e| e.into_inner());
                fields.push((out.frame.clone(), meta));
            }
            out.frame
        })
    }

    /// The header fields the client gave with the frames read so far, by
    /// frame, in order: what a transport with headers (HTTP) would send.
    /// Only a transport made [`reading_meta`](MemoryTransport::reading_meta)
    /// is given any.
    pub fn sent_fields(&self) -> SentFields {
        self.fields.clone()
    }

    /// Sends one frame to the client; waits while the client grants nothing
    /// and the queue is full. False if the client side is gone.
    pub async fn send_frame(&self, frame: impl Into<Bytes>) -> bool {
        self.to_client
            .send(PeerEvent::Frame(frame.into()))
            .await
            .is_ok()
    }

    /// Reports a stderr line to the client.
    pub async fn send_stderr(&self, line: impl Into<String>) -> bool {
        self.to_client
            .send(PeerEvent::Stderr(line.into()))
            .await
            .is_ok()
    }

    /// Hands a frame the client sent back as undelivered, as an HTTP
    /// transport does when a POST fails.
    pub async fn undeliver(&self, frame: Bytes, error: TransportError) -> bool {
        self.to_client
            .send(PeerEvent::Undelivered(frame, error))
            .await
            .is_ok()
    }

    /// Closes the connection from the peer's side with `reason` (a crash is
    /// `CloseReason::Exited`). Frames sent before it are delivered first.
    pub async fn close(self, reason: CloseReason) {
        let _ = self.to_client.send(PeerEvent::Close(reason)).await;
    }

    /// True once the client closed the transport from its side.
    pub fn client_closed(&self) -> bool {
        *self.local_close.borrow()
    }

    /// The counters shared with the transport.
    pub fn stats(&self) -> Arc<MemoryStats> {
        self.stats.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use mcpwire_transport::TransportExt;

    use super::*;

    #[tokio::test]
    async fn frames_only_against_grants_and_close_is_last() {
        let (mut t, peer) = memory_pair(4);
        assert!(peer.send_frame("{}").await);
        assert!(peer.send_frame("[]").await);
        peer.send_stderr("oops").await;
        // Paused: the first frame is read ahead and held, nothing delivered.
        let polled = tokio::time::timeout(std::time::Duration::from_millis(50), t.next_event());
        assert!(polled.await.is_err());
        t.set_active(Active::Once);
        assert!(matches!(t.next_event().await, Some(TransportEvent::Frame(f)) if f == "{}"));
        let polled = tokio::time::timeout(std::time::Duration::from_millis(50), t.next_event());
        assert!(polled.await.is_err());
        t.set_active(Active::Many(NonZeroU32::new(5).unwrap()));
        assert!(matches!(t.next_event().await, Some(TransportEvent::Frame(f)) if f == "[]"));
        assert!(matches!(t.next_event().await, Some(TransportEvent::Stderr(s)) if s == "oops"));
        assert_eq!(t.stats().frames_delivered(), 2);
        peer.close(CloseReason::Eof).await;
        assert!(matches!(
            t.next_event().await,
            Some(TransportEvent::Closed(CloseReason::Eof))
        ));
        assert!(t.next_event().await.is_none());
    }

    #[tokio::test]
    async fn local_close_is_seen_by_the_peer() {
        let (mut t, mut peer) = memory_pair(4);
        t.sender().try_send(Bytes::from_static(b"{}")).unwrap();
        t.close().await;
        assert_eq!(peer.recv_frame().await.unwrap(), "{}");
        assert!(peer.recv_frame().await.is_none());
        assert!(peer.client_closed());
        assert!(matches!(
            t.next_event().await,
            Some(TransportEvent::Closed(CloseReason::Local))
        ));
    }
}
