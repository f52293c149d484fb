//! The Streamable HTTP session as answers show it: the session id of an
//! `initialize` answer, the protocol version of its result, and the answers
//! that say the server forgot the session.

use bytes::Bytes;
use http::{HeaderValue, Response};
use mcpwire_codec::jsonrpc::Message;

use crate::context::Link;
use crate::demand::ResponseBody;
use crate::error::Error;
use crate::mode::HttpMode;
use crate::request::MCP_SESSION_ID;
use crate::session::valid_session_id;

/// Takes the session id from a successful `initialize` answer; the first
/// such answer also settles the mode.
pub(crate) fn capture_session(link: &Link, resp: &Response<ResponseBody>) {
    let id = resp.headers().get(MCP_SESSION_ID).cloned();
    match id {
        Some(id) if valid_session_id(&id) => {
            link.session.update(|s| s.session_id = Some(id));
        }
        Some(_) => tracing::warn!("ignoring a session id that is not visible ASCII"),
        None => link.session.update(|s| s.session_id = None),
    }
    settle_mode(link);
}

/// The server answered a POST as a Streamable HTTP server does (a success,
/// or a JSON-RPC error for the request): the first such answer settles the
/// mode. A server of the stateless revision never answers `initialize`, so
/// any answer counts, not only that one's.
pub(crate) fn settle_mode(link: &Link) {
    if link.session.mode().is_none() {
        link.session.set_mode(HttpMode::StreamableHttp);
        link.client
            .remember_mode(&link.session.url, HttpMode::StreamableHttp);
    }
}

/// Takes `protocolVersion` from an `initialize` result, for the
/// `MCP-Protocol-Version` header.
pub(crate) fn capture_protocol_version(link: &Link, frame: &Bytes) {
    #[derive(serde::Deserialize)]
    struct InitializeResult {
        #[serde(rename = "protocolVersion")]
        protocol_version: Option<String>,
    }
    let Ok(Message::Response(resp)) = Message::parse(frame.clone()) else {
        return;
    };
    let Ok(result) = resp.outcome else { return };
    let Ok(InitializeResult {
        protocol_version: Some(version),
    }) = result.deserialize::<InitializeResult>()
    else {
        return;
    };
    if let Ok(value) = HeaderValue::from_str(&version) {
        link.session.update(|s| s.protocol_version = Some(value));
    }
}

/// 404 on a request that carried a session id, or a 400 whose body says the
/// session is unknown (some servers answer so after a restart).
pub(crate) fn session_unknown(error: &Error) -> bool {
    let Some(status) = error.status() else {
        return false;
    };
    match status.status {
        404 => true,
        400 => {
            let body = status.body.to_ascii_lowercase();
            body.contains("session")
                && ["not found", "unknown", "invalid", "expired", "no valid"]
                    .iter()
                    .any(|w| body.contains(w))
        }
        _ => false,
    }
}

/// Forgets the session the server forgot: the next `initialize` starts a
/// new one.
pub(crate) fn expire(link: &Link) {
    tracing::debug!("session expired; dropping the session id");
    link.session.update(|s| {
        s.session_id = None;
        s.protocol_version = None;
    });
}
