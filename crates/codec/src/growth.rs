//! The frame-buffer growth rule, public for the transports built on this
//! codec (the `frame-growth` feature): a transport reading frames from a
//! byte stream grows its buffer the way this crate's encoders do. Not
//! needed to use the codec; its shape may change with the transports'.

use bytes::BytesMut;

/// A buffer this long or longer holds a large frame (four 64 KiB reads).
pub const LARGE_FRAME_LEN: usize = crate::grow::LARGE_FRAME_LEN;

/// Makes room for `additional` more bytes in a buffer that is building one
/// frame: doubling while small, then, once it needs [`LARGE_FRAME_LEN`]
/// bytes, one step to room for the largest frame allowed (`max_frame_len`,
/// up to 64 MiB, plus a little slack), so a large frame is not copied
/// through a chain of reallocations.
pub fn grow_frame_buffer(buf: &mut BytesMut, additional: usize, max_frame_len: usize) {
    crate::grow::grow(buf, additional, max_frame_len);
}

/// The capacity [`grow_frame_buffer`] gives a large frame's buffer in its
/// one step, for frames of at most `max_frame_len` bytes.
pub fn grow_frame_buffer_len(max_frame_len: usize) -> usize {
    crate::grow::grow_frame_buffer_len(max_frame_len)
}
