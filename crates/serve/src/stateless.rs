//! The stateless revision (2026-07-28) over Streamable HTTP: a request
//! whose `_meta` declares the revision is served on its own, with no
//! session. Its header fields are checked against its body first
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`); then it runs on a
//! session of its own that lives as long as its answer stream, so closing
//! the stream cancels the request, as the revision says.

use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject, Request};
use mcpwire_transport::FrameSender;
use serde::Deserialize;
use tokio::sync::Semaphore;

use crate::body::{Answer, Events, Owner, rpc_error, sse, whole_answer};
use crate::methods::{self, HEADER_MISMATCH};
use crate::session::{Server, Session};

/// How many frames wait for a stateless request's stream: its progress,
/// then its answer.
const QUEUE: usize = 32;

/// Serves `request` (its whole `body`), which declared stateless revision
/// `version`, under the endpoint's bound `slots`.
pub(crate) async fn serve(
    server: &Server,
    slots: &Arc<Semaphore>,
    headers: &HeaderMap,
    wants_sse: bool,
    request: &Request,
    body: Bytes,
    version: &str,
) -> Response<Answer> {
    if let Err(error) = check_headers(headers, request, version) {
        return rpc_error(StatusCode::BAD_REQUEST, Some(&request.id), error);
    }
    if !methods::is_known(&request.method, true) {
        // A JSON-RPC body tells this 404 from an endpoint that is not MCP.
        let error = ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {}", request.method),
        );
        return rpc_error(StatusCode::NOT_FOUND, Some(&request.id), error);
    }
    let Ok(slot) = slots.clone().try_acquire_owned() else {
        let error = ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            "too many stateless requests in flight",
        );
        return rpc_error(StatusCode::SERVICE_UNAVAILABLE, Some(&request.id), error);
    };
    let (sender, outgoing) = FrameSender::channel(QUEUE);
    let session = Session::stateless(server, sender);
    session.on_frame(body).await;
    let owner = Owner::new(session, slot);
    if wants_sse {
        sse(Events::new(outgoing, Some(owner)))
    } else {
        whole_answer(outgoing, Some(owner)).await
    }
}

/// The params that name what a request acts on, mirrored in `Mcp-Name`.
#[derive(Deserialize)]
struct Named {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
}

/// Checks the header fields the revision mirrors from the body: each must
/// be there and say what the body says (an intermediary may have acted on
/// the header alone). A mismatch is `HeaderMismatch`.
fn check_headers(headers: &HeaderMap, request: &Request, version: &str) -> Result<(), ErrorObject> {
    expect(headers, "mcp-protocol-version", version)?;
    expect(headers, "mcp-method", &request.method)?;
    let field = match request.method.as_str() {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return Ok(()),
    };
    let named: Option<Named> = request.params.as_ref().and_then(|p| p.deserialize().ok());
    let value = named.and_then(|n| if field == "name" { n.name } else { n.uri });
    match value {
        Some(value) => expect(headers, "mcp-name", &value),
        // Without the param the method refuses the request itself.
        None => Ok(()),
    }
}

/// Checks that header `name` is present and, decoded, equals `body`.
fn expect(headers: &HeaderMap, name: &str, body: &str) -> Result<(), ErrorObject> {
    let mismatch =
        |why: String| ErrorObject::new(HEADER_MISMATCH, format!("header mismatch: {why}"));
    let Some(raw) = headers.get(name) else {
        return Err(mismatch(format!("the {name} header is missing")));
    };
    // Whitespace around a field value is not part of it (RFC 9110, 5.5):
    // hyper's parser has taken it off already.
    let Some(given) = raw.to_str().ok().and_then(decode) else {
        return Err(mismatch(format!("the {name} header is not a valid value")));
    };
    if given != body {
        return Err(mismatch(format!(
            "the {name} header says {given:?}, the body {body:?}"
        )));
    }
    Ok(())
}

/// A header value as sent: plain, or `=?base64?…?=` of its UTF-8.
fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_value_is_plain_or_the_base64_sentinel() {
        assert_eq!(decode("us-west1").as_deref(), Some("us-west1"));
        assert_eq!(
            decode("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(decode("=?base64?not base64?="), None);
        assert_eq!(decode("=?base64?/w==?="), None, "not UTF-8");
    }
}
