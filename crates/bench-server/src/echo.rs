//! The MCP side of the server: the answer to one frame, shared by the stdio
//! and HTTP front ends.

use bytes::{BufMut, Bytes, BytesMut};
use mcpwire_codec::jsonrpc::{
    ErrorCode, ErrorObject, Id, Message, encode_error_response, encode_result,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The protocol versions answered, newest first.
const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// `tools/call` parameters, borrowing the echoed string as raw JSON so a
/// 10 MiB message is validated once and copied once, never unescaped.
#[derive(Deserialize)]
struct CallParams<'a> {
    name: &'a str,
    #[serde(borrow)]
    arguments: Option<EchoArgs<'a>>,
}

#[derive(Deserialize)]
struct EchoArgs<'a> {
    #[serde(borrow)]
    message: &'a RawValue,
}

#[derive(Serialize)]
struct CallResult<'a> {
    content: [TextContent<'a>; 1],
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a RawValue,
}

#[derive(Deserialize)]
struct InitParams<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Option<&'a str>,
}

/// Appends the answer to `frame` to `out` (compact JSON, no line end) and
/// returns true, or returns false when the frame needs no answer (a
/// notification or a response).
pub(crate) fn answer(frame: Bytes, out: &mut BytesMut) -> bool {
    let request = match Message::parse(frame) {
        Ok(Message::Request(request)) => request,
        Ok(_) => return false,
        Err(e) => {
            let err = ErrorObject::new(ErrorCode::PARSE_ERROR, e.to_string());
            return encode_error_response(out, None, &err).is_ok();
        }
    };
    let params = request
        .params
        .as_ref()
        .map(|p| p.as_bytes())
        .unwrap_or(b"{}");
    let encoded = match request.method.as_str() {
        "tools/call" => call(&request.id, params, out),
        "initialize" => initialize(&request.id, params, out),
        "tools/list" => encode_result(out, &request.id, &tools()),
        "ping" => encode_result(out, &request.id, &serde_json::json!({})),
        other => encode_error_response(
            out,
            Some(&request.id),
            &ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            ),
        ),
    };
    if encoded.is_err() {
        out.clear();
        let err = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "cannot encode the answer");
        let _ = encode_error_response(out, Some(&request.id), &err);
    }
    true
}

fn call(id: &Id, params: &[u8], out: &mut BytesMut) -> Result<(), serde_json::Error> {
    match serde_json::from_slice::<CallParams<'_>>(params) {
        Ok(CallParams {
            name: "echo",
            arguments: Some(args),
        }) => {
            // A result of about the size of the message: reserve it at once
            // instead of growing the buffer by doubling.
            out.reserve(args.message.get().len() + 96);
            let result = CallResult {
                content: [TextContent {
                    kind: "text",
                    text: args.message,
                }],
                is_error: false,
            };
            encode_result(out, id, &result)
        }
        Ok(call) => encode_error_response(
            out,
            Some(id),
            &ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("unknown tool or missing message: {}", call.name),
            ),
        ),
        Err(e) => encode_error_response(
            out,
            Some(id),
            &ErrorObject::new(ErrorCode::INVALID_PARAMS, e.to_string()),
        ),
    }
}

fn initialize(id: &Id, params: &[u8], out: &mut BytesMut) -> Result<(), serde_json::Error> {
    let asked = serde_json::from_slice::<InitParams<'_>>(params)
        .ok()
        .and_then(|p| p.protocol_version);
    let version = asked
        .and_then(|v| VERSIONS.iter().find(|known| **known == v))
        .unwrap_or(&VERSIONS[0]);
    let result = serde_json::json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "mcpwire-bench-server", "version": env!("CARGO_PKG_VERSION")},
    });
    encode_result(out, id, &result)
}

fn tools() -> serde_json::Value {
    serde_json::json!({"tools": [{
        "name": "echo",
        "description": "Answers with the message it is given.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"]
        }
    }]})
}

/// Appends a line end: the stdio front end's framing.
pub(crate) fn end_line(out: &mut BytesMut) {
    out.put_u8(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(frame: &str) -> Option<serde_json::Value> {
        let mut out = BytesMut::new();
        answer(Bytes::copy_from_slice(frame.as_bytes()), &mut out)
            .then(|| serde_json::from_slice(&out).expect("valid JSON"))
    }

    #[test]
    fn echo_returns_the_message_verbatim() {
        let v = ask(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a\"b\\n\u00e9"}}}"#)
            .expect("an answer");
        assert_eq!(v["id"], 7);
        assert_eq!(v["result"]["content"][0]["text"], "a\"b\\n\u{e9}");
    }

    #[test]
    fn notifications_get_no_answer_and_unknown_methods_an_error() {
        assert!(ask(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_none());
        let v = ask(r#"{"jsonrpc":"2.0","id":"x","method":"nope"}"#).expect("an answer");
        assert_eq!(v["error"]["code"], -32601);
        let v = ask(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}"#)
            .expect("an answer");
        assert_eq!(v["error"]["code"], -32602);
    }

    #[test]
    fn initialize_negotiates_a_known_version() {
        let v = ask(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#)
            .expect("an answer");
        assert_eq!(v["result"]["protocolVersion"], "2025-03-26");
        let v = ask(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#)
            .expect("an answer");
        assert_eq!(v["result"]["protocolVersion"], VERSIONS[0]);
    }
}
