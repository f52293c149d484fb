use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::mpsc;

use mcpwire_codec::jsonrpc::Id;

use crate::SendError;
use crate::abort::RequestAbort;
use crate::direct::Direct;
use crate::outbound::Outbound;
use crate::outgoing::Outgoing;
use crate::tap::{Direction, Tap, Tapped};

/// The sending half of a transport: cheap to clone and shared by every caller.
///
/// Frames go into a bounded queue that the transport drains. Nothing here
/// blocks: [`try_send`](Self::try_send) answers `Busy` at once when the queue is
/// full, and [`send`](Self::send) waits for room. A frame is checked against
/// the transport's limits before it is queued, so an oversized message fails
/// at once with the frame handed back, never hangs.
#[derive(Debug, Clone)]
pub struct FrameSender {
    queue: Queue,
    max_frame_len: usize,
    reject_newlines: bool,
    /// False for transports that cannot send at all (receive-only streams).
    can_send: bool,
    /// The one way a frame skips the queue: offered here first. A
    /// byte-stream transport's sender writes it itself when nothing is
    /// queued; other transports (HTTP) set their own through
    /// [`direct_send`](Self::direct_send).
    direct: Option<Arc<dyn DirectSend>>,
    /// Set by transports whose messages carry headers: they read each
    /// frame's [`FrameMeta`](crate::FrameMeta).
    reads_meta: bool,
    /// Set by transports that can stop one request in flight: see
    /// [`abort`](Self::abort).
    abort: Option<Arc<dyn RequestAbort>>,
    /// Shown every frame this sender accepts (see [`tap`](Self::tap)).
    tap: Option<Arc<dyn Tap>>,
}

/// Where queued frames go.
#[derive(Debug, Clone)]
enum Queue {
    /// A queue made with the sender: the transport gets each message whole.
    Own(mpsc::Sender<Outgoing>),
    /// A byte-stream transport's, made with its writer task when a frame
    /// first needs them (a sender writes a lone frame itself, through
    /// [`WriteNow`]). Only the bytes are kept: a byte stream has no headers.
    Lazy(Arc<Outbound>),
}

impl Queue {
    /// Queues `frame` if there is room now; a refused frame comes back
    /// whole.
    fn try_push(&self, frame: Outgoing) -> Result<(), mpsc::error::TrySendError<Outgoing>> {
        use mpsc::error::TrySendError::{Closed, Full};
        match self {
            Queue::Own(tx) => tx.try_send(frame),
            Queue::Lazy(outbound) => {
                let (bytes, rest) = frame.split();
                outbound.queue().try_send(bytes).map_err(|e| match e {
                    Full(bytes) => Full(rest.join(bytes)),
                    Closed(bytes) => Closed(rest.join(bytes)),
                })
            }
        }
    }

    /// Queues `frame`, waiting for room; a closed queue hands it back whole.
    async fn push(&self, frame: Outgoing) -> Result<(), Outgoing> {
        match self {
            Queue::Own(tx) => tx.send(frame).await.map_err(|e| e.0),
            Queue::Lazy(outbound) => {
                let (bytes, rest) = frame.split();
                let sent = outbound.queue().send(bytes).await;
                sent.map_err(|e| rest.join(e.0))
            }
        }
    }
}

/// A byte-stream transport's direct write: the frame is written from the
/// sender's own task when nothing is queued ahead of it (see
/// [`SharedWrite`](crate::direct::SharedWrite)).
#[derive(Debug)]
struct WriteNow(Arc<Outbound>);

impl DirectSend for WriteNow {
    fn offer(&self, frame: Outgoing) -> Offered {
        let (bytes, rest) = frame.split();
        match self.0.shared.try_direct(bytes) {
            Direct::Done => Offered::Taken,
            Direct::Left => {
                self.0.start_writer();
                Offered::Taken
            }
            Direct::Queue(bytes) => Offered::Queue(rest.join(bytes)),
            Direct::Closed(bytes) => Offered::Closed(rest.join(bytes)),
        }
    }

    fn unqueue(&self) {
        self.0.shared.unqueue(1);
    }
}

/// A transport's way to take a frame from the sender's own task instead of
/// through the queue, saving its driver task a wake-up and a channel hop
/// (the `direct-send` feature: for transports, such as `mcpwire-http`; its
/// contract may change with theirs).
///
/// [`FrameSender`] checks every frame (receive-only, maximum length,
/// newlines) before offering it, so an implementation never sees a frame the
/// queue would have refused. The implementation keeps order: it must answer
/// [`Offered::Queue`] while any frame offered earlier is still queued, and
/// count the frames it sends to the queue until its driver has handed them
/// on. It must not block or wait: it is called from `try_send` too.
#[cfg_attr(not(feature = "direct-send"), allow(unreachable_pub))]
pub trait DirectSend: Send + Sync + std::fmt::Debug {
    /// Takes `frame` now if nothing is ahead of it, or hands it back to be
    /// queued (then counted as queued until [`unqueue`](Self::unqueue) or
    /// the transport's driver takes it).
    fn offer(&self, frame: Outgoing) -> Offered;

    /// A frame answered with [`Offered::Queue`] never made it into the
    /// queue (full, closed, or the `send` future was dropped).
    fn unqueue(&self);
}

/// What a [`DirectSend`] made of a frame.
#[cfg_attr(not(feature = "direct-send"), allow(unreachable_pub))]
#[derive(Debug)]
#[non_exhaustive]
pub enum Offered {
    /// Taken: the transport sends it, and reports it as undelivered if it
    /// cannot.
    Taken,
    /// Put it in the queue (it is counted as queued).
    Queue(Outgoing),
    /// The transport has stopped taking frames.
    Closed(Outgoing),
}

impl FrameSender {
    /// A sender with a queue of `capacity` frames, and the receiving end the
    /// transport drains. The maximum frame length starts at the codec default
    /// (16 MiB).
    pub fn channel(capacity: usize) -> (FrameSender, mpsc::Receiver<Outgoing>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (Self::with_queue(Queue::Own(tx)), rx)
    }

    /// A sender writing directly through `outbound` when nothing is queued,
    /// and queueing to its writer task (made on first use) otherwise.
    pub(crate) fn lazy(outbound: Arc<Outbound>) -> Self {
        let direct: Arc<dyn DirectSend> = Arc::new(WriteNow(outbound.clone()));
        Self {
            direct: Some(direct),
            ..Self::with_queue(Queue::Lazy(outbound))
        }
    }

    fn with_queue(queue: Queue) -> Self {
        FrameSender {
            queue,
            max_frame_len: mcpwire_codec::DEFAULT_MAX_FRAME_LEN,
            reject_newlines: false,
            can_send: true,
            direct: None,
            reads_meta: false,
            abort: None,
            tap: None,
        }
    }

    /// Frames longer than `max` bytes are refused with
    /// [`SendError::TooLarge`].
    #[must_use]
    pub fn max_frame_len(mut self, max: usize) -> Self {
        self.max_frame_len = max;
        self
    }

    /// Frames containing a raw `\n` are refused with
    /// [`SendError::EmbeddedNewline`] (for newline framing).
    #[must_use]
    pub fn reject_newlines(mut self, reject: bool) -> Self {
        self.reject_newlines = reject;
        self
    }

    /// Every frame is refused with [`SendError::NotSupported`], at once: for
    /// transports that only receive (a receive-only SSE stream).
    #[must_use]
    pub fn receive_only(mut self) -> Self {
        self.can_send = false;
        self
    }

    /// Offers every frame that passes the checks to `hook` before queueing
    /// it: see [`DirectSend`].
    #[cfg(feature = "direct-send")]
    #[must_use]
    pub fn direct_send(mut self, hook: Arc<dyn DirectSend>) -> Self {
        self.direct = Some(hook);
        self
    }

    /// Marks this sender's transport as one that reads each frame's
    /// [`FrameMeta`](crate::FrameMeta) (see [`wants_meta`](Self::wants_meta)).
    #[must_use]
    pub fn reads_meta(mut self) -> Self {
        self.reads_meta = true;
        self
    }

    /// Shows `tap` every frame this sender (and its clones made from now
    /// on) accepts, once, after the checks, as it is written or queued
    /// (see [`TappedTransport`](crate::TappedTransport)).
    #[must_use]
    pub fn tap(mut self, tap: Arc<dyn Tap>) -> Self {
        self.tap = Some(tap);
        self
    }

    fn show(&self, frame: Option<Bytes>) {
        if let (Some(tap), Some(frame)) = (&self.tap, frame) {
            tap.frame(&Tapped::new(Direction::Sent, &frame));
        }
    }

    /// Lets callers stop one request in flight through `sink` (see
    /// [`RequestAbort`]).
    #[must_use]
    pub fn abort_sink(mut self, sink: Arc<dyn RequestAbort>) -> Self {
        self.abort = Some(sink);
        self
    }

    /// Stops the exchange of the request `id` sent through this sender, the
    /// transport's own way (Streamable HTTP closes its answer stream). False
    /// if the transport cannot: the caller then cancels it another way (a
    /// `notifications/cancelled` message).
    pub fn abort(&self, id: &Id) -> bool {
        self.abort.as_ref().is_some_and(|a| a.abort(id))
    }

    /// True if the transport reads frame metadata (a caller may skip
    /// building it otherwise).
    pub fn wants_meta(&self) -> bool {
        self.reads_meta
    }

    /// Offers the frame to the transport's direct path, if it has one.
    /// `Ok(None)`: taken; `Ok(Some)`: queue it (counted as queued); `Err`:
    /// the transport is closed.
    fn try_direct(&self, frame: Outgoing) -> Result<Option<Outgoing>, SendError> {
        let Some(direct) = &self.direct else {
            return Ok(Some(frame));
        };
        match direct.offer(frame) {
            Offered::Taken => Ok(None),
            Offered::Queue(frame) => Ok(Some(frame)),
            Offered::Closed(frame) => Err(SendError::Closed(frame)),
        }
    }

    fn check(&self, frame: Outgoing) -> Result<Outgoing, SendError> {
        if !self.can_send {
            return Err(SendError::NotSupported(frame));
        }
        if frame.frame.len() > self.max_frame_len {
            return Err(SendError::TooLarge(frame, self.max_frame_len));
        }
        if self.reject_newlines && memchr_newline(&frame.frame) {
            return Err(SendError::EmbeddedNewline(frame));
        }
        Ok(frame)
    }

    /// Queues `frame` (bytes, or an [`Outgoing`] that says what they are)
    /// if there is room now.
    pub fn try_send(&self, frame: impl Into<Outgoing>) -> Result<(), SendError> {
        let frame = self.check(frame.into())?;
        let shown = self.tap.as_ref().map(|_| frame.frame.clone());
        let Some(frame) = self.try_direct(frame)? else {
            self.show(shown);
            return Ok(());
        };
        let queued = self.queue.try_push(frame).map_err(|e| match e {
            mpsc::error::TrySendError::Full(f) => SendError::Busy(f),
            mpsc::error::TrySendError::Closed(f) => SendError::Closed(f),
        });
        if queued.is_err() {
            self.unqueue();
        }
        queued?;
        self.show(shown);
        Ok(())
    }

    /// Queues `frame` (bytes, or an [`Outgoing`] that says what they are),
    /// waiting for room. Cancel-safe: if the future is dropped before it
    /// completes, the frame was not queued.
    pub async fn send(&self, frame: impl Into<Outgoing>) -> Result<(), SendError> {
        let frame = self.check(frame.into())?;
        let shown = self.tap.as_ref().map(|_| frame.frame.clone());
        let Some(frame) = self.try_direct(frame)? else {
            self.show(shown);
            return Ok(());
        };
        // Undoes the "queued" count if the frame never makes it into the
        // queue, including when this future is dropped while waiting.
        struct Unqueue<'a>(Option<&'a FrameSender>);
        impl Drop for Unqueue<'_> {
            fn drop(&mut self) {
                if let Some(sender) = self.0 {
                    sender.unqueue();
                }
            }
        }
        let mut guard = Unqueue(Some(self));
        let result = self.queue.push(frame).await;
        if result.is_ok() {
            guard.0 = None;
            self.show(shown);
        }
        result.map_err(SendError::Closed)
    }

    fn unqueue(&self) {
        if let Some(direct) = &self.direct {
            direct.unqueue();
        }
    }

    /// True once the transport has stopped taking frames.
    pub fn is_closed(&self) -> bool {
        match &self.queue {
            Queue::Own(tx) => tx.is_closed(),
            Queue::Lazy(outbound) => {
                outbound.queue_made().is_some_and(mpsc::Sender::is_closed)
                    || outbound.shared.is_closing()
            }
        }
    }
}

fn memchr_newline(frame: &[u8]) -> bool {
    memchr::memchr(b'\n', frame).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outgoing::{FrameKind, FrameMeta};

    #[tokio::test]
    async fn busy_too_large_newline_and_closed_hand_the_frame_back() {
        let (tx, mut rx) = FrameSender::channel(1);
        let tx = tx.max_frame_len(4).reject_newlines(true);
        tx.try_send(Bytes::from_static(b"{}")).unwrap();
        assert!(
            matches!(tx.try_send(Bytes::from_static(b"[]")), Err(SendError::Busy(f)) if f.frame == "[]")
        );
        assert!(matches!(
            tx.try_send(Bytes::from_static(b"12345")),
            Err(SendError::TooLarge(_, 4))
        ));
        assert!(matches!(
            tx.try_send(Bytes::from_static(b"{\n}")),
            Err(SendError::EmbeddedNewline(_))
        ));
        assert_eq!(rx.recv().await.unwrap().frame, "{}");
        drop(rx);
        let err = tx.send(Bytes::from_static(b"1")).await.unwrap_err();
        assert_eq!(err.into_frame(), "1");
        assert!(tx.is_closed());
    }

    #[tokio::test]
    async fn a_byte_stream_frame_refused_as_busy_stops_counting_as_queued() {
        use crate::{IoConfig, IoTransport, Transport as _};
        use tokio::io::{AsyncBufReadExt, BufReader};
        // A small pipe and queue, and a peer that does not read yet: the
        // frames fill both until one is refused.
        let config = IoConfig::new().outbound_capacity(1).read_buffer_size(1024);
        let (t, peer) = IoTransport::pair(config);
        let tx = t.sender();
        let frame =
            |i: usize| Bytes::from(format!("{{\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(200)));
        let mut accepted = 0;
        loop {
            match tx.try_send(frame(accepted)) {
                Ok(()) => accepted += 1,
                Err(SendError::Busy(_)) => break,
                Err(e) => panic!("unexpected {e}"),
            }
            assert!(accepted < 100, "the queue never filled");
            tokio::task::yield_now().await;
        }
        let Queue::Lazy(outbound) = &tx.queue else {
            panic!("a byte stream's sender has the lazy queue");
        };
        let mut lines = BufReader::new(peer).lines();
        for _ in 0..accepted {
            lines.next_line().await.unwrap().unwrap();
        }
        // Every accepted frame is written and the refused one was never
        // queued: nothing is left counted, so the next lone frame may be
        // written directly again.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while outbound.shared.queued() != 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} frames still counted as queued",
                outbound.shared.queued()
            );
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    }

    /// Records the frames shown to it.
    #[derive(Debug, Default)]
    struct Shown(std::sync::Mutex<Vec<Bytes>>);

    impl Tap for Shown {
        fn frame(&self, tapped: &Tapped<'_>) {
            assert_eq!(tapped.direction, Direction::Sent);
            self.0
                .lock()
                .unwrap()
                .push(Bytes::copy_from_slice(tapped.frame));
        }
    }

    #[tokio::test]
    async fn a_tap_sees_each_queued_frame_once_and_no_refused_one() {
        let shown = Arc::new(Shown::default());
        let (tx, mut rx) = FrameSender::channel(1);
        let tx = tx.max_frame_len(4).tap(shown.clone());
        tx.try_send(Bytes::from_static(b"a")).unwrap();
        assert!(matches!(
            tx.try_send(Bytes::from_static(b"b")),
            Err(SendError::Busy(_))
        ));
        assert!(matches!(
            tx.try_send(Bytes::from_static(b"12345")),
            Err(SendError::TooLarge(..))
        ));
        assert_eq!(rx.recv().await.unwrap().frame, "a");
        tx.send(Bytes::from_static(b"c")).await.unwrap();
        assert_eq!(rx.recv().await.unwrap().frame, "c");
        drop(rx);
        assert!(tx.send(Bytes::from_static(b"d")).await.is_err());
        assert_eq!(*shown.0.lock().unwrap(), ["a", "c"]);
    }

    #[tokio::test]
    async fn receive_only_refuses_at_send_time() {
        let (tx, _rx) = FrameSender::channel(4);
        let tx = tx.receive_only();
        assert!(
            matches!(tx.try_send(Bytes::from_static(b"{}")), Err(SendError::NotSupported(f)) if f.frame == "{}")
        );
        assert!(matches!(
            tx.send(Bytes::from_static(b"[]")).await,
            Err(SendError::NotSupported(_))
        ));
    }

    /// A hook that takes frames starting with `t`, hands back `c` as closed,
    /// and queues the rest, counting them.
    #[cfg(feature = "direct-send")]
    #[derive(Debug, Default)]
    struct Hook {
        taken: std::sync::Mutex<Vec<Bytes>>,
        offered: std::sync::atomic::AtomicUsize,
        queued: std::sync::atomic::AtomicIsize,
    }

    #[cfg(feature = "direct-send")]
    impl DirectSend for Hook {
        fn offer(&self, frame: Outgoing) -> Offered {
            use std::sync::atomic::Ordering::SeqCst;
            self.offered.fetch_add(1, SeqCst);
            match frame.frame.first() {
                Some(b't') => {
                    self.taken.lock().unwrap().push(frame.frame);
                    Offered::Taken
                }
                Some(b'c') => Offered::Closed(frame),
                _ => {
                    self.queued.fetch_add(1, SeqCst);
                    Offered::Queue(frame)
                }
            }
        }

        fn unqueue(&self) {
            self.queued
                .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[cfg(feature = "direct-send")]
    #[tokio::test]
    async fn direct_send_hook_sees_only_checked_frames_and_keeps_the_count() {
        use std::sync::atomic::Ordering::SeqCst;
        let hook = Arc::new(Hook::default());
        let (tx, mut rx) = FrameSender::channel(1);
        let tx = tx.max_frame_len(4).direct_send(hook.clone());
        // Taken frames skip the queue.
        tx.try_send(Bytes::from_static(b"t1")).unwrap();
        tx.send(Bytes::from_static(b"t2")).await.unwrap();
        assert_eq!(*hook.taken.lock().unwrap(), ["t1", "t2"]);
        // The length check runs first: the hook never sees the frame.
        assert!(matches!(
            tx.try_send(Bytes::from_static(b"t2345")),
            Err(SendError::TooLarge(_, 4))
        ));
        assert_eq!(hook.offered.load(SeqCst), 2);
        // Queued frames are counted, and uncounted when the queue refuses.
        tx.try_send(Bytes::from_static(b"q1")).unwrap();
        assert!(matches!(
            tx.try_send(Bytes::from_static(b"q2")),
            Err(SendError::Busy(_))
        ));
        assert_eq!(hook.queued.load(SeqCst), 1);
        // A `send` dropped while waiting for room uncounts its frame too.
        let waiting = tx.send(Bytes::from_static(b"q3"));
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(20), waiting)
                .await
                .is_err()
        );
        assert_eq!(hook.queued.load(SeqCst), 1);
        assert_eq!(rx.recv().await.unwrap().frame, "q1");
        // The hook's `Closed` is the sender's `Closed`, frame handed back.
        assert!(
            matches!(tx.try_send(Bytes::from_static(b"c1")), Err(SendError::Closed(f)) if f.frame == "c1")
        );
    }

    #[tokio::test]
    async fn a_frame_of_exactly_the_maximum_length_is_sent() {
        let (tx, mut rx) = FrameSender::channel(2);
        let tx = tx.max_frame_len(4);
        tx.try_send(Bytes::from_static(b"1234")).unwrap();
        assert_eq!(rx.recv().await.unwrap().frame, "1234");
        assert!(matches!(
            tx.try_send(Bytes::from_static(b"12345")),
            Err(SendError::TooLarge(_, 4))
        ));
    }

    #[tokio::test]
    async fn a_message_reaches_the_transport_whole_and_only_once_checked() {
        let (tx, mut rx) = FrameSender::channel(4);
        assert!(!tx.wants_meta());
        let tx = tx.max_frame_len(4).reads_meta();
        assert!(tx.wants_meta());
        let meta = Arc::new(FrameMeta::new().header("Mcp-Method", "ping"));
        let request = Outgoing::request(Bytes::from_static(b"a"), Id::Number(7), "ping")
            .with_meta(Some(meta.clone()));
        tx.try_send(request.clone()).unwrap();
        tx.send(Outgoing::notification(Bytes::from_static(b"b"), "n"))
            .await
            .unwrap();
        tx.send(Bytes::from_static(b"c")).await.unwrap();
        assert!(matches!(
            tx.send(Outgoing::request(
                Bytes::from_static(b"12345"),
                Id::Number(8),
                "x"
            ))
            .await,
            Err(SendError::TooLarge(..))
        ));
        assert_eq!(rx.recv().await.unwrap(), request);
        let second = rx.recv().await.unwrap();
        assert_eq!(second.kind, FrameKind::Notification { method: "n".into() });
        assert_eq!(second.meta, None);
        let third = rx.recv().await.unwrap();
        assert_eq!(
            (third.frame.as_ref(), third.kind),
            (&b"c"[..], FrameKind::Unknown)
        );
        assert!(rx.try_recv().is_err(), "the refused frame was never queued");
    }

    #[cfg(feature = "direct-send")]
    #[tokio::test]
    async fn receive_only_refuses_before_the_direct_send_hook() {
        let hook = Arc::new(Hook::default());
        let (tx, _rx) = FrameSender::channel(4);
        let tx = tx.direct_send(hook.clone()).receive_only();
        assert!(matches!(
            tx.send(Bytes::from_static(b"t1")).await,
            Err(SendError::NotSupported(_))
        ));
        assert_eq!(hook.offered.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert!(hook.taken.lock().unwrap().is_empty());
    }

    /// Takes ids above 10 only, recording each.
    #[derive(Debug, Default)]
    struct Aborts(std::sync::Mutex<Vec<Id>>);

    impl RequestAbort for Aborts {
        fn abort(&self, id: &Id) -> bool {
            self.0.lock().unwrap().push(id.clone());
            matches!(id, Id::Number(n) if *n > 10)
        }
    }

    #[test]
    fn abort_asks_the_transport_and_is_false_without_one() {
        let (tx, _rx) = FrameSender::channel(1);
        assert!(
            !tx.abort(&Id::Number(11)),
            "no sink: the caller must cancel another way"
        );
        let sink = Arc::new(Aborts::default());
        let tx = tx.abort_sink(sink.clone());
        assert!(tx.clone().abort(&Id::Number(11)));
        assert!(!tx.abort(&Id::Number(3)));
        assert_eq!(*sink.0.lock().unwrap(), [Id::Number(11), Id::Number(3)]);
    }
}
