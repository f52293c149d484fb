//! Encoders for newline and Content-Length framing.

use std::fmt::Write as _;

use bytes::BytesMut;

use crate::DEFAULT_MAX_FRAME_LEN;

/// Why a frame cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The frame contains a raw `\n` at byte `offset`, so newline framing
    /// would split it in two. Compact JSON never does: newlines inside strings
    /// are escaped as `\n`.
    #[error("frame contains a raw newline at byte {offset}")]
    EmbeddedNewline {
        /// The position of the first raw newline.
        offset: usize,
    },
    /// The frame is longer than the encoder's maximum.
    #[error("frame of {len} bytes exceeds the maximum of {max} bytes")]
    FrameTooLong {
        /// The encoder's maximum frame length.
        max: usize,
        /// The frame's length.
        len: usize,
    },
}

/// Appends `frame` and a `\n` to `dst`, with no length limit.
///
/// A frame containing a raw `\n` is [`EncodeError::EmbeddedNewline`] and
/// nothing is written. A `\r` is allowed: the [`LineDecoder`](crate::LineDecoder)
/// only drops one directly before the `\n`, which in JSON is insignificant
/// whitespace.
pub fn encode_line(frame: &[u8], dst: &mut BytesMut) -> Result<(), EncodeError> {
    if let Some(offset) = memchr::memchr(b'\n', frame) {
        return Err(EncodeError::EmbeddedNewline { offset });
    }
    dst.reserve(frame.len() + 1);
    dst.extend_from_slice(frame);
    dst.extend_from_slice(b"\n");
    Ok(())
}

/// Appends a `Content-Length` header block and `frame` to `dst`, with no
/// length limit. The body may contain any bytes.
pub fn encode_content_length(frame: &[u8], dst: &mut BytesMut) -> Result<(), EncodeError> {
    // "Content-Length: " + at most 20 digits + "\r\n\r\n".
    dst.reserve(40 + frame.len());
    // Writing to a `BytesMut` cannot fail: it grows as needed.
    let _ = write!(dst, "Content-Length: {}\r\n\r\n", frame.len());
    dst.extend_from_slice(frame);
    Ok(())
}

/// A newline-framing encoder with a maximum frame length.
#[derive(Debug, Clone, Copy)]
pub struct LineEncoder {
    max_frame_len: usize,
}

impl Default for LineEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl LineEncoder {
    /// An encoder with the default maximum frame length (16 MiB), the same as
    /// [`LineDecoder::new`](crate::LineDecoder::new)'s.
    pub fn new() -> Self {
        Self::with_max_frame_len(DEFAULT_MAX_FRAME_LEN)
    }

    /// An encoder that refuses frames longer than `max_frame_len` bytes
    /// (excluding the `\n`).
    pub fn with_max_frame_len(max_frame_len: usize) -> Self {
        Self { max_frame_len }
    }

    /// The maximum frame length this encoder accepts.
    pub fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    /// Like [`encode_line`], and a frame over the maximum is
    /// [`EncodeError::FrameTooLong`]. Nothing is written on error.
    pub fn encode(&self, frame: &[u8], dst: &mut BytesMut) -> Result<(), EncodeError> {
        check_len(frame, self.max_frame_len)?;
        encode_line(frame, dst)
    }
}

/// A Content-Length framing encoder with a maximum frame length.
#[derive(Debug, Clone, Copy)]
pub struct ContentLengthEncoder {
    max_frame_len: usize,
}

impl Default for ContentLengthEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ContentLengthEncoder {
    /// An encoder with the default maximum frame length (16 MiB), the same as
    /// [`ContentLengthDecoder::new`](crate::ContentLengthDecoder::new)'s.
    pub fn new() -> Self {
        Self::with_max_frame_len(DEFAULT_MAX_FRAME_LEN)
    }

    /// An encoder that refuses bodies longer than `max_frame_len` bytes.
    pub fn with_max_frame_len(max_frame_len: usize) -> Self {
        Self { max_frame_len }
    }

    /// The maximum body length this encoder accepts.
    pub fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    /// Like [`encode_content_length`], and a body over the maximum is
    /// [`EncodeError::FrameTooLong`]. Nothing is written on error.
    pub fn encode(&self, frame: &[u8], dst: &mut BytesMut) -> Result<(), EncodeError> {
        check_len(frame, self.max_frame_len)?;
        encode_content_length(frame, dst)
    }
}

fn check_len(frame: &[u8], max: usize) -> Result<(), EncodeError> {
    if frame.len() > max {
        return Err(EncodeError::FrameTooLong {
            max,
            len: frame.len(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_appends_newline_and_refuses_raw_newlines() {
        let mut dst = BytesMut::from(&b"x\n"[..]);
        encode_line(br#"{"a":"b\nc"}"#, &mut dst).unwrap();
        assert_eq!(&dst[..], b"x\n{\"a\":\"b\\nc\"}\n");
        assert_eq!(
            encode_line(b"{}\n{}", &mut dst),
            Err(EncodeError::EmbeddedNewline { offset: 2 })
        );
        assert_eq!(dst.len(), 15, "nothing written on error");
    }

    #[test]
    fn content_length_writes_header_and_body() {
        let mut dst = BytesMut::new();
        encode_content_length(b"{}\n", &mut dst).unwrap();
        encode_content_length(b"", &mut dst).unwrap();
        assert_eq!(
            &dst[..],
            b"Content-Length: 3\r\n\r\n{}\nContent-Length: 0\r\n\r\n"
        );
    }

    #[test]
    fn encoders_enforce_their_maximum() {
        let mut dst = BytesMut::new();
        let err = EncodeError::FrameTooLong { max: 2, len: 3 };
        assert_eq!(
            LineEncoder::with_max_frame_len(2).encode(b"abc", &mut dst),
            Err(err.clone())
        );
        assert_eq!(
            ContentLengthEncoder::with_max_frame_len(2).encode(b"abc", &mut dst),
            Err(err)
        );
        assert!(dst.is_empty());
        LineEncoder::with_max_frame_len(3)
            .encode(b"abc", &mut dst)
            .unwrap();
        ContentLengthEncoder::with_max_frame_len(3)
            .encode(b"abc", &mut dst)
            .unwrap();
        assert_eq!(&dst[..], b"abc\nContent-Length: 3\r\n\r\nabc");
    }
}
