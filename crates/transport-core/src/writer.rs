//! The outbound half of [`IoTransport`](crate::IoTransport): one task that
//! drains the frame queue in batches.

use std::fmt::Write as _;
use std::io;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use mcpwire_codec::encode_content_length;
use tokio::sync::{mpsc, oneshot};

use crate::direct::{HandOff, SharedWrite, Work};
use crate::{Framing, TransportError, TransportEvent};

/// Frames up to this size are copied into one coalescing buffer; larger ones
/// are written from their own allocation so a 10 MiB frame is never copied.
const COPY_MAX: usize = 4 << 10;
/// A batch stops growing past this many bytes, so one slow write does not
/// hold a huge batch hostage and memory stays bounded.
const BATCH_MAX_BYTES: usize = 256 << 10;
/// A batch stops growing past this many frames.
const BATCH_MAX_FRAMES: usize = 256;
/// Drains `rx` into the shared write half until told to shut down or the
/// write side fails.
///
/// Frames are taken in batches: the first frame is awaited, then whatever
/// else is already queued is taken without waiting; the task then yields
/// once, so the other senders of the burst (tasks ready to run) add their
/// frames too, and the batch is framed and written with
/// as few system calls as the batch allows (small frames coalesced into one
/// buffer, large ones passed by reference in a vectored write). The writer
/// flushes only when the queue is empty, so a burst costs one flush. When the
/// queue is empty and the writer idle, senders write directly instead (see
/// [`SharedWrite`]); what they cannot finish, or a frame that finds this task
/// part-way through a write or flush, comes here as a hand-off, which is
/// written before anything queued after it. No sender polls the write half
/// while this task is part-way through a write or flush: it is marked busy
/// from taking a hand-off or a flush to finishing it, and a batch's frames
/// count as queued until the batch is written and flushed.
///
/// On `shutdown` the queue is closed (new sends get `Closed`), what is left is
/// written, and the write half is shut down, which closes a child's stdin.
/// On a write error, the frames of the failed batch (which may have reached
/// the peer in part) and everything still queued come back to the owner as
/// [`TransportEvent::Undelivered`]; they are never dropped silently.
///
/// The queue is made on first need, so `rx` may be `None`: the task was
/// started for a hand-off or a flush (the first write to a fresh pipe is
/// often one: its readiness is not known yet). It takes the queue from
/// `dock` once made, and while it has none and nothing to do it ends,
/// handing `ends` back, to be started again on the next need.
pub(crate) async fn write_loop(
    shared: Arc<SharedWrite>,
    dock: Arc<dyn Dock>,
    mut rx: Option<mpsc::Receiver<Bytes>>,
    ends: Ends,
    framing: Framing,
) {
    let Ends {
        mut shutdown,
        failed,
    } = ends;
    let mut failed = Some(failed);
    // Allocated on the first burst: a lone frame is written by its sender,
    // so a connection that never sees a burst never pays for these.
    let mut batch: Vec<Bytes> = Vec::new();
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut scratch = BytesMut::new();
    let mut closing = false;
    loop {
        match shared.take_work() {
            Work::HandOff(hand_off) => {
                let HandOff { frame, chunks } = hand_off;
                let mut result = shared.write_chunks(&chunks).await;
                drop(chunks);
                if result.is_ok() && rx.as_ref().is_none_or(mpsc::Receiver::is_empty) {
                    result = shared.flush().await;
                }
                shared.done(1);
                if let Err(e) = result {
                    batch.push(frame);
                    fail(e, &shared, &*dock, &mut batch, rx.as_mut(), failed.take());
                    return;
                }
                // A large frame is written in part directly and finished
                // here: its allocation may serve the answer.
                shared.recycle(frame);
                continue;
            }
            Work::Flush => {
                let result = shared.flush().await;
                shared.done(0);
                if let Err(e) = result {
                    fail(e, &shared, &*dock, &mut batch, rx.as_mut(), failed.take());
                    return;
                }
                continue;
            }
            Work::Idle => {}
        }
        if rx.is_none() {
            rx = dock.take_queue();
            if closing && let Some(rx) = rx.as_mut() {
                rx.close();
            }
        }
        if rx.is_none()
            && !closing
            && let Some(f) = failed.take()
        {
            match dock.park(Ends {
                shutdown,
                failed: f,
            }) {
                Ok(()) => return,
                Err(back) => (shutdown, failed) = (back.shutdown, Some(back.failed)),
            }
        }
        let first = if closing {
            rx.as_mut().and_then(|rx| rx.try_recv().ok())
        } else {
            tokio::select! {
                biased;
                _ = &mut shutdown => {
                    closing = true;
                    shared.close();
                    if let Some(rx) = rx.as_mut() {
                        rx.close();
                    }
                    continue;
                }
                _ = shared.notify.notified() => continue,
                frame = recv(&mut rx) => frame,
            }
        };
        let Some(first) = first else { break };
        let Some(rx) = rx.as_mut() else { break };
        let mut bytes = first.len();
        batch.push(first);
        drain(rx, &mut batch, &mut bytes);
        // Frames reach this queue only in a burst (a lone frame is written
        // by its sender), and the senders of a burst are tasks that are
        // ready to run right now: let them run once before writing, so one
        // system call carries the frames they are about to send instead of
        // each frame costing its own write and its own wake-up of the peer.
        if !closing && batch.len() < BATCH_MAX_FRAMES && bytes < BATCH_MAX_BYTES {
            tokio::task::yield_now().await;
            drain(rx, &mut batch, &mut bytes);
        }
        if scratch.capacity() == 0 {
            scratch.reserve(COPY_MAX * 4);
        }
        frame_batch(framing, &batch, &mut scratch, &mut chunks);
        let mut result = shared.write_chunks(&chunks).await;
        chunks.clear();
        if result.is_ok() && rx.is_empty() {
            result = shared.flush().await;
        }
        shared.done(batch.len());
        if let Err(e) = result {
            fail(e, &shared, &*dock, &mut batch, Some(rx), failed.take());
            return;
        }
        batch.clear();
    }
    // Best effort: the owner is closing and does not wait for an answer.
    shared.shutdown().await;
}

/// The writer's ends of its owner's channels, kept while it is parked.
pub(crate) struct Ends {
    /// Tells the writer to write what is left and shut the write half.
    pub(crate) shutdown: oneshot::Receiver<()>,
    /// Where a write failure is reported, once.
    pub(crate) failed: oneshot::Sender<Vec<TransportEvent>>,
}

/// Where the writer task finds its queue once made, and parks.
pub(crate) trait Dock: Send + Sync {
    /// The queue's receiving end, if it was made since the task last looked.
    fn take_queue(&self) -> Option<mpsc::Receiver<Bytes>>;

    /// Ends the task if nothing is left for it (no queue, no hand-off or
    /// flush, no shutdown sent), keeping `ends` for the next start; hands
    /// them back otherwise.
    fn park(&self, ends: Ends) -> Result<(), Ends>;
}

/// The next frame of the queue; never, without one.
async fn recv(rx: &mut Option<mpsc::Receiver<Bytes>>) -> Option<Bytes> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Takes what is already queued into `batch`, up to the batch bounds.
fn drain(rx: &mut mpsc::Receiver<Bytes>, batch: &mut Vec<Bytes>, bytes: &mut usize) {
    while *bytes < BATCH_MAX_BYTES && batch.len() < BATCH_MAX_FRAMES {
        match rx.try_recv() {
            Ok(frame) => {
                *bytes += frame.len();
                batch.push(frame);
            }
            Err(_) => break,
        }
    }
}

/// Reports a write failure: an error event, then every frame not known to
/// have been written.
fn fail(
    e: io::Error,
    shared: &SharedWrite,
    dock: &dyn Dock,
    batch: &mut Vec<Bytes>,
    rx: Option<&mut mpsc::Receiver<Bytes>>,
    failed: Option<oneshot::Sender<Vec<TransportEvent>>>,
) {
    shared.release();
    // A queue made after the release is closed from the start (see
    // `Outbound`); one made before is taken here, so its frames come back.
    let mut late: Option<mpsc::Receiver<Bytes>>;
    let mut rx = match rx {
        Some(rx) => Some(rx),
        None => {
            late = dock.take_queue();
            late.as_mut()
        }
    };
    if let Some(rx) = rx.as_mut() {
        rx.close();
    }
    if let Some(hand_off) = shared.take_hand_off() {
        batch.push(hand_off.frame);
    }
    let error = TransportError::from(e);
    // Bounded: one batch plus the queue capacity, once, after which this
    // task ends.
    let mut events = vec![TransportEvent::Error(error.clone())];
    let rest = std::iter::from_fn(|| rx.as_mut()?.try_recv().ok());
    for frame in batch.drain(..).chain(rest) {
        events.push(TransportEvent::Undelivered {
            frame,
            error: error.clone(),
        });
    }
    if let Some(failed) = failed {
        let _ = failed.send(events);
    }
}

/// Turns a batch of frames into the chunks to write: small frames and all
/// framing bytes are copied into `scratch`, large frames are referenced.
fn frame_batch(framing: Framing, batch: &[Bytes], scratch: &mut BytesMut, chunks: &mut Vec<Bytes>) {
    for frame in batch {
        let large = frame.len() > COPY_MAX;
        match framing {
            // The sender already refused frames with a raw newline.
            Framing::Newline if !large => {
                scratch.extend_from_slice(frame);
                scratch.put_u8(b'\n');
            }
            Framing::Newline => {
                push_scratch(scratch, chunks);
                chunks.push(frame.clone());
                scratch.put_u8(b'\n');
            }
            Framing::ContentLength if !large => {
                // Cannot fail: Content-Length framing takes any bytes.
                let _ = encode_content_length(frame, scratch);
            }
            Framing::ContentLength => {
                // The header alone, so the body is written from its own
                // buffer; the `header_matches_the_codec` test keeps it
                // byte-identical to `encode_content_length`.
                let _ = write!(scratch, "Content-Length: {}\r\n\r\n", frame.len());
                push_scratch(scratch, chunks);
                chunks.push(frame.clone());
            }
        }
    }
    push_scratch(scratch, chunks);
}

fn push_scratch(scratch: &mut BytesMut, chunks: &mut Vec<Bytes>) {
    if !scratch.is_empty() {
        chunks.push(scratch.split().freeze());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_frames_coalesce_and_large_ones_are_referenced() {
        let big = Bytes::from(vec![b'x'; COPY_MAX + 1]);
        let batch = vec![
            Bytes::from_static(b"{}"),
            Bytes::from_static(b"[]"),
            big.clone(),
            Bytes::from_static(b"{\"a\":1}"),
        ];
        let mut scratch = BytesMut::new();
        let mut chunks = Vec::new();
        frame_batch(Framing::Newline, &batch, &mut scratch, &mut chunks);
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[0], "{}\n[]\n");
        assert_eq!(
            chunks[1].as_ptr(),
            big.as_ptr(),
            "the large frame is not copied"
        );
        assert_eq!(chunks[2], "\n{\"a\":1}\n");
    }

    #[test]
    fn header_matches_the_codec() {
        let big = Bytes::from(vec![b'y'; COPY_MAX + 10]);
        let batch = vec![Bytes::from_static(b"{}"), big.clone()];
        let mut scratch = BytesMut::new();
        let mut chunks = Vec::new();
        frame_batch(Framing::ContentLength, &batch, &mut scratch, &mut chunks);
        let mut expected = BytesMut::new();
        for f in &batch {
            encode_content_length(f, &mut expected).unwrap();
        }
        assert_eq!(chunks.concat(), expected.to_vec());
        assert_eq!(
            chunks.last().unwrap().as_ptr(),
            big.as_ptr(),
            "the body is not copied"
        );
    }
}
