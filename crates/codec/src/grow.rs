//! How frame buffers grow: doubling while small, then one step to room for
//! the largest frame allowed.

use std::mem::MaybeUninit;

use bytes::BytesMut;

use crate::huge_pages;

/// A buffer this long or longer holds a large frame (four 64 KiB reads).
pub(crate) const LARGE_FRAME_LEN: usize = 256 << 10;

/// Room kept beyond `max_frame_len` in the one-step reservation: a line end
/// and the start of the next read.
const LARGE_FRAME_SLACK: usize = 128 << 10;

/// The one step never reserves more than this: with a limit raised to
/// gigabytes, a frame grows by doubling past it, so a modest frame never
/// asks the system for the whole limit.
const LARGE_STEP_MAX: usize = 64 << 20;

/// The one step never reserves less than this, whatever the limit. The
/// common allocators map an allocation above 32 MiB straight from the
/// system (glibc's adaptive threshold stops at 32 MiB), so a large frame's
/// memory goes back to the system as soon as the frame is freed, and
/// freeing it never raises the threshold. Below it, glibc would keep a
/// freed frame's pages resident in a thread's arena, and after the first
/// large frame every frame is allocated there (the bench's stdio 10 MiB
/// echo peaked at 61-62 MiB RSS with a 16 MiB step, 39-42 MiB with this
/// one). Room never written costs address space, not memory.
const LARGE_STEP_MIN: usize = 32 << 20;

/// The capacity the one large step gives a frame's buffer, for frames of at
/// most `max_frame_len` bytes.
pub(crate) fn grow_frame_buffer_len(max_frame_len: usize) -> usize {
    max_frame_len
        .clamp(LARGE_STEP_MIN, LARGE_STEP_MAX)
        .saturating_add(LARGE_FRAME_SLACK)
}

/// A buffer a frame is built in: a `BytesMut` or a `Vec<u8>`.
pub(crate) trait FrameBuf {
    fn len(&self) -> usize;
    fn capacity(&self) -> usize;
    /// Room for `additional` more bytes, the usual way (amortized doubling).
    fn reserve(&mut self, additional: usize);
    /// A capacity of exactly `whole`, the contents kept.
    fn reserve_whole(&mut self, whole: usize);
    fn put(&mut self, data: &[u8]);
    /// The room past the contents.
    fn spare(&mut self) -> &mut [MaybeUninit<u8>];
}

impl FrameBuf for BytesMut {
    fn len(&self) -> usize {
        BytesMut::len(self)
    }
    fn capacity(&self) -> usize {
        BytesMut::capacity(self)
    }
    fn reserve(&mut self, additional: usize) {
        BytesMut::reserve(self, additional);
    }
    fn reserve_whole(&mut self, whole: usize) {
        // `reserve` would round up to double the capacity; a new buffer of
        // the exact size takes a copy of what is there.
        let mut large = BytesMut::with_capacity(whole);
        large.extend_from_slice(self);
        *self = large;
    }
    fn put(&mut self, data: &[u8]) {
        self.extend_from_slice(data);
    }
    fn spare(&mut self) -> &mut [MaybeUninit<u8>] {
        self.spare_capacity_mut()
    }
}

impl FrameBuf for Vec<u8> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn capacity(&self) -> usize {
        Vec::capacity(self)
    }
    fn reserve(&mut self, additional: usize) {
        Vec::reserve(self, additional);
    }
    fn reserve_whole(&mut self, whole: usize) {
        self.reserve_exact(whole - Vec::len(self));
    }
    fn put(&mut self, data: &[u8]) {
        self.extend_from_slice(data);
    }
    fn spare(&mut self) -> &mut [MaybeUninit<u8>] {
        self.spare_capacity_mut()
    }
}

/// Makes room for `additional` more bytes in a buffer that is building one
/// frame (read from the peer, or encoded to be sent).
///
/// A small buffer grows as usual, by doubling. Once it needs
/// [`LARGE_FRAME_LEN`] bytes it gets, in one step, room for the largest
/// frame allowed (`max_frame_len`, up to 64 MiB) plus a little slack,
/// instead of doubling its way there:
///
/// - no chain of reallocations, each copying the frame so far;
/// - fresh memory this large reaches the process page by page as it is
///   first written (the kernel maps it lazily), so capacity never written
///   usually costs nothing; memory an allocator reuses may already be
///   resident;
/// - consecutive large frames ask for the same size, which an allocator
///   can hand out again from what the last one freed.
///
/// The one large step copies less than [`LARGE_FRAME_LEN`] bytes: it is
/// taken as soon as the frame needs that much. On Linux the `additional`
/// bytes it is taken for, the part of the frame about to be written, are
/// advised huge pages (see `huge_pages`).
pub(crate) fn grow<B: FrameBuf>(buf: &mut B, additional: usize, max_frame_len: usize) {
    let needed = buf.len().saturating_add(additional);
    let whole = grow_frame_buffer_len(max_frame_len);
    if needed >= LARGE_FRAME_LEN && needed <= whole && buf.capacity() < whole {
        buf.reserve_whole(whole);
        huge_pages::advise(buf.spare(), additional);
    } else {
        buf.reserve(additional);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_buffers_grow_as_usual() {
        let mut buf = BytesMut::with_capacity(16);
        buf.extend_from_slice(&[1; 16]);
        grow(&mut buf, 100, 1 << 20);
        assert!(buf.capacity() >= 116);
        assert!(buf.capacity() < 1 << 20);
    }

    #[test]
    fn a_large_frame_gets_room_for_the_largest_one_at_once() {
        let max = 4 << 20;
        let mut buf = BytesMut::with_capacity(1024);
        buf.extend_from_slice(&[7; 1000]);
        // One write that takes the frame past the large size: the buffer
        // gets exactly the largest frame's room, and keeps its bytes.
        grow(&mut buf, LARGE_FRAME_LEN, max);
        assert_eq!(buf.capacity(), grow_frame_buffer_len(max));
        assert_eq!(&buf[..], &[7; 1000][..]);
        buf.extend_from_slice(&vec![7; LARGE_FRAME_LEN - 1000]);
        // Beyond that room it grows as usual again.
        let room = grow_frame_buffer_len(max);
        buf.extend_from_slice(&vec![8; room - LARGE_FRAME_LEN]);
        grow(&mut buf, 1, max);
        assert!(buf.capacity() > room);
    }

    #[test]
    fn a_vec_takes_the_same_steps() {
        let max = 4 << 20;
        let mut small = vec![1u8; 16];
        grow(&mut small, 100, max);
        assert!(small.capacity() >= 116 && small.capacity() < 1 << 20);
        let mut large = vec![7u8; 1000];
        grow(&mut large, LARGE_FRAME_LEN, max);
        assert_eq!(large.capacity(), grow_frame_buffer_len(max));
        assert_eq!(large, vec![7u8; 1000]);
    }

    #[test]
    fn the_one_step_is_large_enough_to_be_mapped_apart() {
        // Above 32 MiB whatever the limit, so no allocator keeps it in an
        // arena once freed; a larger limit gets its own room.
        assert_eq!(
            grow_frame_buffer_len(4 << 20),
            (32 << 20) + LARGE_FRAME_SLACK
        );
        assert_eq!(
            grow_frame_buffer_len(48 << 20),
            (48 << 20) + LARGE_FRAME_SLACK
        );
    }

    #[test]
    fn a_huge_limit_is_not_reserved_whole() {
        let mut buf = BytesMut::new();
        grow(&mut buf, LARGE_FRAME_LEN, 1 << 40);
        assert_eq!(buf.capacity(), LARGE_STEP_MAX + LARGE_FRAME_SLACK);
    }
}
