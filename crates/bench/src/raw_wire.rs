//! The raw baseline's JSON-RPC: requests written by hand, answers read with
//! one borrowed parse. No MCP library, no envelope types.

use std::borrow::Cow;
use std::io::Write;

use serde::Deserialize;

/// The `initialize` request.
pub(crate) const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
/// The `notifications/initialized` notification.
pub(crate) const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Appends a `tools/call` of `echo` with `message` (no line end).
pub(crate) fn echo_request(out: &mut Vec<u8>, id: u64, message: &str) {
    out.reserve(message.len() + 96);
    let _ = write!(
        out,
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"#
    );
    // serde_json escapes; for the workloads' printable ASCII this is a copy.
    let _ = serde_json::to_writer(&mut *out, message);
    out.extend_from_slice(b"}}}");
}

#[derive(Deserialize)]
struct Answer<'a> {
    id: u64,
    #[serde(borrow)]
    result: Option<EchoResult<'a>>,
}

#[derive(Deserialize)]
struct EchoResult<'a> {
    #[serde(borrow, default)]
    content: Vec<Text<'a>>,
}

#[derive(Deserialize)]
struct Text<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

/// Reads an answer: its id and the length of the first text block.
pub(crate) fn parse_answer(json: &[u8]) -> Result<(u64, usize), String> {
    let answer: Answer<'_> = serde_json::from_slice(json).map_err(|e| {
        let head = String::from_utf8_lossy(&json[..json.len().min(200)]).into_owned();
        format!("bad answer ({e}): {head}")
    })?;
    let len = answer
        .result
        .and_then(|r| r.content.into_iter().next())
        .and_then(|t| t.text)
        .map_or(0, |t| t.len());
    Ok((answer.id, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_through_serde() {
        let mut out = Vec::new();
        echo_request(&mut out, 42, "hi \"there\"");
        let v: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
        assert_eq!(v["id"], 42);
        assert_eq!(v["params"]["arguments"]["message"], "hi \"there\"");
        let answer = br#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hi \"there\""}]}}"#;
        assert_eq!(parse_answer(answer), Ok((42, 10)));
        assert!(parse_answer(b"{").is_err());
    }
}
