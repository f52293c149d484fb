//! JSON-RPC 2.0 envelopes.
//!
//! [`Message::parse`] classifies one frame as a request, notification or
//! response by looking only at the envelope members. `params`, `result` and
//! `error.data` stay as [`Payload`]s: zero-copy slices of the frame, checked to
//! be well-formed JSON but not parsed, so the layer that knows their type
//! parses them exactly once.
//!
//! Top-level members other than `jsonrpc`, `id`, `method`, `params`, `result`
//! and `error` are ignored: JSON-RPC 2.0 defines no others.

mod id;
mod in_place;
mod payload;
mod error;
mod compact;
mod encode;
mod scan;
mod message;

pub use encode::{
    encode_error_response, encode_notification, encode_request, encode_request_vec, encode_result,
};
pub use error::{EnvelopeError, ErrorCode, ErrorObject};
pub use id::Id;
pub use message::{Batch, Frame, Message, Notification, Request, Response};
pub use payload::Payload;
