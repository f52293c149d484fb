//! One large frame buffer kept from one large frame to the next.
//!
//! A large frame is built in memory of its own (see `crate::grow`), which
//! the system hands over a page at a time as it is first written: a fault
//! and a zeroed page for every 4 KiB, at every large request. A
//! [`SpareBuffer`] keeps the buffer of a large frame once the frame is sent
//! and dropped, already resident, for the next large frame.
//!
//! Frames read are not kept this way: a large answer's buffer becomes the
//! caller's string (see `jsonrpc::in_place`), so there is no buffer to keep.
//! Read into a kept buffer, the string was a fresh allocation and a copy
//! instead, which measured slower (`docs/benchmarks.md`).
//!
//! It keeps one buffer at most, only after a frame no longer than its
//! `max_kept`, and lets it go at the first small frame: what it holds
//! resident is bounded by `max_kept` and only lasts through a run of large
//! frames.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;

use crate::grow::LARGE_FRAME_LEN;

/// A place for one large frame buffer, shared by the frames of one kind
/// (the requests a process builds). Meant to be a `static`: a frame lent
/// from it can outlive any one connection.
#[derive(Debug)]
pub struct SpareBuffer {
    /// Whether `slot` holds a buffer: read without the lock, so the small
    /// frames (almost all of them) never take it.
    held: AtomicBool,
    slot: Mutex<Option<Vec<u8>>>,
    /// The longest frame whose buffer is kept.
    max_kept: usize,
}

impl SpareBuffer {
    /// An empty place that keeps the buffer of a frame of at most
    /// `max_kept` bytes.
    #[must_use]
    pub const fn new(max_kept: usize) -> Self {
        Self {
            held: AtomicBool::new(false),
            slot: Mutex::new(None),
            max_kept,
        }
    }

    /// The kept buffer, emptied, if there is one: the caller builds its next
    /// frame in it, then hands it to [`lend`](Self::lend).
    pub fn take(&self) -> Option<Vec<u8>> {
        if !self.held.load(Ordering::Acquire) {
            return None;
        }
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        let taken = slot.take();
        self.held.store(false, Ordering::Release);
        taken.map(|mut buf| {
            buf.clear();
            buf
        })
    }

    /// `frame` as [`Bytes`]. A large frame's buffer, if the frame is no
    /// longer than `max_kept`, comes back here when the last of its `Bytes`
    /// is dropped, if no buffer is kept by then.
    ///
    /// A small frame in a large buffer (one [`take`](Self::take) gave back,
    /// used for a small frame) is copied out, and the buffer let go: the run
    /// of large frames has ended.
    pub fn lend(&'static self, frame: Vec<u8>) -> Bytes {
        if frame.len() > self.max_kept {
            Bytes::from(frame)
        } else if frame.len() >= LARGE_FRAME_LEN {
            Bytes::from_owner(Lent {
                buf: frame,
                home: self,
            })
        } else if frame.capacity() >= LARGE_FRAME_LEN {
            Bytes::copy_from_slice(&frame)
        } else {
            Bytes::from(frame)
        }
    }

    /// Lets the kept buffer go, if there is one: a small frame has passed.
    pub fn release(&self) {
        drop(self.take());
    }

    fn keep(&self, buf: Vec<u8>) {
        if self.held.load(Ordering::Acquire) {
            return;
        }
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(buf);
            self.held.store(true, Ordering::Release);
        }
    }
}

/// A large frame's buffer, on its way back to its [`SpareBuffer`].
struct Lent {
    buf: Vec<u8>,
    home: &'static SpareBuffer,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.buf
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        self.home.keep(std::mem::take(&mut self.buf));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn large() -> Vec<u8> {
        vec![b'x'; LARGE_FRAME_LEN]
    }

    #[test]
    fn a_large_frame_buffer_comes_back_for_the_next_large_frame() {
        static SPARE: SpareBuffer = SpareBuffer::new(4 * LARGE_FRAME_LEN);
        assert!(SPARE.take().is_none());
        let frame = large();
        let at = frame.as_ptr();
        let bytes = SPARE.lend(frame);
        assert_eq!(bytes.len(), LARGE_FRAME_LEN);
        assert!(bytes.iter().all(|b| *b == b'x'));
        let clone = bytes.clone();
        drop(bytes);
        assert!(SPARE.take().is_none(), "still held by a clone");
        drop(clone);
        let again = SPARE.take().expect("kept");
        assert_eq!(again.as_ptr(), at);
        assert!(again.is_empty());
        assert!(again.capacity() >= LARGE_FRAME_LEN);
        assert!(SPARE.take().is_none(), "taken once");
    }

    #[test]
    fn a_small_frame_lets_the_kept_buffer_go() {
        static SPARE: SpareBuffer = SpareBuffer::new(4 * LARGE_FRAME_LEN);
        drop(SPARE.lend(large()));
        let mut buf = SPARE.take().expect("kept");
        buf.extend_from_slice(b"{}");
        let bytes = SPARE.lend(buf);
        assert_eq!(&bytes[..], b"{}");
        drop(bytes);
        assert!(SPARE.take().is_none());

        drop(SPARE.lend(large()));
        SPARE.release();
        assert!(SPARE.take().is_none());
    }

    #[test]
    fn a_small_frame_is_not_kept() {
        static SPARE: SpareBuffer = SpareBuffer::new(4 * LARGE_FRAME_LEN);
        let mut small = Vec::with_capacity(1024);
        small.extend_from_slice(b"{\"a\":1}");
        let at = small.as_ptr();
        let bytes = SPARE.lend(small);
        assert_eq!(bytes.as_ptr(), at, "no copy");
        drop(bytes);
        assert!(SPARE.take().is_none());
    }

    #[test]
    fn the_buffer_of_a_frame_over_max_kept_is_not_kept() {
        static SPARE: SpareBuffer = SpareBuffer::new(4 * LARGE_FRAME_LEN);
        drop(SPARE.lend(vec![b'x'; 4 * LARGE_FRAME_LEN + 1]));
        assert!(SPARE.take().is_none());
        drop(SPARE.lend(vec![b'x'; 4 * LARGE_FRAME_LEN]));
        assert!(SPARE.take().is_some());
    }

    #[test]
    fn one_buffer_is_kept_at_most() {
        static SPARE: SpareBuffer = SpareBuffer::new(4 * LARGE_FRAME_LEN);
        let first = SPARE.lend(large());
        let second = SPARE.lend(large());
        let kept = second.as_ptr();
        drop(second);
        drop(first);
        let taken = SPARE.take().expect("kept");
        assert_eq!(taken.as_ptr(), kept);
        assert!(SPARE.take().is_none());
    }
}
