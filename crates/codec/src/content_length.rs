//! Content-Length framing: a header block, a blank line, then exactly the
//! declared number of body bytes (the Language Server Protocol's framing).

use bytes::{Buf, Bytes, BytesMut};

use crate::{DEFAULT_MAX_FRAME_LEN, DecodeError};

/// The most a declared body length makes the decoder reserve ahead of
/// the bytes themselves.
const RESERVE_AHEAD: usize = 1 << 20;

/// Decodes Content-Length framed messages.
///
/// Each frame is a header block of `name: value` lines, ended by an empty line,
/// followed by a body of exactly `Content-Length` bytes:
///
/// ```text
/// Content-Length: 38\r\n
/// Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n
/// \r\n
/// {"jsonrpc":"2.0","id":1,"method":"x"}
/// ```
///
/// Header names are case-insensitive; headers other than `Content-Length` are
/// ignored. Lines may end in CRLF (as the format asks) or a bare LF (as some
/// peers send). Empty lines before a header block are skipped, so a peer that
/// ends each body with a line end is still understood. Each header line is
/// parsed once, however many reads the header block arrives in.
///
/// # Limits and recovery
///
/// - A declared length over [`max_frame_len`](Self::max_frame_len) is rejected
///   with [`DecodeError::FrameTooLong`] as soon as the header block is read,
///   before any room is reserved for the body. The header was well formed, so
///   the frame boundary is still known: the decoder then skips the declared
///   number of body bytes as they arrive (without buffering them) and decodes
///   the frame after it normally.
/// - A header block longer than [`MAX_HEADER_LEN`](Self::MAX_HEADER_LEN) bytes
///   is [`DecodeError::HeaderTooLong`]; a malformed header line is
///   [`DecodeError::InvalidHeader`]; a block without `Content-Length` is
///   [`DecodeError::MissingContentLength`]; a bad or conflicting value is
///   [`DecodeError::InvalidContentLength`]. After any of these the decoder
///   cannot tell where the next frame starts, so it **cannot continue**: every
///   later call drops whatever is buffered and reports it as
///   [`DecodeError::Desynchronized`] (or returns `Ok(None)` when there is
///   nothing buffered). Callers should close the stream.
#[derive(Debug, Clone)]
pub struct ContentLengthDecoder {
    max_frame_len: usize,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a header block. `pos` is where the first unparsed line starts;
    /// `started` is set once a non-empty line has been seen.
    Header {
        pos: usize,
        started: bool,
        len: Option<usize>,
    },
    /// The header block is consumed; waiting for a body of this many bytes.
    Body(usize),
    /// Dropping the rest of an oversized body: this many bytes to go.
    Skipping(usize),
    /// A header error made frame boundaries unknowable.
    Failed,
}

const HEADER_START: State = State::Header {
    pos: 0,
    started: false,
    len: None,
};

impl Default for ContentLengthDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ContentLengthDecoder {
    /// The maximum size of one header block, line ends included: 8 KiB.
    ///
    /// A real header block is well under 100 bytes; the bound keeps a peer that
    /// never sends the blank line from making us buffer without end.
    pub const MAX_HEADER_LEN: usize = 8 << 10;

    /// A decoder with the default maximum frame length (16 MiB).
    pub fn new() -> Self {
        Self::with_max_frame_len(DEFAULT_MAX_FRAME_LEN)
    }

    /// A decoder that rejects bodies longer than `max_frame_len` bytes.
    pub fn with_max_frame_len(max_frame_len: usize) -> Self {
        Self {
            max_frame_len,
            state: HEADER_START,
        }
    }

    /// The maximum body length this decoder accepts.
    pub fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    /// True once a header error has made the decoder give up on the stream.
    pub fn is_desynchronized(&self) -> bool {
        self.state == State::Failed
    }

    /// Takes the next complete frame body out of `buf`, if there is one.
    ///
    /// Returns `Ok(None)` when `buf` holds no complete frame yet; the partial
    /// frame stays in `buf` for the next call. Between calls, only append to
    /// `buf`: the decoder remembers which header lines it has parsed.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        loop {
            match self.state {
                State::Failed => {
                    let len = buf.len();
                    buf.clear();
                    return if len == 0 {
                        Ok(None)
                    } else {
                        Err(DecodeError::Desynchronized { len })
                    };
                }
                State::Skipping(left) => {
                    let n = left.min(buf.len());
                    buf.advance(n);
                    if n < left {
                        self.state = State::Skipping(left - n);
                        return Ok(None);
                    }
                    self.state = HEADER_START;
                }
                State::Body(len) => {
                    if buf.len() < len {
                        // Room for what is still to come, but never more
                        // than RESERVE_AHEAD at once: the length is only the
                        // peer's word (and the maximum may be huge), so the
                        // buffer grows with the bytes that arrive.
                        buf.reserve((len - buf.len()).min(RESERVE_AHEAD));
                        return Ok(None);
                    }
                    self.state = HEADER_START;
                    return Ok(Some(buf.split_to(len).freeze()));
                }
                State::Header { .. } => match self.read_header(buf) {
                    Ok(true) => {}
                    Ok(false) => return Ok(None),
                    Err(e) => {
                        if !matches!(e, DecodeError::FrameTooLong { .. }) {
                            self.state = State::Failed;
                            buf.clear();
                        }
                        return Err(e);
                    }
                },
            }
        }
    }

    /// Parses complete header lines from `buf`. Returns `Ok(true)` once the
    /// block is complete and consumed (the state is then `Body`), `Ok(false)`
    /// when more bytes are needed.
    fn read_header(&mut self, buf: &mut BytesMut) -> Result<bool, DecodeError> {
        let State::Header {
            mut pos,
            mut started,
            mut len,
        } = self.state
        else {
            return Ok(true);
        };
        // Callers must only append to `buf` between calls; one that emptied
        // it anyway gets no panic from indexing past its end.
        pos = pos.min(buf.len());
        loop {
            let Some(rel) = memchr::memchr(b'\n', &buf[pos..]) else {
                if buf.len() > Self::MAX_HEADER_LEN {
                    return Err(DecodeError::HeaderTooLong {
                        max: Self::MAX_HEADER_LEN,
                    });
                }
                self.state = State::Header { pos, started, len };
                return Ok(false);
            };
            let end = pos + rel;
            if end + 1 > Self::MAX_HEADER_LEN {
                return Err(DecodeError::HeaderTooLong {
                    max: Self::MAX_HEADER_LEN,
                });
            }
            let mut line = &buf[pos..end];
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            pos = end + 1;
            if line.is_empty() {
                if !started {
                    // A line end left over after the previous body.
                    buf.advance(pos);
                    pos = 0;
                    continue;
                }
                buf.advance(pos);
                let Some(len) = len else {
                    return Err(DecodeError::MissingContentLength);
                };
                if len > self.max_frame_len {
                    self.state = State::Skipping(len);
                    return Err(DecodeError::FrameTooLong {
                        max: self.max_frame_len,
                        len,
                    });
                }
                self.state = State::Body(len);
                return Ok(true);
            }
            started = true;
            if let Some(value) = parse_header_line(line)? {
                match len {
                    Some(prev) if prev != value => return Err(DecodeError::InvalidContentLength),
                    _ => len = Some(value),
                }
            }
        }
    }

    /// Like [`decode`](Self::decode), for when no more bytes will arrive.
    ///
    /// Input that ends inside a header block or a body is
    /// [`DecodeError::TruncatedHeader`] or [`DecodeError::TruncatedBody`];
    /// line ends after the last frame are not an error. Afterwards `buf` is
    /// empty and the decoder is ready for a new stream (unless it had given up).
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        let len = buf.len();
        let blank = buf.iter().all(|b| matches!(b, b'\r' | b' ' | b'\t'));
        buf.clear();
        match self.state {
            State::Failed => Ok(None),
            State::Skipping(_) => {
                self.state = HEADER_START;
                Ok(None)
            }
            State::Body(expected) => {
                self.state = HEADER_START;
                Err(DecodeError::TruncatedBody {
                    expected,
                    received: len,
                })
            }
            State::Header { started, .. } => {
                self.state = HEADER_START;
                // Before a block has started, empty lines were consumed and a
                // lone `\r` or spaces are harmless padding.
                if started || !blank {
                    Err(DecodeError::TruncatedHeader { len })
                } else {
                    Ok(None)
                }
            }
        }
    }
}

/// Parses one header line; `Some(n)` for a `Content-Length` header.
fn parse_header_line(line: &[u8]) -> Result<Option<usize>, DecodeError> {
    let colon = memchr::memchr(b':', line).ok_or(DecodeError::InvalidHeader)?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if name.is_empty() || !name.iter().all(|&b| is_token_byte(b)) {
        return Err(DecodeError::InvalidHeader);
    }
    if !name.eq_ignore_ascii_case(b"content-length") {
        return Ok(None);
    }
    let value = value.trim_ascii();
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(DecodeError::InvalidContentLength);
    }
    value
        .iter()
        .try_fold(0usize, |n, &d| {
            n.checked_mul(10)?.checked_add(usize::from(d - b'0'))
        })
        .map(Some)
        .ok_or(DecodeError::InvalidContentLength)
}

/// The characters of an HTTP header name (RFC 9110 `tchar`).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(dec: &mut ContentLengthDecoder, input: &[u8]) -> Vec<Result<Bytes, DecodeError>> {
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(f)) => out.push(Ok(f)),
                Ok(None) => break,
                Err(e) => out.push(Err(e)),
            }
        }
        match dec.decode_eof(&mut buf) {
            Ok(Some(f)) => out.push(Ok(f)),
            Ok(None) => {}
            Err(e) => out.push(Err(e)),
        }
        out
    }

    /// A declared length is the peer's word: with no practical maximum, a
    /// huge one must not make the decoder allocate it (found by fuzzing:
    /// the allocation aborted the process).
    #[test]
    fn a_huge_declared_length_reserves_only_a_bounded_amount() {
        let mut dec = ContentLengthDecoder::with_max_frame_len(usize::MAX);
        let mut buf = BytesMut::from(&b"Content-Length: 288230376151711744\r\n\r\n{}"[..]);
        assert!(matches!(dec.decode(&mut buf), Ok(None)));
        assert!(buf.capacity() <= RESERVE_AHEAD + 64, "{}", buf.capacity());
        // A body that does arrive is still read whole.
        let mut dec = ContentLengthDecoder::with_max_frame_len(usize::MAX);
        let body = vec![b'x'; 3 * RESERVE_AHEAD];
        let mut buf = BytesMut::from(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        assert!(matches!(dec.decode(&mut buf), Ok(None)));
        for chunk in body.chunks(RESERVE_AHEAD / 2) {
            buf.extend_from_slice(chunk);
        }
        assert_eq!(dec.decode(&mut buf).unwrap().unwrap().len(), body.len());
    }

    fn ok(s: &'static [u8]) -> Result<Bytes, DecodeError> {
        Ok(Bytes::from_static(s))
    }

    #[test]
    fn frames_with_other_headers_and_any_case() {
        let mut dec = ContentLengthDecoder::new();
        let input = b"Content-Length: 2\r\n\r\n{}\
            content-type: application/json\r\nCONTENT-LENGTH:3\r\n\r\n[1]\
            Content-Length: 0\r\n\r\n";
        assert_eq!(
            decode_all(&mut dec, input),
            vec![ok(b"{}"), ok(b"[1]"), ok(b"")]
        );
    }

    #[test]
    fn bare_lf_and_trailing_line_ends_are_accepted() {
        let mut dec = ContentLengthDecoder::new();
        let input = b"Content-Length: 2\n\n{}\r\n\nContent-Length:  1 \r\n\r\n1\n";
        assert_eq!(decode_all(&mut dec, input), vec![ok(b"{}"), ok(b"1")]);
    }

    #[test]
    fn partial_header_and_body_wait_for_more() {
        let mut dec = ContentLengthDecoder::new();
        let mut buf = BytesMut::from(&b"Content-Len"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"gth: 5\r\nX-A: b\r\n");
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert_eq!(
            dec.state,
            State::Header {
                pos: 27,
                started: true,
                len: Some(5)
            },
            "parsed lines are remembered, not rescanned"
        );
        buf.extend_from_slice(b"\r\nab");
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert!(buf.capacity() >= 5, "room for the body is reserved");
        buf.extend_from_slice(b"cdeContent");
        assert_eq!(dec.decode(&mut buf), Ok(Some(Bytes::from_static(b"abcde"))));
        assert_eq!(&buf[..], b"Content");
    }

    #[test]
    fn oversized_declared_length_is_skipped_without_buffering() {
        let mut dec = ContentLengthDecoder::with_max_frame_len(4);
        let mut buf = BytesMut::from(&b"Content-Length: 1000000000\r\n\r\nxxxx"[..]);
        assert_eq!(
            dec.decode(&mut buf),
            Err(DecodeError::FrameTooLong {
                max: 4,
                len: 1_000_000_000
            })
        );
        assert!(buf.capacity() < 1000, "no room reserved for the body");
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert!(buf.is_empty(), "skipped bytes are dropped at once");
        assert_eq!(dec.state, State::Skipping(1_000_000_000 - 4));

        let mut dec = ContentLengthDecoder::with_max_frame_len(4);
        assert_eq!(
            decode_all(
                &mut dec,
                b"Content-Length: 5\r\n\r\n12345Content-Length: 4\r\n\r\n1234"
            ),
            vec![
                Err(DecodeError::FrameTooLong { max: 4, len: 5 }),
                ok(b"1234")
            ]
        );
    }

    #[test]
    fn header_errors_are_typed_and_final() {
        let cases: &[(&[u8], DecodeError)] = &[
            (b"Content-Length 2\r\n\r\n{}", DecodeError::InvalidHeader),
            (b": 2\r\n\r\n{}", DecodeError::InvalidHeader),
            (b"Bad Name: 2\r\n\r\n{}", DecodeError::InvalidHeader),
            (b"X-Other: 1\r\n\r\n{}", DecodeError::MissingContentLength),
            (
                b"Content-Length: -2\r\n\r\n{}",
                DecodeError::InvalidContentLength,
            ),
            (
                b"Content-Length: 0x2\r\n\r\n{}",
                DecodeError::InvalidContentLength,
            ),
            (
                b"Content-Length:\r\n\r\n{}",
                DecodeError::InvalidContentLength,
            ),
            (
                b"Content-Length: 99999999999999999999999\r\n\r\n",
                DecodeError::InvalidContentLength,
            ),
            (
                b"Content-Length: 2\r\ncontent-length: 3\r\n\r\n{}",
                DecodeError::InvalidContentLength,
            ),
        ];
        for (input, want) in cases {
            let mut dec = ContentLengthDecoder::new();
            let mut buf = BytesMut::from(*input);
            assert_eq!(dec.decode(&mut buf).as_ref(), Err(want), "{input:?}");
            assert!(dec.is_desynchronized());
            assert_eq!(dec.decode(&mut buf), Ok(None));
            buf.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
            assert_eq!(
                dec.decode(&mut buf),
                Err(DecodeError::Desynchronized { len: 23 })
            );
            assert!(buf.is_empty(), "dropped bytes are not kept");
        }
        let mut dec = ContentLengthDecoder::new();
        assert_eq!(
            decode_all(
                &mut dec,
                b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"
            ),
            vec![ok(b"{}")],
            "repeated equal lengths are fine"
        );
    }

    #[test]
    fn header_block_is_bounded() {
        let mut dec = ContentLengthDecoder::new();
        let mut buf = BytesMut::from(&b"X-Long: "[..]);
        buf.extend_from_slice(&[b'a'; ContentLengthDecoder::MAX_HEADER_LEN]);
        assert_eq!(
            dec.decode(&mut buf),
            Err(DecodeError::HeaderTooLong {
                max: ContentLengthDecoder::MAX_HEADER_LEN
            })
        );
        let mut dec = ContentLengthDecoder::new();
        let mut buf = BytesMut::new();
        for _ in 0..1000 {
            buf.extend_from_slice(b"X-Many: 1\r\n");
        }
        assert!(matches!(
            dec.decode(&mut buf),
            Err(DecodeError::HeaderTooLong { .. })
        ));
    }

    #[test]
    fn truncation_at_eof_is_typed() {
        let mut dec = ContentLengthDecoder::new();
        assert_eq!(
            decode_all(&mut dec, b"Content-Length: 5\r\n\r\nabc"),
            vec![Err(DecodeError::TruncatedBody {
                expected: 5,
                received: 3
            })]
        );
        assert_eq!(
            decode_all(&mut dec, b"Content-Length: 5\r\n"),
            vec![Err(DecodeError::TruncatedHeader { len: 19 })]
        );
        assert_eq!(
            decode_all(&mut dec, b"Content-Le"),
            vec![Err(DecodeError::TruncatedHeader { len: 10 })]
        );
        assert_eq!(decode_all(&mut dec, b"\r\n\r\n\r"), vec![]);
        assert_eq!(decode_all(&mut dec, b""), vec![]);
    }
}
