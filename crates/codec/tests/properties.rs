//! Property tests: how input is split into reads never changes what the
//! decoders produce; encoders and decoders round-trip; the envelope parser
//! handles any bytes without panicking.

use bytes::{Bytes, BytesMut};
use mcpwire_codec::jsonrpc::{Frame, Id, Message, encode_notification, encode_request};
use mcpwire_codec::{
    ContentLengthDecoder, DecodeError, LineDecoder, SseDecoder, SseEvent, encode_content_length,
    encode_line,
};
use proptest::prelude::*;

/// The decoders' common shape, so one driver can feed them all.
trait Decode {
    type Item;
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Self::Item>, DecodeError>;
    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Self::Item>, DecodeError>;
}

macro_rules! impl_decode {
    ($ty:ty, $item:ty) => {
        impl Decode for $ty {
            type Item = $item;
            fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<$item>, DecodeError> {
                <$ty>::decode(self, buf)
            }
            fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<$item>, DecodeError> {
                <$ty>::decode_eof(self, buf)
            }
        }
    };
}

impl_decode!(LineDecoder, Bytes);
impl_decode!(ContentLengthDecoder, Bytes);
impl_decode!(SseDecoder, SseEvent);

/// What a decoder produced, with details that legitimately depend on read
/// sizes normalised away: how much of an oversized frame had been seen when
/// it was rejected, and how many bytes a given-up Content-Length decoder
/// dropped per call.
fn normalise<T>(out: Vec<Result<T, DecodeError>>) -> Vec<Result<T, DecodeError>> {
    out.into_iter()
        .filter(|r| !matches!(r, Err(DecodeError::Desynchronized { .. })))
        .map(|r| match r {
            Err(DecodeError::FrameTooLong { max, .. }) => {
                Err(DecodeError::FrameTooLong { max, len: 0 })
            }
            other => other,
        })
        .collect()
}

/// Feeds `input` to `dec` in reads of the given sizes (cycled), decoding after
/// each read until the decoder wants more, then signals end of input.
fn drive<D: Decode>(
    dec: &mut D,
    input: &[u8],
    sizes: &[usize],
) -> Vec<Result<D::Item, DecodeError>> {
    // Each call either yields, errs after consuming input, or waits; a decoder
    // stuck returning errors without progress would trip this bound.
    let bound = 4 * input.len() + 16;
    let mut calls = 0;
    let mut out = Vec::new();
    let mut buf = BytesMut::new();
    let mut rest = input;
    let mut sizes = sizes.iter().cycle();
    while !rest.is_empty() {
        let n = (*sizes.next().unwrap()).clamp(1, rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        loop {
            calls += 1;
            assert!(calls <= bound, "decoder made no progress");
            match dec.decode(&mut buf) {
                Ok(Some(item)) => out.push(Ok(item)),
                Ok(None) => break,
                Err(e) => out.push(Err(e)),
            }
        }
    }
    loop {
        calls += 1;
        assert!(calls <= bound, "decoder made no progress at end of input");
        match dec.decode_eof(&mut buf) {
            Ok(Some(item)) => out.push(Ok(item)),
            Ok(None) => break,
            Err(e) => out.push(Err(e)),
        }
    }
    assert!(buf.is_empty(), "decode_eof leaves nothing behind");
    out
}

/// Bytes drawn mostly from the characters that matter to the framings.
fn wire_bytes(alphabet: &'static [u8], max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(alphabet),
            1 => any::<u8>(),
        ],
        0..max_len,
    )
}

/// Read sizes: mostly tiny (to split every construct), sometimes large.
fn read_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![3 => 1usize..4, 1 => 1usize..64], 1..16)
}

const LINE_ALPHABET: &[u8] = b"\n\r\n \t{}ab";
const CL_ALPHABET: &[u8] = b"\r\n\r\n:  01259Content-Length:content-lengthX-y";
const SSE_ALPHABET: &[u8] = b"\n\r\n\r::  data:data: event:id:retry:0129xy\0\xEF\xBB\xBF";

/// Content-Length streams: mostly well-formed frames with odd headers mixed in.
fn content_length_stream() -> impl Strategy<Value = Vec<u8>> {
    let frame = prop_oneof![
        4 => (prop::collection::vec(any::<u8>(), 0..40), any::<bool>(), any::<bool>()).prop_map(
            |(body, lower, extra)| {
                let mut out = Vec::new();
                if extra {
                    out.extend_from_slice(b"Content-Type: application/json\r\n");
                }
                let name = if lower { "content-length" } else { "Content-Length" };
                out.extend_from_slice(format!("{name}: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(&body);
                out
            }
        ),
        1 => wire_bytes(CL_ALPHABET, 40),
    ];
    prop::collection::vec(frame, 0..6).prop_map(|frames| frames.concat())
}

/// SSE streams: mostly field lines and blank lines, in any order.
fn sse_stream() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        3 => ("(data|event|id|retry|: c|x)", "[ a-z0-9:]{0,12}", prop::sample::select(&["\n", "\r", "\r\n"][..]))
            .prop_map(|(f, v, end)| format!("{f}:{v}{end}").into_bytes()),
        2 => prop::sample::select(&["\n", "\r", "\r\n"][..]).prop_map(|s| s.as_bytes().to_vec()),
        1 => wire_bytes(SSE_ALPHABET, 24),
    ];
    (any::<bool>(), prop::collection::vec(line, 0..16)).prop_map(|(bom, lines)| {
        let mut out = if bom {
            b"\xEF\xBB\xBF".to_vec()
        } else {
            Vec::new()
        };
        out.extend(lines.concat());
        out
    })
}

proptest! {
    #[test]
    fn line_chunking_does_not_change_frames(
        input in wire_bytes(LINE_ALPHABET, 200),
        sizes in read_sizes(),
        max in 1usize..24,
    ) {
        let whole = drive(&mut LineDecoder::with_max_frame_len(max), &input, &[input.len().max(1)]);
        let chunked = drive(&mut LineDecoder::with_max_frame_len(max), &input, &sizes);
        prop_assert_eq!(normalise(whole), normalise(chunked));
    }

    #[test]
    fn content_length_chunking_does_not_change_frames(
        input in content_length_stream(),
        sizes in read_sizes(),
        max in prop_oneof![1usize..40, Just(usize::MAX)],
    ) {
        let whole = drive(&mut ContentLengthDecoder::with_max_frame_len(max), &input, &[input.len().max(1)]);
        let chunked = drive(&mut ContentLengthDecoder::with_max_frame_len(max), &input, &sizes);
        prop_assert_eq!(normalise(whole), normalise(chunked));
    }

    #[test]
    fn sse_chunking_does_not_change_events(
        input in sse_stream(),
        sizes in read_sizes(),
        max in prop_oneof![4usize..64, Just(usize::MAX)],
    ) {
        let mut a = SseDecoder::with_max_event_len(max);
        let mut b = SseDecoder::with_max_event_len(max);
        let whole = drive(&mut a, &input, &[input.len().max(1)]);
        let chunked = drive(&mut b, &input, &sizes);
        prop_assert_eq!(normalise(whole), normalise(chunked));
        prop_assert_eq!(a.last_event_id(), b.last_event_id());
    }

    #[test]
    fn line_encoding_round_trips(
        frames in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 0..8),
        sizes in read_sizes(),
    ) {
        // The line decoder drops blank lines and one `\r` before the `\n`:
        // neither can be a JSON text without trailing whitespace.
        let frames: Vec<Vec<u8>> = frames
            .into_iter()
            .map(|f| f.into_iter().filter(|&b| b != b'\n').collect::<Vec<u8>>())
            .filter(|f| !f.iter().all(|b| matches!(b, b' ' | b'\t')) && f.last() != Some(&b'\r'))
            .collect();
        let mut wire = BytesMut::new();
        for f in &frames {
            encode_line(f, &mut wire).unwrap();
        }
        let out = drive(&mut LineDecoder::new(), &wire, &sizes);
        let want: Vec<Result<Bytes, DecodeError>> =
            frames.into_iter().map(|f| Ok(Bytes::from(f))).collect();
        prop_assert_eq!(out, want);
    }

    #[test]
    fn content_length_encoding_round_trips(
        frames in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 0..8),
        sizes in read_sizes(),
    ) {
        let mut wire = BytesMut::new();
        for f in &frames {
            encode_content_length(f, &mut wire).unwrap();
        }
        let out = drive(&mut ContentLengthDecoder::new(), &wire, &sizes);
        let want: Vec<Result<Bytes, DecodeError>> =
            frames.into_iter().map(|f| Ok(Bytes::from(f))).collect();
        prop_assert_eq!(out, want);
    }

    #[test]
    fn envelope_encoding_round_trips_through_line_framing(
        id in prop_oneof![any::<i64>().prop_map(Id::Number), ".{0,12}".prop_map(Id::from)],
        method in ".{0,16}",
        param in ".{0,16}",
    ) {
        // Arbitrary strings (newlines, quotes, control characters included)
        // must come out of compact JSON on one line and parse back exactly.
        let params = serde_json::json!({ "p": param });
        let (mut request, mut notification) = (BytesMut::new(), BytesMut::new());
        encode_request(&mut request, &id, &method, Some(&params)).unwrap();
        encode_notification(&mut notification, &method, None::<&()>).unwrap();
        let mut wire = BytesMut::new();
        encode_line(&request, &mut wire).unwrap();
        encode_line(&notification, &mut wire).unwrap();
        let mut dec = LineDecoder::new();
        let first = dec.decode(&mut wire).unwrap().unwrap();
        let second = dec.decode(&mut wire).unwrap().unwrap();
        prop_assert!(wire.is_empty());
        match Message::parse(first).unwrap() {
            Message::Request(r) => {
                prop_assert_eq!(r.id, id);
                prop_assert_eq!(&r.method, &method);
                prop_assert_eq!(r.params.unwrap().deserialize::<serde_json::Value>().unwrap(), params);
            }
            other => prop_assert!(false, "not a request: {:?}", other),
        }
        match Message::parse(second).unwrap() {
            Message::Notification(n) => {
                prop_assert_eq!(&n.method, &method);
                prop_assert!(n.params.is_none());
            }
            other => prop_assert!(false, "not a notification: {:?}", other),
        }
    }

    #[test]
    fn envelope_parser_never_panics_on_bytes(input in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = Message::parse(Bytes::from(input.clone()));
        let _ = Message::parse_frame(Bytes::from(input));
    }

    #[test]
    fn envelope_parser_classifies_consistently(object in json_envelope(), batch in any::<bool>()) {
        let text = if batch { format!("[{object},{object}]") } else { object.to_string() };
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        match Message::parse_frame(Bytes::from(text)) {
            Ok(Frame::Single(m)) => check_consistent(&m, &value)?,
            Ok(Frame::Batch(items)) => {
                prop_assert_eq!(items.len(), 2);
                for m in items.iter().flatten() {
                    check_consistent(m, &value[0])?;
                }
            }
            Err(_) => {}
        }
    }
}

/// A successfully parsed message must agree with the JSON it came from.
fn check_consistent(m: &Message, v: &serde_json::Value) -> Result<(), TestCaseError> {
    prop_assert_eq!(&v["jsonrpc"], "2.0");
    match m {
        Message::Request(r) => {
            prop_assert_eq!(v["method"].as_str(), Some(r.method.as_str()));
            prop_assert_eq!(id_json(&r.id), v["id"].clone());
        }
        Message::Notification(n) => {
            prop_assert_eq!(v["method"].as_str(), Some(n.method.as_str()));
            prop_assert!(v.get("id").is_none());
        }
        Message::Response(r) => {
            prop_assert!(v.get("method").is_none());
            prop_assert_eq!(r.outcome.is_ok(), v.get("result").is_some());
            match &r.id {
                Some(id) => prop_assert_eq!(id_json(id), v["id"].clone()),
                None => prop_assert!(v.get("id").is_none_or(serde_json::Value::is_null)),
            }
        }
    }
    Ok(())
}

fn id_json(id: &Id) -> serde_json::Value {
    match id {
        Id::Number(n) => serde_json::json!(n),
        Id::String(s) => serde_json::json!(s.as_ref()),
    }
}

/// JSON objects made of envelope members with valid and invalid values.
fn json_envelope() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    let value = prop_oneof![
        Just(json!(null)),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(1.5)),
        Just(json!(u64::MAX)),
        Just(json!("2.0")),
        Just(json!("1.0")),
        Just(json!("")),
        Just(json!("x")),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"code": -32601, "message": "m"})),
        Just(json!({"code": 1e3, "message": "m"})),
        Just(json!({"code": 5_000_000_000i64, "message": "m"})),
        Just(json!({"code": 1})),
        Just(json!(true)),
    ];
    let member = prop::sample::select(
        &[
            "jsonrpc", "id", "method", "params", "result", "error", "extra",
        ][..],
    );
    (
        prop::option::weighted(0.9, Just(json!("2.0"))),
        prop::collection::vec((member, value), 0..6),
    )
        .prop_map(|(version, members)| {
            let mut obj = serde_json::Map::new();
            if let Some(v) = version {
                obj.insert("jsonrpc".into(), v);
            }
            for (k, v) in members {
                obj.insert(k.to_string(), v);
            }
            serde_json::Value::Object(obj)
        })
}
