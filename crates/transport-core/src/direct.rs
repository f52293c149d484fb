//! The write half shared by the writer task and the senders, so a frame can
//! be written straight from the sender's task when nothing is queued.
//!
//! Why: a frame that goes through the writer task costs a task wake-up, and on
//! a multi-threaded runtime that wake-up often lands on another worker thread
//! (tens of microseconds, more than the pipe round trip itself). When the
//! queue is empty and the writer task idle, the sender instead makes one
//! non-blocking write attempt itself; only what does not fit at once (a full
//! pipe) is handed to the writer task, which then finishes it before anything
//! queued after it. Order is kept because a direct write is only allowed while
//! the writer has nothing: the check and the write happen under one lock.
//!
//! Frames sent in a burst (closer than 10 µs apart) skip the direct path: the
//! writer task coalesces them, which a system call per frame could not.
//!
//! # Wake-ups
//!
//! A write half may remember only the waker it was last polled with (tokio's
//! `Stdout` keeps one in the handle of its blocking job; a pipe or socket
//! keeps one per direction). Two rules keep the writer task from being
//! forgotten by it:
//!
//! - While the writer task is part-way through a write or flush of its own
//!   (`busy`: from taking the work to finishing it, including every await
//!   in between), no sender polls the write half. A frame that finds it busy
//!   is handed to the writer task whole, to be written as soon as the task's
//!   own write or flush is done.
//! - A sender polls with a waker that wakes the writer task (through the
//!   same [`Notify`] that hands it work), never with a no-op waker. If the
//!   write half answers `Pending`, the frame's rest or its flush is the
//!   writer task's, and the writer task's own next poll registers its own
//!   waker before anything could be missed: the sender held the lock
//!   throughout, and the writer task polls under the same lock.
//!
//! The lock is a plain mutex held only for one non-blocking poll, never across
//! an await.

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::io::AsyncWrite;
use tokio::sync::Notify;

use crate::Framing;

/// The most slices handed to one vectored write (below every `IOV_MAX`).
const MAX_SLICES: usize = 64;
/// A direct write of a newline-framed frame up to this size copies the frame
/// and its newline into one buffer and makes one plain `write`: cheaper for
/// the kernel than a two-slice `writev`, and the copy is small.
const JOIN_MAX: usize = 4 << 10;
/// Frames sent closer together than this count as a burst and are left to
/// the writer task to batch. A sequential call's round trip (the gap between
/// two of its sends) is well above it; back-to-back sends are well below.
const BURST_GAP: Duration = Duration::from_micros(10);

/// The boxed write half every transport writer works on.
pub(crate) type BoxedWrite = Pin<Box<dyn AsyncWrite + Send>>;

/// The write half and the bookkeeping that keeps frames in order.
pub(crate) struct SharedWrite {
    state: Mutex<WriteState>,
    /// Wakes the writer task when a direct write left work behind.
    pub(crate) notify: Arc<WakeWriter>,
    /// The waker a sender polls the write half with: it wakes the writer
    /// task, through `notify`.
    waker: Waker,
    framing: Framing,
    /// A spare allocation is set (read without the lock on every frame).
    has_spare: AtomicBool,
}

/// Wakes the writer task; as a [`Waker`], what a sender's poll of the write
/// half registers.
#[derive(Debug, Default)]
pub(crate) struct WakeWriter(Notify);

impl WakeWriter {
    pub(crate) fn notify(&self) {
        self.0.notify_one();
    }

    /// Completes once [`notify`](Self::notify) was called (at once if it was
    /// called while nobody waited).
    pub(crate) async fn notified(&self) {
        self.0.notified().await;
    }
}

impl Wake for WakeWriter {
    fn wake(self: Arc<Self>) {
        self.notify();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.notify();
    }
}

struct WriteState {
    /// `None` once the writer has finished or failed, or the transport is gone.
    w: Option<BoxedWrite>,
    /// Frames on their way through the queue (or handed to the writer task
    /// by a sender) and not yet written. Direct writes need it to be zero.
    queued: usize,
    /// A frame, or the rest of one, that a sender handed to the writer task.
    hand_off: Option<HandOff>,
    /// A direct write could not complete its flush: the writer task must.
    needs_flush: bool,
    /// The writer task is part-way through a hand-off or a flush it took
    /// with `take_work` and has not finished it. No sender polls the write
    /// half meanwhile. (While it writes a batch from the queue, `queued`
    /// counts the batch's frames until it is done, which keeps senders out
    /// the same way.)
    busy: bool,
    /// Closing has started: no more direct writes.
    closed: bool,
    /// When a frame was last sent, to tell a burst from a lone frame.
    last_send: Option<Instant>,
    /// Frames sent in a row, each closer than [`BURST_GAP`] to the one before.
    close_run: u32,
    /// The writer's queue exists (see [`SharedWrite::queue_made`]).
    queue_made: bool,
    /// Where a small frame and its newline are joined for one write; kept
    /// for reuse, never larger than [`JOIN_MAX`] plus the newline.
    joined: Vec<u8>,
    /// The allocation of the last large frame written, if nothing else held
    /// it: the reader takes it for a large frame it reads next, whose pages
    /// are then already mapped (a large request is often followed by a
    /// large answer), or drops it when it reads any frame first.
    spare: Option<BytesMut>,
}

/// What became of a frame offered for a direct write.
pub(crate) enum Direct {
    /// Written.
    Done,
    /// Written, but (all or the rest of it, or its flush) left to the
    /// writer task, which must be running.
    Left,
    /// Something is ahead of it: queue it (it is counted as queued).
    Queue(Bytes),
    /// The write half is gone: the transport is closed.
    Closed(Bytes),
}

/// What a sender handed to the writer task: the rest of a frame a direct
/// write could not finish, or a whole frame that found the writer busy.
pub(crate) struct HandOff {
    /// The whole frame, to hand back if it cannot be written.
    pub(crate) frame: Bytes,
    /// The bytes still to write, framing included.
    pub(crate) chunks: Vec<Bytes>,
}

/// The writer task's next piece of work, taken under the lock (which marks
/// the writer busy until [`SharedWrite::done`]).
pub(crate) enum Work {
    /// Write this, then flush if nothing else is queued.
    HandOff(HandOff),
    /// Finish the flush a direct write started.
    Flush,
    /// Nothing: wait for the queue or a notification.
    Idle,
}

impl fmt::Debug for SharedWrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedWrite").finish_non_exhaustive()
    }
}

static NEWLINE: &[u8] = b"\n";

impl SharedWrite {
    pub(crate) fn new(w: BoxedWrite, framing: Framing) -> Self {
        let notify = Arc::new(WakeWriter::default());
        Self {
            state: Mutex::new(WriteState {
                w: Some(w),
                queued: 0,
                hand_off: None,
                needs_flush: false,
                busy: false,
                closed: false,
                last_send: None,
                close_run: 0,
                queue_made: false,
                joined: Vec::new(),
                spare: None,
            }),
            has_spare: AtomicBool::new(false),
            waker: Waker::from(notify.clone()),
            notify,
            framing,
        }
    }

    fn lock(&self) -> MutexGuard<'_, WriteState> {
        // A panic while holding the lock cannot leave the state half-updated
        // in a way that matters more than the panic itself.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The framed form of one frame, as chunks to write (no allocation for
    /// newline framing).
    fn chunks(&self, frame: &Bytes) -> [Bytes; 2] {
        match self.framing {
            Framing::Newline => [frame.clone(), Bytes::from_static(NEWLINE)],
            Framing::ContentLength => [
                Bytes::from(format!("Content-Length: {}\r\n\r\n", frame.len())),
                frame.clone(),
            ],
        }
    }

    /// Writes `frame` now if nothing is ahead of it.
    pub(crate) fn try_direct(&self, frame: Bytes) -> Direct {
        let mut st = self.lock();
        let st = &mut *st;
        if st.w.is_none() {
            return Direct::Closed(frame);
        }
        // Frames sent in a burst go through the queue, where the writer task
        // coalesces them into few system calls; a lone frame (a sequential
        // call) is written at once. Until the queue exists, a pair of frames
        // (a notification and the request after it, as after a handshake)
        // is written directly too: making the queue and keeping its writer
        // task would cost an idle connection more than the second write.
        let now = Instant::now();
        let close = st
            .last_send
            .replace(now)
            .is_some_and(|last| now.duration_since(last) < BURST_GAP);
        st.close_run = if close {
            st.close_run.saturating_add(1)
        } else {
            0
        };
        let burst = close && (st.queue_made || st.close_run >= 2);
        if burst || st.queued > 0 || st.hand_off.is_some() || st.closed {
            st.queued += 1;
            return Direct::Queue(frame);
        }
        if st.busy || st.needs_flush {
            // The writer task owns a write or flush in progress: polling the
            // write half now could take over that operation's wake-up or its
            // result. The writer task writes this frame next.
            let chunks = if self.framing == Framing::Newline && frame.len() <= JOIN_MAX {
                // One write for the writer task too, as a direct write would.
                let mut joined = Vec::with_capacity(frame.len() + 1);
                joined.extend_from_slice(&frame);
                joined.push(b'\n');
                vec![Bytes::from(joined)]
            } else {
                self.chunks(&frame).to_vec()
            };
            return self.hand_off(st, frame, chunks);
        }
        let Some(w) = st.w.as_mut() else {
            return Direct::Closed(frame);
        };
        let mut cx = Context::from_waker(&self.waker);
        if self.framing == Framing::Newline && frame.len() <= JOIN_MAX {
            st.joined.clear();
            st.joined.extend_from_slice(&frame);
            st.joined.push(b'\n');
            let written = match w.as_mut().poll_write(&mut cx, &st.joined) {
                Poll::Ready(Ok(n)) => n,
                _ => 0,
            };
            if written < st.joined.len() {
                // A full pipe, an error or a short write: the writer task
                // finishes the rest or reports the frame undelivered.
                let rest = Bytes::copy_from_slice(&st.joined[written..]);
                return self.hand_off(st, frame, vec![rest]);
            }
            let flushed = matches!(w.as_mut().poll_flush(&mut cx), Poll::Ready(Ok(())));
            return self.written(st, flushed);
        }
        let chunks = self.chunks(&frame);
        let (mut idx, mut off) = (0, 0);
        while idx < chunks.len() {
            match poll_write_chunks(w.as_mut(), &mut cx, &chunks, idx, off) {
                Poll::Ready(Ok(n)) if n > 0 => advance(&chunks, &mut idx, &mut off, n),
                // A full pipe, an error, or a zero write: the writer task takes
                // over and either finishes the frame or reports it undelivered.
                _ => {
                    let mut rest = vec![chunks[idx].slice(off..)];
                    rest.extend_from_slice(&chunks[idx + 1..]);
                    return self.hand_off(st, frame, rest);
                }
            }
        }
        let flushed = matches!(w.as_mut().poll_flush(&mut cx), Poll::Ready(Ok(())));
        self.written(st, flushed)
    }

    /// Hands `chunks` (all or the rest of `frame`) to the writer task, which
    /// writes them before anything queued after them, or reports `frame`
    /// undelivered.
    fn hand_off(&self, st: &mut WriteState, frame: Bytes, chunks: Vec<Bytes>) -> Direct {
        st.hand_off = Some(HandOff { frame, chunks });
        st.queued += 1;
        self.notify.notify();
        Direct::Left
    }

    /// A direct write is complete; a flush it could not finish is left to
    /// the writer task.
    fn written(&self, st: &mut WriteState, flushed: bool) -> Direct {
        if !flushed {
            st.needs_flush = true;
            self.notify.notify();
            return Direct::Left;
        }
        Direct::Done
    }

    /// `n` frames counted as queued were written or will never be.
    /// How many frames are counted as on their way through the queue.
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.lock().queued
    }

    pub(crate) fn unqueue(&self, n: usize) {
        let mut st = self.lock();
        st.queued = st.queued.saturating_sub(n);
    }

    /// The writer task's next piece of work; anything but [`Work::Idle`]
    /// marks the writer busy until [`done`](Self::done).
    pub(crate) fn take_work(&self) -> Work {
        let mut st = self.lock();
        let work = if let Some(hand_off) = st.hand_off.take() {
            Work::HandOff(hand_off)
        } else if std::mem::take(&mut st.needs_flush) {
            Work::Flush
        } else {
            return Work::Idle;
        };
        st.busy = true;
        work
    }

    /// The writer task finished its work, which carried `frames` frames
    /// counted as queued.
    pub(crate) fn done(&self, frames: usize) {
        let mut st = self.lock();
        st.queued = st.queued.saturating_sub(frames);
        st.busy = false;
    }

    /// The frame handed to the writer task and not yet taken, if any (on
    /// failure, to report it undelivered).
    pub(crate) fn take_hand_off(&self) -> Option<HandOff> {
        self.lock().hand_off.take()
    }

    /// Keeps the allocation of `frame`, just written, as the spare if it is
    /// large and nothing else holds it.
    pub(crate) fn recycle(&self, frame: Bytes) {
        if frame.len() < mcpwire_codec::LARGE_FRAME_LEN {
            return;
        }
        if let Ok(mut buf) = frame.try_into_mut() {
            buf.clear();
            self.lock().spare = Some(buf);
            self.has_spare.store(true, Ordering::Release);
        }
    }

    /// The spare allocation, if there is one.
    pub(crate) fn take_spare(&self) -> Option<BytesMut> {
        if !self.has_spare.load(Ordering::Acquire) {
            return None;
        }
        self.has_spare.store(false, Ordering::Release);
        self.lock().spare.take()
    }

    /// True while the writer task has something to do besides the queue
    /// (a hand-off, a flush, or one of them in progress).
    pub(crate) fn has_work(&self) -> bool {
        let st = self.lock();
        st.hand_off.is_some() || st.needs_flush || st.busy
    }

    /// The writer's queue was made: from now on every frame of a burst goes
    /// through it.
    pub(crate) fn queue_made(&self) {
        self.lock().queue_made = true;
    }

    /// True once closing has started (or the write side failed).
    pub(crate) fn is_closing(&self) -> bool {
        self.lock().closed
    }

    /// Stops direct writes (closing or failed).
    pub(crate) fn close(&self) {
        self.lock().closed = true;
    }

    /// Drops the write half (which closes it, e.g. a child's stdin).
    pub(crate) fn release(&self) {
        let w = {
            let mut st = self.lock();
            st.closed = true;
            st.w.take()
        };
        drop(w);
    }

    /// Writes every chunk, with vectored writes where the writer supports
    /// them. The lock is taken for each poll only.
    pub(crate) async fn write_chunks(&self, chunks: &[Bytes]) -> io::Result<()> {
        let (mut idx, mut off) = (0, 0);
        while idx < chunks.len() {
            let n = std::future::poll_fn(|cx| {
                let mut st = self.lock();
                match st.w.as_mut() {
                    Some(w) => poll_write_chunks(w.as_mut(), cx, chunks, idx, off),
                    None => Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
                }
            })
            .await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            advance(chunks, &mut idx, &mut off, n);
        }
        Ok(())
    }

    pub(crate) async fn flush(&self) -> io::Result<()> {
        std::future::poll_fn(|cx| match self.lock().w.as_mut() {
            Some(w) => w.as_mut().poll_flush(cx),
            None => Poll::Ready(Ok(())),
        })
        .await
    }

    /// Flushes and shuts the write half down, then releases it.
    pub(crate) async fn shutdown(&self) {
        let _ = self.flush().await;
        let _ = std::future::poll_fn(|cx| match self.lock().w.as_mut() {
            Some(w) => w.as_mut().poll_shutdown(cx),
            None => Poll::Ready(Ok(())),
        })
        .await;
        self.release();
    }
}

/// One write of the chunks from `chunks[idx][off..]` on.
fn poll_write_chunks(
    w: Pin<&mut (dyn AsyncWrite + Send)>,
    cx: &mut Context<'_>,
    chunks: &[Bytes],
    idx: usize,
    off: usize,
) -> Poll<io::Result<usize>> {
    if chunks.len() - idx == 1 || !w.is_write_vectored() {
        return w.poll_write(cx, &chunks[idx][off..]);
    }
    let mut slices = [IoSlice::new(&[]); MAX_SLICES];
    let mut count = 0;
    for (i, chunk) in chunks[idx..].iter().take(MAX_SLICES).enumerate() {
        slices[i] = IoSlice::new(if i == 0 { &chunk[off..] } else { chunk });
        count += 1;
    }
    w.poll_write_vectored(cx, &slices[..count])
}

/// Moves the position `(idx, off)` past `n` written bytes.
fn advance(chunks: &[Bytes], idx: &mut usize, off: &mut usize, mut n: usize) {
    while n > 0 && *idx < chunks.len() {
        let left = chunks[*idx].len() - *off;
        if n >= left {
            n -= left;
            *idx += 1;
            *off = 0;
        } else {
            *off += n;
            n = 0;
        }
    }
    // Skip empty chunks so a finished write is recognised as finished.
    while *idx < chunks.len() && chunks[*idx].len() == *off {
        *idx += 1;
        *off = 0;
    }
}
