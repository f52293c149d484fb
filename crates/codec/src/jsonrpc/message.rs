use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

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
fn parse_object(frame: &Bytes, text: &[u8]) -> Result<Message, EnvelopeError> {
    let raw: RawEnvelope<'_> = serde_json::from_slice(text).map_err(EnvelopeError::Json)?;
    let slice = |v: &RawValue| -> Payload {
        let start = v.get().as_ptr() as usize - frame.as_ptr() as usize;
        Payload::from_checked(frame.slice(start..start + v.get().len()))
    };

    match raw.jsonrpc {
        Some(v) if v.get() == "\"2.0\"" => {}
        // The fast path above misses escaped spellings such as "2\u002e0".
        Some(v) if serde_json::from_str::<String>(v.get()).is_ok_and(|s| s == "2.0") => {}
        _ => return Err(EnvelopeError::WrongVersion),
    }

    if let Some(method) = raw.method {
        if raw.result.is_some() || raw.error.is_some() {
            return Err(EnvelopeError::MethodAndResult);
        }
        let method: String =
            serde_json::from_str(method.get()).map_err(|_| EnvelopeError::BadMethod)?;
        let params = match raw.params {
            None => None,
            Some(p) if matches!(first_byte(p.get().as_bytes()), Some(b'{' | b'[')) => {
                Some(slice(p))
            }
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
                serde_json::from_str(error.get()).map_err(|_| EnvelopeError::BadError)?;
            let code = i32::try_from(e.code).map_err(|_| EnvelopeError::BadError)?;
            Ok(Message::Response(Response {
                id,
                outcome: Err(ErrorObject {
                    code: ErrorCode(code),
                    message: e.message,
                    data: e.data.map(slice),
                }),
            }))
        }
        (None, None) => Err(EnvelopeError::NotAMessage),
    }
}

/// `Ok(None)` for `null`.
fn parse_id(raw: &RawValue) -> Result<Option<Id>, EnvelopeError> {
    let text = raw.get();
    if text == "null" {
        return Ok(None);
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
