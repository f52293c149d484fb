//! Newline-delimited JSON: one message per line, the MCP stdio framing.

use bytes::{Buf, Bytes, BytesMut};

use crate::{DEFAULT_MAX_FRAME_LEN, DecodeError};

/// Decodes newline-delimited frames (LF or CRLF line ends).
///
/// Blank lines (empty, or only spaces and tabs) are skipped. The decoder
/// remembers how far it has scanned a partial line, so a line arriving in many
/// small reads is scanned once in total, not once per read.
///
/// # Limits and recovery
///
/// A line longer than [`max_frame_len`](Self::max_frame_len) makes
/// [`decode`](Self::decode) return [`DecodeError::FrameTooLong`] as soon as the
/// buffered part of the line passes the limit (plus one byte for a `\r`), so a
/// reader that feeds at most one read's worth of bytes between calls never holds
/// more than the limit plus one read. After the error, the decoder discards
/// bytes up to and including the next newline and then decodes normally again;
/// callers that prefer to give up simply stop calling it.
#[derive(Debug, Clone)]
pub struct LineDecoder {
    max_frame_len: usize,
    /// How many bytes at the front of the buffer are known to hold no newline.
    scanned: usize,
    /// Set after an oversized line until its terminating newline is seen.
    discarding: bool,
}

impl Default for LineDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl LineDecoder {
    /// A decoder with the default maximum frame length (16 MiB).
    pub fn new() -> Self {
        Self::with_max_frame_len(DEFAULT_MAX_FRAME_LEN)
    }

    /// A decoder that rejects lines longer than `max_frame_len` bytes
    /// (excluding the line end).
    pub fn with_max_frame_len(max_frame_len: usize) -> Self {
        Self {
            max_frame_len,
            scanned: 0,
            discarding: false,
        }
    }

    /// The maximum frame length this decoder accepts.
    pub fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    /// True while the decoder is skipping the rest of an oversized line.
    pub fn is_discarding(&self) -> bool {
        self.discarding
    }

    /// Takes the next complete line out of `buf`, if there is one.
    ///
    /// Returns `Ok(None)` when `buf` holds no complete line yet; the partial line
    /// stays in `buf` for the next call. Between calls, only append to `buf`:
    /// the decoder remembers how much of it it has scanned.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        loop {
            if self.discarding {
                match memchr::memchr(b'\n', buf) {
                    Some(nl) => {
                        buf.advance(nl + 1);
                        self.discarding = false;
                        self.scanned = 0;
                    }
                    None => {
                        buf.clear();
                        return Ok(None);
                    }
                }
            }
            // Callers must only append to `buf` between calls; one that
            // emptied it anyway gets no panic from indexing past its end.
            self.scanned = self.scanned.min(buf.len());
            let Some(rel) = memchr::memchr(b'\n', &buf[self.scanned..]) else {
                // One extra byte is allowed for a `\r` whose `\n` has not arrived.
                if buf.len() > self.max_frame_len.saturating_add(1) {
                    let len = buf.len();
                    buf.clear();
                    self.scanned = 0;
                    self.discarding = true;
                    return Err(DecodeError::FrameTooLong {
                        max: self.max_frame_len,
                        len,
                    });
                }
                self.scanned = buf.len();
                return Ok(None);
            };
            let nl = self.scanned + rel;
            self.scanned = 0;
            let mut line = buf.split_to(nl + 1);
            line.truncate(nl);
            if line.last() == Some(&b'\r') {
                line.truncate(nl - 1);
            }
            if line.len() > self.max_frame_len {
                // The line is already consumed, so the decoder is ready for the next.
                return Err(DecodeError::FrameTooLong {
                    max: self.max_frame_len,
                    len: line.len(),
                });
            }
            if is_blank(&line) {
                continue;
            }
            return Ok(Some(line.freeze()));
        }
    }

    /// Like [`decode`](Self::decode), for when no more bytes will arrive.
    ///
    /// A final line without a line end is returned as a frame: whether it is a
    /// whole message is for the envelope parser to say. A final line over the
    /// maximum is [`DecodeError::FrameTooLong`]. Afterwards `buf` is empty.
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        self.scanned = 0;
        if self.discarding {
            self.discarding = false;
            buf.clear();
            return Ok(None);
        }
        let mut rest = buf.split();
        if rest.last() == Some(&b'\r') {
            rest.truncate(rest.len() - 1);
        }
        if is_blank(&rest) {
            return Ok(None);
        }
        if rest.len() > self.max_frame_len {
            return Err(DecodeError::FrameTooLong {
                max: self.max_frame_len,
                len: rest.len(),
            });
        }
        Ok(Some(rest.freeze()))
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(dec: &mut LineDecoder, input: &[u8]) -> Vec<Result<Bytes, DecodeError>> {
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(f)) => out.push(Ok(f)),
                Ok(None) => break,
                Err(e) => out.push(Err(e)),
            }
        }
        if let Ok(Some(f)) = dec.decode_eof(&mut buf) {
            out.push(Ok(f));
        }
        out
    }

    #[test]
    fn lf_crlf_and_blank_lines() {
        let mut dec = LineDecoder::new();
        let frames = decode_all(&mut dec, b"{\"a\":1}\n\r\n  \n{\"b\":2}\r\n\n");
        assert_eq!(
            frames,
            vec![
                Ok(Bytes::from_static(b"{\"a\":1}")),
                Ok(Bytes::from_static(b"{\"b\":2}"))
            ]
        );
    }

    #[test]
    fn partial_line_waits_and_scan_position_is_kept() {
        let mut dec = LineDecoder::new();
        let mut buf = BytesMut::from(&b"{\"a\":"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert_eq!(dec.scanned, 5);
        buf.extend_from_slice(b"1}\n{");
        assert_eq!(
            dec.decode(&mut buf),
            Ok(Some(Bytes::from_static(b"{\"a\":1}")))
        );
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert_eq!(&buf[..], b"{");
    }

    #[test]
    fn oversized_line_errors_then_recovers_at_next_newline() {
        let mut dec = LineDecoder::with_max_frame_len(8);
        let mut buf = BytesMut::from(&b"0123456789"[..]);
        assert_eq!(
            dec.decode(&mut buf),
            Err(DecodeError::FrameTooLong { max: 8, len: 10 })
        );
        assert!(buf.is_empty(), "the oversized bytes are not kept");
        buf.extend_from_slice(b"more junk\n{}\n");
        assert_eq!(dec.decode(&mut buf), Ok(Some(Bytes::from_static(b"{}"))));
        assert!(!dec.is_discarding());
    }

    #[test]
    fn oversized_complete_line_is_consumed() {
        let mut dec = LineDecoder::with_max_frame_len(4);
        let frames = decode_all(&mut dec, b"123456\n1234\n");
        assert_eq!(
            frames,
            vec![
                Err(DecodeError::FrameTooLong { max: 4, len: 6 }),
                Ok(Bytes::from_static(b"1234"))
            ]
        );
    }

    #[test]
    fn line_of_exactly_max_with_crlf_is_accepted() {
        let mut dec = LineDecoder::with_max_frame_len(4);
        let mut buf = BytesMut::from(&b"1234\r"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"\n");
        assert_eq!(dec.decode(&mut buf), Ok(Some(Bytes::from_static(b"1234"))));
    }

    #[test]
    fn eof_tail_over_the_maximum_is_an_error() {
        let mut dec = LineDecoder::with_max_frame_len(4);
        let mut buf = BytesMut::from(&b"12345"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert_eq!(
            dec.decode_eof(&mut buf),
            Err(DecodeError::FrameTooLong { max: 4, len: 5 })
        );
        assert!(buf.is_empty());
        assert_eq!(dec.decode_eof(&mut buf), Ok(None));
    }

    #[test]
    fn buffer_emptied_between_calls_does_not_panic() {
        let mut dec = LineDecoder::new();
        let mut buf = BytesMut::from(&b"abcdef"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.clear();
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"x\n");
        assert_eq!(dec.decode(&mut buf), Ok(Some(Bytes::from_static(b"x"))));
    }

    #[test]
    fn eof_returns_unterminated_tail() {
        let mut dec = LineDecoder::new();
        let frames = decode_all(&mut dec, b"{}\n{\"x\":");
        assert_eq!(
            frames,
            vec![
                Ok(Bytes::from_static(b"{}")),
                Ok(Bytes::from_static(b"{\"x\":"))
            ]
        );
    }
}
