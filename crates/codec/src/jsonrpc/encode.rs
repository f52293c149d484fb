use std::io::Write;

use bytes::{BufMut, BytesMut};
use serde::Serialize;

use super::{ErrorObject, Id};
use crate::grow::{FrameBuf, grow};

#[derive(Serialize)]
struct Envelope<'a, P: ?Sized, R: ?Sized> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Id>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorObject>,
}

/// Marker for "no such member": never serialized.
type Absent = ();

fn write<P: Serialize + ?Sized, R: Serialize + ?Sized>(
    buf: &mut BytesMut,
    env: &Envelope<'_, P, R>,
) -> Result<(), serde_json::Error> {
    serde_json::to_writer(FrameWriter(buf), env)
}

/// Appends to a frame buffer (`BytesMut` or `Vec`), growing it the way
/// the growth rule of `crate::grow` says.
struct FrameWriter<'a, B: FrameBuf>(&'a mut B);

impl<B: FrameBuf> std::io::Write for FrameWriter<'_, B> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    #[inline]
    fn write_all(&mut self, data: &[u8]) -> std::io::Result<()> {
        if self.0.capacity() - self.0.len() < data.len() {
            grow(self.0, data.len(), crate::DEFAULT_MAX_FRAME_LEN);
        }
        self.0.put(data);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Appends a request to `buf` as compact JSON (no line end).
pub fn encode_request<P: Serialize + ?Sized>(
    buf: &mut BytesMut,
    id: &Id,
    method: &str,
    params: Option<&P>,
) -> Result<(), serde_json::Error> {
    write_request(buf, id, method, params)
}

/// Appends a request to `buf` as compact JSON (no line end), byte for byte
/// what [`encode_request`] writes.
///
/// A `Vec` is the cheapest target serde_json writes to (its many small
/// writes inline to a capacity check and a copy); the result converts into
/// [`Bytes`](bytes::Bytes) without a copy.
pub fn encode_request_vec<P: Serialize + ?Sized>(
    buf: &mut Vec<u8>,
    id: &Id,
    method: &str,
    params: Option<&P>,
) -> Result<(), serde_json::Error> {
    write_request(buf, id, method, params)
}

/// The request envelope written member by member in the order the
/// `Envelope` struct has them; only `id`, `method` and `params` go through
/// serde, the params through [`compact`](super::compact), which escapes
/// long strings faster than serde_json.
fn write_request<B: FrameBuf, P: Serialize + ?Sized>(
    buf: &mut B,
    id: &Id,
    method: &str,
    params: Option<&P>,
) -> Result<(), serde_json::Error> {
    let w = &mut FrameWriter(buf);
    w.write_all(br#"{"jsonrpc":"2.0","id":"#)
        .map_err(serde_json::Error::io)?;
    serde_json::to_writer(&mut *w, id)?;
    w.write_all(br#","method":"#)
        .map_err(serde_json::Error::io)?;
    serde_json::to_writer(&mut *w, method)?;
    if let Some(params) = params {
        w.write_all(br#","params":"#)
            .map_err(serde_json::Error::io)?;
        super::compact::write(&mut *w.0, params)?;
    }
    w.write_all(b"}").map_err(serde_json::Error::io)
}

/// Appends a notification to `buf` as compact JSON (no line end).
pub fn encode_notification<P: Serialize + ?Sized>(
    buf: &mut BytesMut,
    method: &str,
    params: Option<&P>,
) -> Result<(), serde_json::Error> {
    write::<P, Absent>(
        buf,
        &Envelope {
            jsonrpc: "2.0",
            id: None,
            method: Some(method),
            params,
            result: None,
            error: None,
        },
    )
}

/// Appends a success response to `buf` as compact JSON (no line end).
pub fn encode_result<R: Serialize + ?Sized>(
    buf: &mut BytesMut,
    id: &Id,
    result: &R,
) -> Result<(), serde_json::Error> {
    write::<Absent, R>(
        buf,
        &Envelope {
            jsonrpc: "2.0",
            id: Some(id),
            method: None,
            params: None,
            result: Some(result),
            error: None,
        },
    )
}

/// Appends an error response to `buf` as compact JSON (no line end). `id` is
/// `None` when the request's id could not be read; it is then sent as `null`.
pub fn encode_error_response(
    buf: &mut BytesMut,
    id: Option<&Id>,
    error: &ErrorObject,
) -> Result<(), serde_json::Error> {
    #[derive(Serialize)]
    struct ErrorEnvelope<'a> {
        jsonrpc: &'static str,
        id: Option<&'a Id>,
        error: &'a ErrorObject,
    }
    serde_json::to_writer(
        buf.writer(),
        &ErrorEnvelope {
            jsonrpc: "2.0",
            id,
            error,
        },
    )
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::jsonrpc::{ErrorCode, Message, Payload};

    #[test]
    fn requests_match_the_envelope_serialization() {
        let params = serde_json::json!({"name": "echo", "arguments": {"m": "a\"b\u{1}"}});
        for (id, params) in [
            (Id::Number(-3), Some(&params)),
            (Id::from("x\"y"), None),
            (Id::Number(i64::MAX), Some(&params)),
        ] {
            let mut expected = BytesMut::new();
            write::<serde_json::Value, Absent>(
                &mut expected,
                &Envelope {
                    jsonrpc: "2.0",
                    id: Some(&id),
                    method: Some("tools/\"call"),
                    params,
                    result: None,
                    error: None,
                },
            )
            .unwrap();
            let mut buf = BytesMut::new();
            encode_request(&mut buf, &id, "tools/\"call", params).unwrap();
            assert_eq!(buf, expected);
            let mut vec = Vec::new();
            encode_request_vec(&mut vec, &id, "tools/\"call", params).unwrap();
            assert_eq!(vec, expected.to_vec());
        }
    }

    #[test]
    fn encoded_messages_parse_back() {
        let mut buf = BytesMut::new();
        encode_request(&mut buf, &Id::Number(0), "ping", None::<&()>).unwrap();
        assert_eq!(&buf[..], br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#);
        let Message::Request(r) = Message::parse(buf.split().freeze()).unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.id, r.method.as_str(), r.params),
            (Id::Number(0), "ping", None)
        );

        let params = serde_json::json!({"name": "echo", "arguments": {"x": "a\nb"}});
        encode_notification(&mut buf, "n", Some(&params)).unwrap();
        assert!(!buf.contains(&b'\n'), "compact JSON escapes newlines");
        let Message::Notification(n) = Message::parse(buf.split().freeze()).unwrap() else {
            panic!()
        };
        assert_eq!(
            n.params
                .unwrap()
                .deserialize::<serde_json::Value>()
                .unwrap(),
            params
        );

        let data = Payload::from_json(Bytes::from_static(b"{\"k\":1}")).unwrap();
        let mut err = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "nope");
        err.data = Some(data);
        encode_error_response(&mut buf, None, &err).unwrap();
        let Message::Response(r) = Message::parse(buf.split().freeze()).unwrap() else {
            panic!()
        };
        assert_eq!((r.id, r.outcome), (None, Err(err)));

        encode_result(&mut buf, &Id::from("s"), &serde_json::json!({})).unwrap();
        assert_eq!(&buf[..], br#"{"jsonrpc":"2.0","id":"s","result":{}}"#);
    }

    #[test]
    fn a_large_request_is_encoded_whole_into_one_large_step() {
        // 1 MiB of text with characters to escape at both ends: the buffer
        // takes the one large step mid-string and the bytes come out whole.
        let text = format!("\"{}\n", "x".repeat(1 << 20));
        let params = serde_json::json!({ "text": text });
        let large = crate::grow::grow_frame_buffer_len(crate::DEFAULT_MAX_FRAME_LEN);
        let mut vec = Vec::new();
        encode_request_vec(&mut vec, &Id::Number(9), "tools/call", Some(&params)).unwrap();
        assert_eq!(vec.capacity(), large);
        let mut buf = BytesMut::new();
        encode_request(&mut buf, &Id::Number(9), "tools/call", Some(&params)).unwrap();
        assert_eq!(buf.capacity(), large);
        assert_eq!(buf, vec);
        let Message::Request(r) = Message::parse(buf.split().freeze()).unwrap() else {
            panic!()
        };
        assert_eq!(
            r.params
                .unwrap()
                .deserialize::<serde_json::Value>()
                .unwrap(),
            params
        );
    }
}
