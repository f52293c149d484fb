//! Server-Sent Events (`text/event-stream`), decoded per the WHATWG HTML
//! standard's event-stream interpretation rules.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::{DEFAULT_MAX_FRAME_LEN, DecodeError};

/// The default maximum size of one event: 16 MiB plus 64 KiB.
///
/// The slack above [`DEFAULT_MAX_FRAME_LEN`] leaves room for field names, an
/// `id` and line ends around a message of the default maximum frame length.
pub const DEFAULT_MAX_EVENT_LEN: usize = DEFAULT_MAX_FRAME_LEN + (64 << 10);

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched Server-Sent Event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The event type: the last `event` field, or `"message"` if there was none
    /// (or it was empty).
    pub event: String,
    /// The `data` fields' values joined with `\n`. Empty if the event had no
    /// `data` field. A single `data` line is a zero-copy slice of the input.
    pub data: Bytes,
    /// The value of this event's last valid `id` field, if it carried one.
    /// `Some("")` means the server reset the last event id.
    pub id: Option<String>,
    /// The reconnection time in milliseconds from this event's last valid
    /// `retry` field, if it carried one.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// The event type (`"message"` by default).
    pub fn event(&self) -> &str {
        &self.event
    }

    /// The data, with multiple `data` lines joined by `\n`.
    pub fn data(&self) -> &Bytes {
        &self.data
    }

    /// The `id` this event carried, if any.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The `retry` (milliseconds) this event carried, if any.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }
}

/// Decodes a `text/event-stream` body into [`SseEvent`]s.
///
/// The event-stream rules are followed: lines end in CRLF, LF or a lone CR (a
/// CR at the end of one read and an LF at the start of the next are one line
/// end); a leading UTF-8 byte order mark is skipped; lines starting with `:`
/// are comments; a line without a colon is a field with an empty value; one
/// space after the colon is stripped; `data` lines are joined with `\n`; an
/// `id` containing NUL is ignored; `retry` is taken only if it is all ASCII
/// digits; unknown fields are ignored; a blank line dispatches the event.
///
/// One deliberate difference from a browser's `EventSource`: an event with
/// empty data is still returned if it carried any `data`, `event`, `id` or
/// valid `retry` field, so that a transport can record its `id` and `retry`
/// (MCP's "priming" events have an `id` and empty data). A blank line after
/// nothing but comments dispatches nothing.
///
/// The decoder remembers how far it has scanned a partial line, so a line
/// arriving in many small reads is scanned once in total. Between calls, only
/// append to the buffer.
///
/// # Limits and recovery
///
/// The size of an event is the total length of its `data`, `event` and `id`
/// lines (without line ends) plus the line being read; comment and other lines
/// count while they are being read. When it passes
/// [`max_event_len`](Self::max_event_len), [`decode`](Self::decode) returns
/// [`DecodeError::FrameTooLong`] at once, so a reader that feeds at most one
/// read's worth of bytes between calls never holds more than the limit plus
/// one read. The event is then dropped: the decoder discards its remaining
/// lines up to the blank line that ends it, and decodes the next event
/// normally.
#[derive(Debug, Clone)]
pub struct SseDecoder {
    max_event_len: usize,
    /// How many bytes at the front of the buffer are known to hold no CR or LF.
    scanned: usize,
    /// The previous line ended in CR: an LF at the front belongs to it.
    skip_lf: bool,
    /// The start of the stream (and so a possible BOM) has been dealt with.
    bom_done: bool,
    discard: Discard,
    pending: Pending,
    /// The "last event ID buffer": the last `id` value seen, kept across
    /// events.
    id_buffer: String,
    /// The last event ID as of the last dispatch (blank line).
    last_event_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Discard {
    /// Decoding normally.
    No,
    /// Dropping the rest of an oversized line, then the rest of its event.
    Line,
    /// Dropping lines up to the blank line ending an oversized event.
    Event,
}

/// The fields of the event being read.
#[derive(Debug, Clone, Default)]
struct Pending {
    data: Data,
    event: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
    /// Some field that makes the event worth dispatching was seen.
    has_fields: bool,
    /// Bytes of `data`, `event` and `id` lines held, for the size limit.
    len: usize,
}

#[derive(Debug, Clone, Default)]
enum Data {
    #[default]
    None,
    /// A single `data` line, a slice of the input.
    One(Bytes),
    /// Several `data` lines joined with `\n`.
    Many(BytesMut),
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder with the default maximum event size
    /// ([`DEFAULT_MAX_EVENT_LEN`]).
    pub fn new() -> Self {
        Self::with_max_event_len(DEFAULT_MAX_EVENT_LEN)
    }

    /// A decoder that rejects events larger than `max_event_len` bytes.
    pub fn with_max_event_len(max_event_len: usize) -> Self {
        Self {
            max_event_len,
            scanned: 0,
            skip_lf: false,
            bom_done: false,
            discard: Discard::No,
            pending: Pending::default(),
            id_buffer: String::new(),
            last_event_id: String::new(),
        }
    }

    /// The maximum event size this decoder accepts.
    pub fn max_event_len(&self) -> usize {
        self.max_event_len
    }

    /// The last event ID as of the last dispatched event: what a client sends
    /// as `Last-Event-ID` when it reconnects. `None` if no event has set one, or
    /// the server reset it with an empty `id`.
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_event_id.is_empty()).then_some(self.last_event_id.as_str())
    }

    /// Takes the next complete event out of `buf`, if there is one.
    ///
    /// Returns `Ok(None)` when `buf` holds no complete event yet; the partial
    /// line stays in `buf` (complete lines of a partial event are taken into
    /// the decoder).
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, DecodeError> {
        loop {
            if !self.bom_done {
                let n = buf.len().min(BOM.len());
                if buf[..n] == BOM[..n] {
                    if n < BOM.len() {
                        // Possibly the start of a BOM: wait for more.
                        return Ok(None);
                    }
                    buf.advance(BOM.len());
                }
                self.bom_done = true;
            }
            if self.skip_lf {
                match buf.first() {
                    None => return Ok(None),
                    Some(b'\n') => {
                        buf.advance(1);
                    }
                    Some(_) => {}
                }
                self.skip_lf = false;
            }
            // Callers must only append to `buf` between calls; one that emptied
            // it anyway gets no panic from indexing past its end.
            self.scanned = self.scanned.min(buf.len());
            let Some(rel) = memchr::memchr2(b'\n', b'\r', &buf[self.scanned..]) else {
                self.scanned = buf.len();
                if self.discard != Discard::No {
                    // Nothing of an oversized event is kept. The rest of a
                    // dropped partial line must not pass for a blank line.
                    if !buf.is_empty() {
                        buf.clear();
                        self.discard = Discard::Line;
                    }
                    self.scanned = 0;
                    return Ok(None);
                }
                let len = self.pending.len.saturating_add(buf.len());
                if len > self.max_event_len {
                    buf.clear();
                    self.scanned = 0;
                    self.pending = Pending::default();
                    self.discard = Discard::Line;
                    return Err(DecodeError::FrameTooLong {
                        max: self.max_event_len,
                        len,
                    });
                }
                return Ok(None);
            };
            let end = self.scanned + rel;
            self.scanned = 0;
            self.skip_lf = buf[end] == b'\r';
            if let Some(event) = self.line(buf, end)? {
                return Ok(Some(event));
            }
        }
    }

    /// Handles the line `buf[..end]` and consumes it with its line end.
    fn line(&mut self, buf: &mut BytesMut, end: usize) -> Result<Option<SseEvent>, DecodeError> {
        match self.discard {
            Discard::No => {}
            Discard::Line => {
                buf.advance(end + 1);
                self.discard = Discard::Event;
                return Ok(None);
            }
            Discard::Event => {
                buf.advance(end + 1);
                if end == 0 {
                    self.discard = Discard::No;
                    self.dispatch();
                }
                return Ok(None);
            }
        }
        if end == 0 {
            buf.advance(1);
            return Ok(self.dispatch());
        }
        let len = self.pending.len.saturating_add(end);
        if len > self.max_event_len {
            // The same limit the partial line would have met had it arrived in
            // pieces, so how the input is chunked does not change the outcome.
            buf.advance(end + 1);
            self.pending = Pending::default();
            self.discard = Discard::Event;
            return Err(DecodeError::FrameTooLong {
                max: self.max_event_len,
                len,
            });
        }
        let line = &buf[..end];
        if line[0] == b':' {
            buf.advance(end + 1);
            return Ok(None);
        }
        let (name_end, value_start) = match memchr::memchr(b':', line) {
            Some(colon) if line.get(colon + 1) == Some(&b' ') => (colon, colon + 2),
            Some(colon) => (colon, colon + 1),
            None => (end, end),
        };
        match &line[..name_end] {
            b"data" => {
                let line = buf.split_to(end + 1).freeze();
                let value = line.slice(value_start.min(end)..end);
                self.pending.len = len;
                self.pending.has_fields = true;
                self.pending.data = match std::mem::take(&mut self.pending.data) {
                    Data::None => Data::One(value),
                    Data::One(first) => {
                        let mut joined = BytesMut::with_capacity(first.len() + 1 + value.len());
                        joined.extend_from_slice(&first);
                        joined.put_u8(b'\n');
                        joined.extend_from_slice(&value);
                        Data::Many(joined)
                    }
                    Data::Many(mut joined) => {
                        joined.put_u8(b'\n');
                        joined.extend_from_slice(&value);
                        Data::Many(joined)
                    }
                };
                return Ok(None);
            }
            b"event" => {
                self.pending.len = len;
                self.pending.has_fields = true;
                self.pending.event = Some(text(&line[value_start.min(end)..]));
            }
            b"id" => {
                let value = &line[value_start.min(end)..];
                if !value.contains(&0) {
                    self.pending.len = len;
                    self.pending.has_fields = true;
                    let value = text(value);
                    self.id_buffer.clone_from(&value);
                    self.pending.id = Some(value);
                }
            }
            b"retry" => {
                let value = &line[value_start.min(end)..];
                if let Some(ms) = parse_retry(value) {
                    self.pending.has_fields = true;
                    self.pending.retry = Some(ms);
                }
            }
            _ => {}
        }
        buf.advance(end + 1);
        Ok(None)
    }

    /// Ends the pending event at a blank line.
    fn dispatch(&mut self) -> Option<SseEvent> {
        self.last_event_id.clone_from(&self.id_buffer);
        let pending = std::mem::take(&mut self.pending);
        if !pending.has_fields {
            return None;
        }
        let event = match pending.event {
            Some(name) if !name.is_empty() => name,
            _ => "message".to_owned(),
        };
        let data = match pending.data {
            Data::None => Bytes::new(),
            Data::One(b) => b,
            Data::Many(b) => b.freeze(),
        };
        Some(SseEvent {
            event,
            data,
            id: pending.id,
            retry: pending.retry,
        })
    }

    /// Like [`decode`](Self::decode), for when no more bytes will arrive.
    ///
    /// An event cut off before its blank line is not returned (as the
    /// event-stream rules ask) but reported as [`DecodeError::TruncatedEvent`];
    /// a trailing comment or an oversized event being discarded is not an
    /// error. Afterwards `buf` is empty and the decoder is ready for a new
    /// stream, keeping only its [`last_event_id`](Self::last_event_id).
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, DecodeError> {
        if let Some(event) = self.decode(buf)? {
            return Ok(Some(event));
        }
        let partial = buf.len();
        let comment = buf.first() == Some(&b':');
        let pending = std::mem::take(&mut self.pending);
        let discarding = self.discard != Discard::No;
        buf.clear();
        self.scanned = 0;
        self.skip_lf = false;
        self.bom_done = false;
        self.discard = Discard::No;
        self.id_buffer.clone_from(&self.last_event_id);
        if !discarding && (pending.has_fields || (partial > 0 && !comment)) {
            return Err(DecodeError::TruncatedEvent {
                len: pending.len + partial,
            });
        }
        Ok(None)
    }
}

/// A field value as text; invalid UTF-8 becomes U+FFFD, as a browser decodes
/// the stream.
fn text(value: &[u8]) -> String {
    String::from_utf8_lossy(value).into_owned()
}

/// A `retry` value: ASCII digits only, and it must fit in a `u64`.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |n, &d| {
        if !d.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(dec: &mut SseDecoder, input: &[u8]) -> Vec<Result<SseEvent, DecodeError>> {
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(e)) => out.push(Ok(e)),
                Ok(None) => break,
                Err(e) => out.push(Err(e)),
            }
        }
        match dec.decode_eof(&mut buf) {
            Ok(Some(e)) => out.push(Ok(e)),
            Ok(None) => {}
            Err(e) => out.push(Err(e)),
        }
        out
    }

    fn ev(event: &str, data: &str, id: Option<&str>, retry: Option<u64>) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: Bytes::copy_from_slice(data.as_bytes()),
            id: id.map(Into::into),
            retry,
        }
    }

    fn events(input: &[u8]) -> Vec<SseEvent> {
        decode_all(&mut SseDecoder::new(), input)
            .into_iter()
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn fields_in_any_order_and_multiline_data() {
        assert_eq!(
            events(b"data: a\nid: 7\ndata:b\nevent: e\ndata\ndata:  c\nretry: 30\n\n"),
            vec![ev("e", "a\nb\n\n c", Some("7"), Some(30))]
        );
    }

    #[test]
    fn lf_cr_and_crlf_line_ends() {
        let want = vec![
            ev("message", "x", None, None),
            ev("message", "y", None, None),
        ];
        assert_eq!(events(b"data: x\n\ndata: y\n\n"), want);
        assert_eq!(events(b"data: x\r\rdata: y\r\r"), want);
        assert_eq!(events(b"data: x\r\n\r\ndata: y\r\n\r\n"), want);
        assert_eq!(events(b"data: x\r\n\rdata: y\n\r\n"), want);
    }

    #[test]
    fn cr_at_end_of_a_read_then_lf_is_one_line_end() {
        let mut dec = SseDecoder::new();
        let mut buf = BytesMut::from(&b"data: x\r"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"\n");
        assert_eq!(dec.decode(&mut buf), Ok(None), "the LF is not a blank line");
        buf.extend_from_slice(b"\r");
        assert_eq!(
            dec.decode(&mut buf),
            Ok(Some(ev("message", "x", None, None)))
        );
        buf.extend_from_slice(b"\ndata: y\n\n");
        assert_eq!(
            dec.decode(&mut buf),
            Ok(Some(ev("message", "y", None, None)))
        );
    }

    #[test]
    fn comments_bom_unknown_fields_and_colonless_fields() {
        assert_eq!(
            events(b"\xEF\xBB\xBF: hello\nfoo: bar\ndata\n\n: only a comment\n\n"),
            vec![ev("message", "", None, None)]
        );
        // A BOM is only skipped at the very start; split across reads it still is.
        let mut dec = SseDecoder::new();
        let mut buf = BytesMut::from(&b"\xEF\xBB"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"\xBFdata: z\n\n\xEF\xBB\xBFdata: w\n\n");
        assert_eq!(
            dec.decode(&mut buf),
            Ok(Some(ev("message", "z", None, None)))
        );
        assert_eq!(
            dec.decode(&mut buf),
            Ok(None),
            "a later BOM is a field name"
        );
    }

    #[test]
    fn empty_data_events_keep_id_and_retry() {
        let mut dec = SseDecoder::new();
        assert_eq!(
            decode_all(&mut dec, b"id: prime-1\nretry: 500\ndata:\n\n"),
            vec![Ok(ev("message", "", Some("prime-1"), Some(500)))]
        );
        assert_eq!(dec.last_event_id(), Some("prime-1"));
        assert_eq!(
            events(b"id: 2\n\nevent: ping\n\n"),
            vec![
                ev("message", "", Some("2"), None),
                ev("ping", "", None, None)
            ]
        );
    }

    #[test]
    fn id_rules() {
        let mut dec = SseDecoder::new();
        let out = decode_all(
            &mut dec,
            b"id: 1\ndata: a\n\ndata: b\n\nid: bad\0id\ndata: c\n\nid\ndata: d\n\n",
        );
        assert_eq!(
            out,
            vec![
                Ok(ev("message", "a", Some("1"), None)),
                Ok(ev("message", "b", None, None)),
                Ok(ev("message", "c", None, None)),
                Ok(ev("message", "d", Some(""), None)),
            ]
        );
        assert_eq!(dec.last_event_id(), None, "an empty id resets it");
        let mut dec = SseDecoder::new();
        let mut buf = BytesMut::from(&b"id: 1\ndata: a\n\nid: 2\ndata: b\n"[..]);
        assert!(dec.decode(&mut buf).unwrap().is_some());
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert_eq!(
            dec.last_event_id(),
            Some("1"),
            "an id counts once its event is dispatched"
        );
        assert!(dec.decode_eof(&mut buf).is_err());
        assert_eq!(dec.last_event_id(), Some("1"));
    }

    #[test]
    fn retry_must_be_digits() {
        assert_eq!(
            events(b"retry: 1x\nretry: -1\nretry:\nretry: 99999999999999999999999\ndata: a\n\n"),
            vec![ev("message", "a", None, None)]
        );
        assert_eq!(
            events(b"retry:250\n\n"),
            vec![ev("message", "", None, Some(250))]
        );
    }

    #[test]
    fn single_line_data_is_zero_copy() {
        let mut dec = SseDecoder::new();
        let mut buf = BytesMut::from(&b"data: payload\n\n"[..]);
        let start = buf.as_ptr() as usize;
        let event = dec.decode(&mut buf).unwrap().unwrap();
        assert_eq!(event.data.as_ptr() as usize, start + 6);
    }

    #[test]
    fn partial_line_is_not_rescanned() {
        let mut dec = SseDecoder::new();
        let mut buf = BytesMut::from(&b"data: abc"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert_eq!(dec.scanned, 9);
        buf.extend_from_slice(b"def\n\n");
        assert_eq!(
            dec.decode(&mut buf),
            Ok(Some(ev("message", "abcdef", None, None)))
        );
    }

    #[test]
    fn oversized_event_errors_early_then_recovers() {
        let mut dec = SseDecoder::with_max_event_len(16);
        let mut buf = BytesMut::from(&b"data: 0123456789"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"abc");
        assert_eq!(
            dec.decode(&mut buf),
            Err(DecodeError::FrameTooLong { max: 16, len: 19 })
        );
        assert!(buf.is_empty(), "nothing of the oversized event is kept");
        buf.extend_from_slice(b"more");
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"\ndata: still the same event\n\ndata: ok\n\n");
        assert_eq!(
            dec.decode(&mut buf),
            Ok(Some(ev("message", "ok", None, None)))
        );

        // Several lines that each fit but together do not.
        let out = decode_all(
            &mut SseDecoder::with_max_event_len(16),
            b"data: 12345\ndata: 67890\ndata: x\n\ndata: ok\n\n",
        );
        assert_eq!(
            out,
            vec![
                Err(DecodeError::FrameTooLong { max: 16, len: 22 }),
                Ok(ev("message", "ok", None, None))
            ]
        );
    }

    #[test]
    fn truncated_event_at_eof_is_reported_not_returned() {
        let mut dec = SseDecoder::new();
        assert_eq!(
            decode_all(&mut dec, b"data: a\n\ndata: b\n"),
            vec![
                Ok(ev("message", "a", None, None)),
                Err(DecodeError::TruncatedEvent { len: 7 })
            ]
        );
        assert_eq!(
            decode_all(&mut dec, b"data: a"),
            vec![Err(DecodeError::TruncatedEvent { len: 7 })]
        );
        assert_eq!(
            decode_all(&mut dec, b"data: a\n\n: keep-alive"),
            vec![Ok(ev("message", "a", None, None))]
        );
        assert_eq!(decode_all(&mut dec, b""), vec![]);
    }
}
