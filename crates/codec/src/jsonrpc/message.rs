use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::scan::{self, Members};
use super::{EnvelopeError, ErrorCode, ErrorObject, Id, Payload};

/// A request: a method call that expects a response with the same id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The id the response will carry.
    pub id: Id,
    /// The method name.
    pub method: String,
    /// The parameters, unparsed.
    pub params: Option<Payload>,
}

/// A notification: a method call that expects no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The parameters, unparsed.
    pub params: Option<Payload>,
}

/// A response: the outcome of the request with the same id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The request's id; `None` only for an error response whose id was `null`
    /// or absent (the peer could not read the request's id).
    pub id: Option<Id>,
    /// The `result`, or the `error`.
    pub outcome: Result<Payload, ErrorObject>,
}

/// One JSON-RPC 2.0 message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response (success or error).
    Response(Response),
}

/// The messages of a batch, each parsed on its own: one bad element does not
/// spoil the others.
pub type Batch = Vec<Result<Message, EnvelopeError>>;

/// A frame, where batches are accepted: one message, or a batch.
#[derive(Debug)]
pub enum Frame {
    /// A single message.
    Single(Message),
    /// A JSON array of messages (JSON-RPC batching, MCP 2025-03-26 only).
    Batch(Batch),
}

#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// Maps a present member (even `null`) to `Some`, so absence and `null` differ.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct RawError<'a> {
    code: i64,
    message: String,
    #[serde(borrow, default, deserialize_with = "present")]
    data: Option<&'a RawValue>,
}

fn first_byte(bytes: &[u8]) -> Option<u8> {
    bytes
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

impl Message {
    /// Parses one frame as a single message; a batch is
    /// [`EnvelopeError::UnexpectedBatch`].
    pub fn parse(frame: Bytes) -> Result<Message, EnvelopeError> {
        match first_byte(&frame) {
            Some(b'{') => parse_object(&frame, &frame),
            Some(b'[') => match serde_json::from_slice::<serde::de::IgnoredAny>(&frame) {
                Ok(_) => Err(EnvelopeError::UnexpectedBatch),
                Err(e) => Err(EnvelopeError::Json(e)),
            },
            _ => Err(not_an_object(&frame)),
        }
    }

    /// Parses one frame as a single message or, if it is a JSON array, a batch.
    pub fn parse_frame(frame: Bytes) -> Result<Frame, EnvelopeError> {
        if first_byte(&frame) != Some(b'[') {
            return Message::parse(frame).map(Frame::Single);
        }
        let elements: Vec<&RawValue> =
            serde_json::from_slice(&frame).map_err(EnvelopeError::Json)?;
        if elements.is_empty() {
            return Err(EnvelopeError::EmptyBatch);
        }
        Ok(Frame::Batch(
            elements
                .into_iter()
                .map(|raw| {
                    let text = raw.get().as_bytes();
                    if first_byte(text) == Some(b'{') {
                        parse_object(&frame, text)
                    } else {
                        Err(EnvelopeError::NotAnObject)
                    }
                })
                .collect(),
        ))
    }

    /// The method name of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }
}

fn not_an_object(frame: &[u8]) -> EnvelopeError {
    match serde_json::from_slice::<serde::de::IgnoredAny>(frame) {
        Ok(_) => EnvelopeError::NotAnObject,
        Err(e) => EnvelopeError::Json(e),
    }
}

/// Parses the object in `text`, a sub-slice of `frame`; payloads become
/// zero-copy slices of `frame`.
///
/// The members are found by the one-pass [`scan`] when the text is plainly
/// well-formed, and by serde otherwise (which then also words the error).
/// Either way the same members go through the same checks below.
fn parse_object(frame: &Bytes, text: &[u8]) -> Result<Message, EnvelopeError> {
    let fast = std::str::from_utf8(text).ok().and_then(scan::scan);
    let members = match fast {
        Some(m) => m,
        None => {
            let raw: RawEnvelope<'_> = serde_json::from_slice(text).map_err(EnvelopeError::Json)?;
            return classify(frame, raw.members());
        }
    };
    classify(frame, members)
}

impl<'a> RawEnvelope<'a> {
    fn members(&self) -> Members<'a> {
        Members {
            jsonrpc: self.jsonrpc.map(RawValue::get),
            id: self.id.map(RawValue::get),
            method: self.method.map(RawValue::get),
            params: self.params.map(RawValue::get),
            result: self.result.map(RawValue::get),
            error: self.error.map(RawValue::get),
        }
    }
}

/// Turns the members of an envelope (raw JSON texts, slices of `frame`)
/// into a message.
fn classify(frame: &Bytes, raw: Members<'_>) -> Result<Message, EnvelopeError> {
    let slice = |v: &str| -> Payload {
        let start = v.as_ptr() as usize - frame.as_ptr() as usize;
        Payload::from_checked(frame.slice(start..start + v.len()))
    };

    match raw.jsonrpc {
        Some("\"2.0\"") => {}
        // The fast path above misses escaped spellings such as "2\u002e0".
        Some(v) if serde_json::from_str::<String>(v).is_ok_and(|s| s == "2.0") => {}
        _ => return Err(EnvelopeError::WrongVersion),
    }

    if let Some(method) = raw.method {
        if raw.result.is_some() || raw.error.is_some() {
            return Err(EnvelopeError::MethodAndResult);
        }
        let method: String = match scan::plain_str(method) {
            Some(m) => m.to_owned(),
            None => serde_json::from_str(method).map_err(|_| EnvelopeError::BadMethod)?,
        };
        let params = match raw.params {
            None => None,
            Some(p) if matches!(first_byte(p.as_bytes()), Some(b'{' | b'[')) => Some(slice(p)),
            Some(_) => return Err(EnvelopeError::BadParams),
        };
        return Ok(match raw.id {
            None => Message::Notification(Notification { method, params }),
            Some(id) => Message::Request(Request {
                id: parse_id(id)?.ok_or(EnvelopeError::BadId)?,
                method,
                params,
            }),
        });
    }

    match (raw.result, raw.error) {
        (Some(_), Some(_)) => Err(EnvelopeError::ResultAndError),
        (Some(result), None) => {
            let id =
                parse_id(raw.id.ok_or(EnvelopeError::MissingId)?)?.ok_or(EnvelopeError::BadId)?;
            Ok(Message::Response(Response {
                id: Some(id),
                outcome: Ok(slice(result)),
            }))
        }
        (None, Some(error)) => {
            let id = match raw.id {
                Some(id) => parse_id(id)?,
                None => None,
            };
            let e: RawError<'_> =
                serde_json::from_str(error).map_err(|_| EnvelopeError::BadError)?;
            let code = i32::try_from(e.code).map_err(|_| EnvelopeError::BadError)?;
            Ok(Message::Response(Response {
                id,
                outcome: Err(ErrorObject {
                    code: ErrorCode(code),
                    message: e.message,
                    data: e.data.map(|d| slice(d.get())),
                }),
            }))
        }
        (None, None) => Err(EnvelopeError::NotAMessage),
    }
}

/// `Ok(None)` for `null`.
fn parse_id(text: &str) -> Result<Option<Id>, EnvelopeError> {
    if text == "null" {
        return Ok(None);
    }
    if let Some(n) = scan::plain_i64(text) {
        return Ok(Some(Id::Number(n)));
    }
    if text.starts_with('"') {
        return serde_json::from_str::<String>(text)
            .map(|s| Some(Id::from(s)))
            .map_err(|_| EnvelopeError::BadId);
    }
    serde_json::from_str::<i64>(text)
        .map(|n| Some(Id::Number(n)))
        .map_err(|_| EnvelopeError::BadId)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Message, EnvelopeError> {
        Message::parse(Bytes::copy_from_slice(s.as_bytes()))
    }

    #[test]
    fn request_with_zero_id_and_payload_slice() {
        let m = parse(r#"{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{"cursor":"x"}}"#)
            .unwrap();
        let Message::Request(r) = m else {
            panic!("{m:?}")
        };
        assert_eq!(r.id, Id::Number(0));
        assert_eq!(r.method, "tools/list");
        assert_eq!(r.params.unwrap().as_str(), r#"{"cursor":"x"}"#);
    }

    #[test]
    fn string_ids_keep_escapes_decoded() {
        let m = parse(r#"{"jsonrpc":"2.0","id":"a\"b","result":{}}"#).unwrap();
        let Message::Response(r) = m else { panic!() };
        assert_eq!(r.id, Some(Id::from("a\"b")));
    }

    #[test]
    fn escaped_version_string_is_accepted() {
        assert!(matches!(
            parse(r#"{"jsonrpc":"2\u002e0","method":"m"}"#),
            Ok(Message::Notification(_))
        ));
    }

    #[test]
    fn notification_and_error_response() {
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Message::Notification(Notification { params: None, .. }))
        ));
        let m = parse(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","data":[1]}}"#,
        )
        .unwrap();
        let Message::Response(Response {
            id: None,
            outcome: Err(e),
        }) = m
        else {
            panic!()
        };
        assert_eq!(e.code, ErrorCode::PARSE_ERROR);
        assert_eq!(e.data.unwrap().as_str(), "[1]");
    }

    #[test]
    fn malformed_envelopes_are_typed_errors() {
        type Check = fn(&EnvelopeError) -> bool;
        let cases: &[(&str, Check)] = &[
            ("{", |e| matches!(e, EnvelopeError::Json(_))),
            ("\"hi\"", |e| matches!(e, EnvelopeError::NotAnObject)),
            ("[]", |e| matches!(e, EnvelopeError::UnexpectedBatch)),
            (r#"{"id":1,"method":"x"}"#, |e| {
                matches!(e, EnvelopeError::WrongVersion)
            }),
            (r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#, |e| {
                matches!(e, EnvelopeError::WrongVersion)
            }),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, |e| {
                matches!(e, EnvelopeError::BadId)
            }),
            (r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, |e| {
                matches!(e, EnvelopeError::BadId)
            }),
            (r#"{"jsonrpc":"2.0","id":[1],"result":1}"#, |e| {
                matches!(e, EnvelopeError::BadId)
            }),
            (r#"{"jsonrpc":"2.0","result":1}"#, |e| {
                matches!(e, EnvelopeError::MissingId)
            }),
            (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, |e| {
                matches!(e, EnvelopeError::BadMethod)
            }),
            (r#"{"jsonrpc":"2.0","method":"x","params":3}"#, |e| {
                matches!(e, EnvelopeError::BadParams)
            }),
            (r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#, |e| {
                matches!(e, EnvelopeError::ResultAndError)
            }),
            (r#"{"jsonrpc":"2.0","id":1,"method":"x","result":1}"#, |e| {
                matches!(e, EnvelopeError::MethodAndResult)
            }),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
                |e| matches!(e, EnvelopeError::BadError),
            ),
            (r#"{"jsonrpc":"2.0","id":1}"#, |e| {
                matches!(e, EnvelopeError::NotAMessage)
            }),
            (r#"{"jsonrpc":"2.0","id":1,"id":2,"result":1}"#, |e| {
                matches!(e, EnvelopeError::Json(_))
            }),
        ];
        for (input, check) in cases {
            let err = parse(input).expect_err(input);
            assert!(check(&err), "{input}: {err:?}");
        }
    }

    /// The members serde finds, or `None` where serde refuses the text.
    fn serde_members(text: &str) -> Option<Members<'_>> {
        serde_json::from_str::<RawEnvelope<'_>>(text)
            .ok()
            .map(|raw| raw.members())
    }

    /// Pieces from which envelopes, well-formed and not, are assembled.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\n",
        "\"",
        "\\",
        "\\u00e9",
        "\\x",
        "\t",
        r#""jsonrpc""#,
        r#""2.0""#,
        r#""id""#,
        r#""method""#,
        r#""params""#,
        r#""result""#,
        r#""error""#,
        r#""other""#,
        r#""\u0069d""#,
        "0",
        "-1",
        "12",
        "1.5",
        "1e3",
        "01",
        "-",
        "true",
        "false",
        "null",
        "nul",
        r#""tools/call""#,
        r#""a\"b""#,
        "\u{e9}",
        "\u{1}",
        r#"{"code":-1,"message":"m"}"#,
        r#"{"content":[{"type":"text","text":"x"}]}"#,
    ];

    proptest::proptest! {
        /// Wherever the scanner answers, serde accepts the text and finds
        /// the very same members; wherever serde refuses, the scanner
        /// leaves the text to it.
        #[test]
        fn the_scanner_agrees_with_serde(picks in proptest::collection::vec(0..PIECES.len(), 0..24)) {
            let text: String = picks.iter().map(|&i| PIECES[i]).collect();
            let fast = scan::scan(&text);
            if fast.is_some() {
                proptest::prop_assert_eq!(fast, serde_members(&text), "{}", text);
            }
        }

        /// The same for envelopes that are well-formed before one piece is
        /// replaced, so most of them reach deep into the grammar.
        #[test]
        fn the_scanner_agrees_with_serde_near_valid_input(
            at in 0usize..12,
            with in 0..PIECES.len(),
        ) {
            let mut parts = vec![
                "{", r#""jsonrpc""#, ":", r#""2.0""#, ",", r#""id""#, ":", "12", ",",
                r#""result""#, ":", r#"{"content":[{"type":"text","text":"x"}]}"#, "}",
            ];
            parts[at] = PIECES[with];
            let text: String = parts.concat();
            let fast = scan::scan(&text);
            let slow = serde_members(&text);
            if fast.is_some() {
                proptest::prop_assert_eq!(&fast, &slow, "{}", text);
            }
            if slow.is_some() && !text.contains('\\') {
                proptest::prop_assert!(fast.is_some(), "plain text left to serde: {}", text);
            }
        }
    }

    #[test]
    fn fast_and_serde_paths_build_the_same_messages() {
        for text in [
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
            r#"{"jsonrpc":"2.0","id":"s","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}"#,
            r#"{"jsonrpc":"2.0","id":-9,"error":{"code":-32601,"message":"no","data":{"x":[1]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a\u002fb","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":12345678901234567890,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1e2,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
        ] {
            let frame = Bytes::copy_from_slice(text.as_bytes());
            let text = std::str::from_utf8(&frame).unwrap();
            let fast = scan::scan(text).expect("plain");
            let slow = serde_members(text).expect("valid");
            assert_eq!(
                format!("{:?}", classify(&frame, fast)),
                format!("{:?}", classify(&frame, slow)),
                "{text}"
            );
        }
    }

    #[test]
    fn batches_parse_each_element() {
        let frame = Bytes::from_static(
            br#"[{"jsonrpc":"2.0","id":1,"result":true},3,{"jsonrpc":"2.0","method":"m"}]"#,
        );
        let Frame::Batch(items) = Message::parse_frame(frame).unwrap() else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        assert!(
            matches!(&items[0], Ok(Message::Response(r)) if r.outcome.as_ref().unwrap().as_str() == "true")
        );
        assert!(matches!(items[1], Err(EnvelopeError::NotAnObject)));
        assert!(matches!(items[2], Ok(Message::Notification(_))));
        assert!(matches!(
            Message::parse_frame(Bytes::from_static(b" [ ] ")),
            Err(EnvelopeError::EmptyBatch)
        ));
    }
}
