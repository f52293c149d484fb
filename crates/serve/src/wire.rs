//! JSON-RPC on the way out: encoding answers and notifications, and the
//! error object each failure becomes on the wire.

use bytes::{Bytes, BytesMut};
use mcpwire_codec::jsonrpc::{
    ErrorCode, ErrorObject, Id, encode_error_response, encode_notification, encode_result,
};
use mcpwire_manager::Error as FleetError;
use mcpwire_transport::Outgoing;
use serde::Serialize;

/// What a request handler produces: a result, or an error to send.
pub(crate) type Outcome = Result<serde_json::Value, ErrorObject>;

/// The frame answering request `id` (or a malformed request, `None`).
pub(crate) fn answer(id: Option<&Id>, outcome: &Outcome) -> Bytes {
    let mut buf = BytesMut::new();
    let encoded = match (outcome, id) {
        (Ok(value), Some(id)) => encode_result(&mut buf, id, value),
        (Ok(_), None) => encode_error_response(
            &mut buf,
            None,
            &ErrorObject::new(ErrorCode::INTERNAL_ERROR, "a result without a request id"),
        ),
        (Err(error), id) => encode_error_response(&mut buf, id, error),
    };
    if encoded.is_err() {
        // A `Value` always encodes; an error object with a message only
        // too. Should that ever change, the client still gets an answer.
        buf.clear();
        let fallback =
            ErrorObject::new(ErrorCode::INTERNAL_ERROR, "the answer could not be encoded");
        let _ = encode_error_response(&mut buf, id, &fallback);
    }
    buf.freeze()
}

/// The answer to request `id` (or to a malformed request, `None`), saying
/// what it is so a transport that routes by it need not read the frame.
pub(crate) fn response(id: Option<&Id>, outcome: &Outcome) -> Outgoing {
    let frame = answer(id, outcome);
    match id {
        Some(id) => Outgoing::response(frame, id.clone()),
        None => Outgoing::from(frame),
    }
}

/// The notification `method` with `params`, if they encode, saying what it
/// is so a transport that routes by it need not read the frame.
pub(crate) fn notification<P: Serialize + ?Sized>(
    method: &str,
    params: Option<&P>,
) -> Option<Outgoing> {
    let mut buf = BytesMut::new();
    encode_notification(&mut buf, method, params).ok()?;
    Some(Outgoing::notification(buf.freeze(), method.to_owned()))
}

/// An `invalid params` error saying why.
pub(crate) fn invalid_params(why: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {why}"))
}

/// The error a fleet failure becomes on the wire.
///
/// An error the upstream server answered is passed on as it came (its
/// code, message and data), so the client sees what the server said. A
/// name or URI the fleet does not know is the client's mistake (invalid
/// params, resource not found); anything else is ours (internal error),
/// with the whole chain of causes in the message, since the client cannot
/// see our logs.
pub(crate) fn fleet_error(error: &FleetError) -> ErrorObject {
    if let FleetError::Request { source, .. } = error
        && let Some(upstream) = source.server_error()
    {
        return upstream.clone();
    }
    let code = match error {
        FleetError::UnknownTool { .. }
        | FleetError::UnknownPrompt { .. }
        | FleetError::Filtered { .. }
        | FleetError::Unapproved { .. }
        | FleetError::Arguments { .. } => ErrorCode::INVALID_PARAMS,
        FleetError::UnknownResource { .. } => ErrorCode::RESOURCE_NOT_FOUND,
        _ => ErrorCode::INTERNAL_ERROR,
    };
    ErrorObject::new(code, chain(error))
}

/// `error` and each of its causes, joined with `: `.
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let next = e.to_string();
        // Some layers repeat their cause's words; say each once.
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_without_an_id_is_an_error_response_with_a_null_id() {
        let frame = answer(None, &Err(ErrorObject::new(ErrorCode::PARSE_ERROR, "bad")));
        let value: serde_json::Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(value["id"], serde_json::Value::Null);
        assert_eq!(value["error"]["code"], -32700);
    }

    #[test]
    fn an_unknown_tool_is_invalid_params_with_the_closest_names() {
        let error = FleetError::UnknownTool {
            name: "a__ecko".into(),
            suggestions: vec!["a__echo".into()],
        };
        let object = fleet_error(&error);
        assert_eq!(object.code, ErrorCode::INVALID_PARAMS);
        assert!(object.message.contains("a__echo"), "{}", object.message);
    }

    #[test]
    fn an_unknown_resource_is_resource_not_found() {
        let error = FleetError::UnknownResource {
            uri: "file:///x".into(),
        };
        assert_eq!(fleet_error(&error).code, ErrorCode::RESOURCE_NOT_FOUND);
    }

    #[test]
    fn a_chain_names_every_cause_once() {
        let inner = std::io::Error::other("disk on fire");
        let outer = mcpwire_transport::TransportError::from(inner);
        let text = chain(&outer);
        assert!(text.contains("disk on fire"), "{text}");
        assert_eq!(text.matches("disk on fire").count(), 1, "{text}");
    }
}
