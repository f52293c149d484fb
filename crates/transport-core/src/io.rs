//! [`IoTransport`]: the transport over any byte stream.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};
use mcpwire_codec::{ContentLengthDecoder, DecodeError, LineDecoder};
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream};
use tokio::sync::oneshot;
use tokio::time::Sleep;

use crate::direct::{BoxedWrite, SharedWrite};
use crate::outbound::Outbound;
use crate::writer::Ends;
use crate::{
    Active, CloseReason, FrameSender, Framing, Grants, IoConfig, NonJsonPolicy, Transport,
    TransportError, TransportEvent, TransportInfo,
};

/// How long after one non-JSON report the next may be made.
const NON_JSON_REPORT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);
/// How much of a skipped non-JSON line a report quotes.
const NON_JSON_SAMPLE_LEN: usize = 200;
/// A frame this many read buffers long or longer leaves the read buffer
/// behind with it (see `release_after`).
const LARGE_FRAME_READS: usize = 4;
/// The room the first read is offered. It doubles, up to the read buffer
/// size, each time a read fills what it was offered, so a connection that
/// sees one small answer now and then holds a small buffer, and one that
/// streams reads in full-size chunks after a few reads.
const FIRST_READ: usize = 4 << 10;

type BoxedRead = Pin<Box<dyn AsyncRead + Send>>;

/// A [`Transport`] over any byte stream: a child's pipes, a Unix or TCP
/// socket, an in-memory [`duplex`](tokio::io::duplex), or the current
/// process's stdin and stdout (the server side of stdio).
///
/// # Reading: inline, in the owner's task
///
/// There is no reader task. [`poll_event`](Transport::poll_event) reads from
/// the stream itself, decodes frames as zero-copy slices of its read buffer,
/// and hands one out per grant. A frame therefore costs no task hop and no
/// channel between the socket and its consumer, which is what matters for the
/// latency of sequential calls. (A reader task would have to buffer frames in
/// a channel to decouple itself from the owner, adding a wake-up per frame and
/// a second bound to reason about; reading inline makes the grant itself the
/// only flow control, as the contract wants.)
///
/// The read-ahead is bounded: while no grant is outstanding the transport
/// holds at most one decoded frame plus one read buffer
/// ([`IoConfig::read_buffer_size`], 64 KiB by default) of a partial one, and
/// stops reading; the peer's writes then block in the OS. With a grant, each
/// read asks for at most one read buffer, so a frame in progress never holds
/// more than the maximum frame length plus one read.
///
/// Because reading happens inside `poll_event`, the owner must keep polling
/// `poll_event` (as it does anyway to learn about `Closed`) for frames to
/// flow; nothing is read behind its back.
///
/// # Writing: direct when alone, batched when in a burst
///
/// A frame sent while nothing is queued, the writer task is idle and no other
/// frame was sent in the last 10 µs (a sequential call) is written by the
/// sender itself, in its own task: one non-blocking `writev`, no task hop. (On a multi-threaded runtime
/// a hop through a writer task often crosses threads and costs more than the
/// pipe round trip.) Frames sent in a burst go to the bounded queue, which a
/// writer task drains (both made on first need, on the runtime the transport
/// was made on, so construction needs a tokio runtime): woken by the first frame of a burst, it yields once so the
/// burst's other senders can queue theirs, then takes every frame queued as
/// one batch, coalesces
/// small frames into one buffer, passes large ones by reference in a vectored
/// write, and flushes only when the queue is empty. Whatever a direct write
/// cannot finish (a full pipe) is handed to the writer task, which finishes
/// it before anything sent after it, so frames never reorder. The write half
/// sits behind a mutex held for one non-blocking poll at a time, never across
/// an await.
///
/// A write half that remembers only the last waker it was polled with (as
/// tokio's `stdout()` does) is safe to use: a sender
/// never polls it while the writer task is part-way through a write or
/// flush (the frame is handed to the writer task instead), and polls it with
/// a waker that wakes the writer task, which finishes whatever the sender's
/// poll left pending.
///
/// A write error reports the frames that were not written as
/// [`TransportEvent::Undelivered`] and closes the queue (later sends get
/// `Closed`); the read side stays open until the peer ends it.
///
/// # Closing
///
/// The transport closes when the stream ends (`Closed(Eof)`, after the last
/// frame, including an unterminated last line), on a read error
/// (`Closed(Error)`), on an oversized frame (a non-fatal
/// [`TransportError::Frame`] event, then `Closed(FrameTooLong)`), or when the
/// owner closes it (`Closed(Local)`: reading stops at once, queued frames are
/// written within [`IoConfig::flush_timeout`], then the write half is shut
/// down). Dropping it stops the writer task at once.
pub struct IoTransport {
    reader: Option<BoxedRead>,
    buf: BytesMut,
    /// How many large frames were read into a written frame's allocation.
    #[cfg(test)]
    spare_reuses: usize,
    decoder: Decoder,
    read_buffer_size: usize,
    /// The room the next read is offered (see [`FIRST_READ`]).
    read_size: usize,
    non_json: NonJsonPolicy,
    non_json_skipped: u64,
    non_json_last_report: Option<Instant>,
    grants: Grants,
    /// One decoded frame waiting for a grant.
    ready: Option<Bytes>,
    /// The stream has no more bytes for us.
    read_eof: bool,
    /// The peer can write no more: a pending read counts as the end.
    peer_gone: bool,
    /// Why the transport ends, reported once the frames before it are out.
    end: Option<CloseReason>,
    closed_reported: bool,
    waker: Option<Waker>,
    sender: FrameSender,
    /// What the writer reports when a write fails (an error, then the
    /// frames it could not write), sent once: a oneshot costs an idle
    /// connection a few bytes where a channel's first block of slots would
    /// cost kilobytes.
    writer_failed: Option<oneshot::Receiver<Vec<TransportEvent>>>,
    /// Those events, delivered one per `poll_event`.
    writer_events: std::vec::IntoIter<TransportEvent>,
    /// The write half, and the writer task and queue once made.
    outbound: Arc<Outbound>,
    writer_shutdown: Option<oneshot::Sender<()>>,
    flush_timeout: std::time::Duration,
    close: LocalClose,
    info: TransportInfo,
}

enum LocalClose {
    NotStarted,
    Flushing(Pin<Box<Sleep>>),
    Done,
}

enum Decoder {
    Line(LineDecoder),
    ContentLength(ContentLengthDecoder),
}

impl Decoder {
    fn new(framing: Framing, max: usize) -> Self {
        match framing {
            Framing::Newline => Decoder::Line(LineDecoder::with_max_frame_len(max)),
            Framing::ContentLength => {
                Decoder::ContentLength(ContentLengthDecoder::with_max_frame_len(max))
            }
        }
    }

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        match self {
            Decoder::Line(d) => d.decode(buf),
            Decoder::ContentLength(d) => d.decode(buf),
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        match self {
            Decoder::Line(d) => d.decode_eof(buf),
            Decoder::ContentLength(d) => d.decode_eof(buf),
        }
    }

    fn max_frame_len(&self) -> usize {
        match self {
            Decoder::Line(d) => d.max_frame_len(),
            Decoder::ContentLength(d) => d.max_frame_len(),
        }
    }

    fn is_lines(&self) -> bool {
        matches!(self, Decoder::Line(_))
    }
}

impl std::fmt::Debug for IoTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IoTransport")
            .field("info", &self.info)
            .field("grants", &self.grants.remaining())
            .field("buffered", &self.buffered_len())
            .field("closed_reported", &self.closed_reported)
            .finish_non_exhaustive()
    }
}

impl IoTransport {
    /// A transport reading frames from `reader` and writing them to `writer`.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime: its writer task is spawned on the runtime it
    /// is made on (`tokio::runtime::Handle::current`).
    pub fn new<R, W>(reader: R, writer: W, config: IoConfig) -> Self
    where
        R: AsyncRead + Send + 'static,
        W: AsyncWrite + Send + 'static,
    {
        let writer: BoxedWrite = Box::pin(writer);
        let shared = Arc::new(SharedWrite::new(writer, config.framing));
        let (failed_tx, writer_failed) = oneshot::channel();
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let (framing, capacity) = (config.framing, config.outbound_capacity);
        let (shutdown, failed) = (shutdown_rx, failed_tx);
        let outbound = Outbound::new(shared, framing, capacity, Ends { shutdown, failed });
        let outbound = Arc::new(outbound);
        let sender = FrameSender::lazy(outbound.clone())
            .max_frame_len(config.max_frame_len)
            .reject_newlines(config.framing == Framing::Newline);
        Self {
            reader: Some(Box::pin(reader)),
            buf: BytesMut::new(),
            #[cfg(test)]
            spare_reuses: 0,
            decoder: Decoder::new(config.framing, config.max_frame_len),
            read_buffer_size: config.read_buffer_size,
            read_size: FIRST_READ.min(config.read_buffer_size),
            non_json: config.non_json,
            non_json_skipped: 0,
            non_json_last_report: None,
            grants: Grants::default(),
            ready: None,
            read_eof: false,
            peer_gone: false,
            end: None,
            closed_reported: false,
            waker: None,
            sender,
            writer_failed: Some(writer_failed),
            writer_events: Vec::new().into_iter(),
            outbound,
            writer_shutdown: Some(shutdown_tx),
            flush_timeout: config.flush_timeout,
            close: LocalClose::NotStarted,
            info: TransportInfo::new("io", "byte stream"),
        }
    }

    /// A transport over one object that is both readable and writable (a
    /// socket, a duplex pipe), split into halves.
    pub fn from_stream<S>(stream: S, config: IoConfig) -> Self
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (r, w) = tokio::io::split(stream);
        Self::new(r, w, config)
    }

    /// A transport connected to an in-memory peer, for tests and for
    /// scripting a fake server: write frames (with their framing) to the
    /// returned stream and the transport receives them; read from it to see
    /// what the transport sent.
    ///
    /// The in-memory pipe holds at most one read buffer in each direction, so
    /// a peer that writes while the transport is paused blocks like a real one.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, as [`new`](Self::new).
    pub fn pair(config: IoConfig) -> (Self, DuplexStream) {
        let (ours, theirs) = tokio::io::duplex(config.read_buffer_size);
        let transport =
            Self::from_stream(ours, config).with_info(TransportInfo::new("io", "in-memory peer"));
        (transport, theirs)
    }

    /// Replaces what [`info`](Transport::info) reports.
    #[must_use]
    pub fn with_info(mut self, info: TransportInfo) -> Self {
        self.info = info;
        self
    }

    /// Tells the transport that the peer can write nothing more (its process
    /// exited), even if the stream does not end (a grandchild may still hold
    /// the pipe open): once a read finds no data waiting, the stream counts as
    /// ended. Frames already written are still delivered first.
    pub fn peer_exited(&mut self) {
        self.peer_gone = true;
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    /// Bytes received and held for the owner: the read buffer plus a decoded
    /// frame waiting for a grant. Bounded as described in the type docs.
    pub fn buffered_len(&self) -> usize {
        self.buf.len() + self.ready.as_ref().map_or(0, Bytes::len)
    }

    /// After a large frame, starts a fresh read buffer holding only the
    /// bytes after it. The frame is a zero-copy slice of the old buffer, so
    /// the old allocation (grown to fit the frame) is freed as soon as the
    /// consumer drops the frame, instead of staying resident, as large as
    /// the largest frame ever received, for the rest of the connection.
    ///
    /// Nothing here keeps a hold on it: the frame is its allocation's only
    /// owner, so a consumer may decode it in place
    /// ([`Payload::take`](mcpwire_codec::jsonrpc::Payload::take) turns it
    /// into the answer's largest string) instead of copying out of it.
    ///
    /// A spare allocation the writer left (a large frame it wrote) is
    /// dropped here too: it serves only a large frame read next.
    fn release_after(&mut self, frame: &Bytes) {
        if frame.len() >= LARGE_FRAME_READS * self.read_buffer_size {
            self.buf = BytesMut::from(&self.buf[..]);
        }
        drop(self.outbound.shared.take_spare());
    }

    /// Makes room for one more read: in the allocation of a large frame
    /// just written if this one has grown large too (its pages are mapped
    /// already), otherwise as
    /// [`grow_frame_buffer`](mcpwire_codec::grow_frame_buffer) says (a large
    /// frame gets room for the largest one in one step, not a chain of
    /// doublings).
    fn make_room(&mut self) {
        let max = self.decoder.max_frame_len();
        let whole = mcpwire_codec::grow_frame_buffer_len(max);
        if self.buf.len() + self.read_size >= mcpwire_codec::LARGE_FRAME_LEN
            && self.buf.capacity() < whole
            && let Some(mut spare) = self.outbound.shared.take_spare()
            && spare.capacity() >= whole
        {
            spare.extend_from_slice(&self.buf);
            self.buf = spare;
            #[cfg(test)]
            {
                self.spare_reuses += 1;
            }
            return;
        }
        mcpwire_codec::grow_frame_buffer(&mut self.buf, self.read_size, max);
    }

    /// The capacity of the read buffer (for tests of its bound).
    #[cfg(test)]
    fn read_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// How many non-JSON lines were skipped so far.
    pub fn non_json_skipped(&self) -> u64 {
        self.non_json_skipped
    }

    /// Remembers who to wake when a grant arrives (cloning the waker only if
    /// it changed).
    fn park(&mut self, cx: &Context<'_>) {
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            self.waker = Some(cx.waker().clone());
        }
    }

    /// Ends the transport: stops reading and lets the writer finish what is
    /// queued on its own. Returns the `Closed` event.
    fn finish(&mut self, reason: CloseReason) -> Poll<Option<TransportEvent>> {
        self.closed_reported = true;
        self.stop_reading();
        if let Some(tx) = self.writer_shutdown.take() {
            let _ = tx.send(());
            self.outbound.start_writer();
        }
        Poll::Ready(Some(TransportEvent::Closed(reason)))
    }

    fn stop_reading(&mut self) {
        self.reader = None;
        self.ready = None;
        self.buf = BytesMut::new();
    }

    /// Applies the non-JSON policy to a decoded line. `Err` carries an event
    /// to report instead of the frame; `Ok(None)` means skip silently.
    fn screen(&mut self, frame: Bytes) -> Result<Option<Bytes>, TransportEvent> {
        if self.non_json == NonJsonPolicy::Deliver
            || !self.decoder.is_lines()
            || looks_like_json(&frame)
        {
            return Ok(Some(frame));
        }
        self.non_json_skipped += 1;
        let now = Instant::now();
        let due = self
            .non_json_last_report
            .is_none_or(|last| now.duration_since(last) >= NON_JSON_REPORT_INTERVAL);
        if !due {
            return Ok(None);
        }
        self.non_json_last_report = Some(now);
        let end = frame.len().min(NON_JSON_SAMPLE_LEN);
        Err(TransportEvent::Error(TransportError::NonJson {
            skipped: self.non_json_skipped,
            sample: String::from_utf8_lossy(&frame[..end]).into_owned(),
        }))
    }

    /// The next event the writer reported, if any.
    fn poll_writer_events(&mut self, cx: &mut Context<'_>) -> Option<TransportEvent> {
        if let Some(rx) = self.writer_failed.as_mut()
            && let Poll::Ready(events) = Pin::new(rx).poll(cx)
        {
            self.writer_failed = None;
            // An error means the writer ended without failing.
            self.writer_events = events.unwrap_or_default().into_iter();
        }
        self.writer_events.next()
    }

    /// Reads once into the buffer. `Ready(true)` when bytes or the end
    /// arrived, `Ready(false)` on a fatal error (recorded in `end`).
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        if self.reader.is_some() && self.buf.capacity() - self.buf.len() < self.read_size {
            self.make_room();
        }
        let Some(reader) = self.reader.as_mut() else {
            self.read_eof = true;
            return Poll::Ready(true);
        };
        // Without a grant the read-ahead stops at one read buffer in total.
        let room = if self.grants.any() {
            self.read_size
        } else {
            self.read_buffer_size
                .saturating_sub(self.buf.len())
                .min(self.read_size)
        };
        let mut limited = (&mut self.buf).limit(room);
        match tokio_util::io::poll_read_buf(reader.as_mut(), cx, &mut limited) {
            Poll::Ready(Ok(0)) => {
                self.read_eof = true;
                Poll::Ready(true)
            }
            Poll::Ready(Ok(n)) => {
                if n == room {
                    self.read_size = (self.read_size * 2).min(self.read_buffer_size);
                }
                Poll::Ready(true)
            }
            Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => Poll::Ready(true),
            Poll::Ready(Err(e)) => {
                self.end = Some(CloseReason::Error(e.into()));
                self.reader = None;
                Poll::Ready(false)
            }
            Poll::Pending if self.peer_gone => {
                self.read_eof = true;
                Poll::Ready(true)
            }
            Poll::Pending => {
                if self.buf.is_empty() {
                    // Idle: nothing partial is held, so let the allocation
                    // go until the peer writes again (the next read gets a
                    // fresh one); an idle connection then holds no buffer.
                    self.buf = BytesMut::new();
                }
                Poll::Pending
            }
        }
    }
}

/// The cheap check of [`NonJsonPolicy::Skip`]: JSON-RPC messages are objects
/// and batches are arrays.
fn looks_like_json(line: &[u8]) -> bool {
    matches!(
        line.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

impl Transport for IoTransport {
    fn sender(&self) -> FrameSender {
        self.sender.clone()
    }

    fn set_active(&mut self, active: Active) {
        self.grants.set(active);
        if self.grants.any()
            && let Some(w) = self.waker.take()
        {
            w.wake();
        }
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        if self.closed_reported {
            return Poll::Ready(None);
        }
        // What the writer reports concerns frames the owner sent earlier, so
        // it goes first, and always before `Closed`.
        if let Some(event) = self.poll_writer_events(cx) {
            return Poll::Ready(Some(event));
        }
        if !matches!(self.close, LocalClose::NotStarted) {
            return self.finish(CloseReason::Local);
        }
        loop {
            if self.ready.is_some() {
                if self.grants.take() {
                    return Poll::Ready(self.ready.take().map(TransportEvent::Frame));
                }
                self.park(cx);
                return Poll::Pending;
            }
            if let Some(reason) = self.end.take() {
                return self.finish(reason);
            }
            let decoded = if self.read_eof {
                self.decoder.decode_eof(&mut self.buf)
            } else {
                self.decoder.decode(&mut self.buf)
            };
            match decoded {
                Ok(Some(frame)) => {
                    self.release_after(&frame);
                    match self.screen(frame) {
                        Ok(frame) => self.ready = frame,
                        Err(event) => return Poll::Ready(Some(event)),
                    }
                    continue;
                }
                Ok(None) if self.read_eof => {
                    self.end = Some(CloseReason::Eof);
                    continue;
                }
                Ok(None) => {}
                Err(e) if self.read_eof => {
                    // A frame cut short by the end of the stream: worth
                    // saying, but the stream simply ended.
                    self.end = Some(CloseReason::Eof);
                    self.stop_reading();
                    return Poll::Ready(Some(TransportEvent::Error(e.into())));
                }
                Err(e @ DecodeError::FrameTooLong { .. }) => {
                    self.end = Some(CloseReason::FrameTooLong {
                        max: self.decoder.max_frame_len(),
                    });
                    self.stop_reading();
                    return Poll::Ready(Some(TransportEvent::Error(e.into())));
                }
                Err(e) => {
                    // A malformed header: frame boundaries are lost for good.
                    self.end = Some(CloseReason::Error(e.into()));
                    self.stop_reading();
                    continue;
                }
            }
            // More bytes are needed. Without a grant, read ahead only up to
            // one read buffer, then let the peer block.
            if !self.grants.any() && self.buf.len() >= self.read_buffer_size {
                self.park(cx);
                return Poll::Pending;
            }
            if self.poll_read(cx).is_pending() {
                // The reader holds our waker; a grant also wakes us.
                self.park(cx);
                return Poll::Pending;
            }
        }
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match &mut self.close {
                LocalClose::NotStarted => {
                    self.stop_reading();
                    if let Some(tx) = self.writer_shutdown.take() {
                        let _ = tx.send(());
                        self.outbound.start_writer();
                    }
                    self.close =
                        LocalClose::Flushing(Box::pin(tokio::time::sleep(self.flush_timeout)));
                }
                LocalClose::Flushing(deadline) => {
                    if self.outbound.poll_finished(cx).is_pending() {
                        if deadline.as_mut().poll(cx).is_pending() {
                            return Poll::Pending;
                        }
                        self.outbound.abort();
                        self.outbound.shared.release();
                    }
                    self.close = LocalClose::Done;
                }
                LocalClose::Done => return Poll::Ready(()),
            }
        }
    }

    fn info(&self) -> TransportInfo {
        self.info.clone()
    }
}

impl Drop for IoTransport {
    fn drop(&mut self) {
        self.outbound.abort();
        // Senders may outlive us and share the write half: drop it now, which
        // closes it (a child's stdin).
        self.outbound.shared.release();
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;
    use crate::TransportExt;

    #[tokio::test]
    async fn a_large_frame_does_not_leave_its_buffer_behind() {
        let config = IoConfig::new().read_buffer_size(4096);
        let (mut transport, mut peer) = IoTransport::pair(config);
        // Not a power of two, so the grown buffer has room left after it.
        const LEN: usize = (1 << 20) + 1000;
        let mut big = vec![b' '; LEN];
        big[0] = b'{';
        big[LEN - 2] = b'}';
        big[LEN - 1] = b'\n';
        let writer = tokio::spawn(async move {
            peer.write_all(&big).await.expect("write");
            peer.write_all(b"{}\n").await.expect("write");
            peer
        });
        transport.set_active(Active::Many(
            std::num::NonZeroU32::new(2).expect("non-zero"),
        ));
        match transport.next_event().await {
            Some(TransportEvent::Frame(f)) => assert_eq!(f.len(), LEN - 1),
            other => panic!("{other:?}"),
        }
        // The buffer that held the megabyte is not the read buffer any
        // more.
        assert!(
            transport.read_capacity() < 64 << 10,
            "read buffer kept {} bytes",
            transport.read_capacity()
        );
        match transport.next_event().await {
            Some(TransportEvent::Frame(f)) => assert_eq!(&f[..], b"{}"),
            other => panic!("{other:?}"),
        }
        drop(writer.await.expect("writer"));
        transport.close().await;
    }

    #[tokio::test]
    async fn reads_start_small_and_grow_to_the_read_buffer_size_under_load() {
        let (mut transport, mut peer) = IoTransport::pair(IoConfig::new());
        transport.set_active(Active::Many(
            std::num::NonZeroU32::new(u32::MAX).expect("non-zero"),
        ));
        peer.write_all(b"{\"a\":1}\n").await.expect("write");
        match transport.next_event().await {
            Some(TransportEvent::Frame(f)) => assert_eq!(&f[..], b"{\"a\":1}"),
            other => panic!("{other:?}"),
        }
        // One small answer: the buffer is what the first read was offered,
        // not a full read buffer.
        assert_eq!(transport.read_size, FIRST_READ);
        // Once a read finds nothing, an idle connection holds no buffer.
        let idle = std::future::poll_fn(|cx| Poll::Ready(transport.poll_event(cx))).await;
        assert!(idle.is_pending());
        assert_eq!(
            transport.read_capacity(),
            0,
            "an idle connection holds a buffer"
        );
        // A stream of lines fills every read: the reads grow to full size.
        const LINES: usize = 8192;
        let lines = line(64, b' ').repeat(LINES);
        let writer = tokio::spawn(async move {
            peer.write_all(&lines).await.expect("write");
            peer
        });
        for _ in 0..LINES {
            match transport.next_event().await {
                Some(TransportEvent::Frame(f)) => assert_eq!(f.len(), 63),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(transport.read_size, 64 << 10);
        drop(writer.await.expect("writer"));
        transport.close().await;
    }

    /// A JSON object line of `len` bytes (newline included) whose filler is
    /// `fill`.
    fn line(len: usize, fill: u8) -> Vec<u8> {
        let mut v = vec![fill; len];
        v[0] = b'{';
        v[len - 2] = b'}';
        v[len - 1] = b'\n';
        v
    }

    #[tokio::test]
    async fn a_large_frame_is_the_only_owner_of_its_allocation() {
        let (mut transport, mut peer) = IoTransport::pair(IoConfig::new());
        transport.set_active(Active::Many(
            std::num::NonZeroU32::new(8).expect("non-zero"),
        ));
        const LEN: usize = 3 << 20;
        let mut both = line(LEN, b' ');
        both.extend_from_slice(&line(LEN, b'\t'));
        let writer = tokio::spawn(async move {
            peer.write_all(&both).await.expect("write");
            peer
        });
        for fill in [b' ', b'\t'] {
            let frame = match transport.next_event().await {
                Some(TransportEvent::Frame(f)) => f,
                other => panic!("{other:?}"),
            };
            assert_eq!(frame.len(), LEN - 1);
            // Nothing in the transport shares it, so the consumer may
            // reuse the allocation (decode in place) instead of copying.
            let owned = frame.try_into_mut().expect("the only owner");
            assert!(owned[1..LEN - 2].iter().all(|&b| b == fill), "intact");
        }
        drop(writer.await.expect("writer"));
        transport.close().await;
    }

    #[tokio::test]
    async fn a_large_answer_is_read_into_the_large_request_just_written() {
        let (mut transport, peer) = IoTransport::pair(IoConfig::new());
        transport.set_active(Active::Many(
            std::num::NonZeroU32::new(8).expect("non-zero"),
        ));
        const LEN: usize = 3 << 20;
        // The peer reads each line, then answers with a line as long.
        let echo = tokio::spawn(async move {
            let (r, mut w) = tokio::io::split(peer);
            let mut lines = tokio::io::BufReader::new(r);
            let mut got = Vec::new();
            for fill in [b'a', b'b'] {
                got.clear();
                tokio::io::AsyncBufReadExt::read_until(&mut lines, b'\n', &mut got)
                    .await
                    .expect("read");
                w.write_all(&line(got.len(), fill)).await.expect("write");
            }
        });
        let sender = transport.sender();
        // Encoded the way the client encodes a large request: with room for
        // the largest frame.
        let room = mcpwire_codec::grow_frame_buffer_len(transport.decoder.max_frame_len());
        let mut request = Vec::with_capacity(room);
        request.extend_from_slice(&line(LEN, b' ')[..LEN - 1]);
        let request = Bytes::from(request);
        let at = request.as_ptr();
        sender.send(request).await.expect("sent");
        let answer = match transport.next_event().await {
            Some(TransportEvent::Frame(f)) => f,
            other => panic!("{other:?}"),
        };
        assert!(answer[1..LEN - 2].iter().all(|&b| b == b'a'), "intact");
        assert_eq!(answer.as_ptr(), at, "read where the request was");
        assert_eq!(transport.spare_reuses, 1);
        // A request still held elsewhere is never reused.
        let mut held = Vec::with_capacity(room);
        held.extend_from_slice(&line(LEN, b' ')[..LEN - 1]);
        let held = Bytes::from(held);
        sender.send(held.clone()).await.expect("sent");
        let answer = match transport.next_event().await {
            Some(TransportEvent::Frame(f)) => f,
            other => panic!("{other:?}"),
        };
        assert!(answer[1..LEN - 2].iter().all(|&b| b == b'b'), "intact");
        assert!(held[1..LEN - 2].iter().all(|&b| b == b' '), "untouched");
        assert_eq!(transport.spare_reuses, 1);
        echo.await.expect("peer");
        transport.close().await;
    }
}
