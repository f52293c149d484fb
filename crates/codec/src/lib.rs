//! Sans-IO framing and JSON-RPC 2.0 envelopes for the Model Context Protocol.
//!
//! This crate is mcpwire's lowest layer: bytes in, frames and messages out. It
//! does no I/O, keeps no clock and spawns nothing, so every transport (a child
//! process's pipes, a TCP stream, an HTTP body) drives the same decoders and
//! tests can feed them bytes directly.
//!
//! What it holds:
//! - [`LineDecoder`]: newline-delimited JSON, the MCP stdio framing.
//! - [`ContentLengthDecoder`]: `Content-Length` header framing (LSP style).
//! - [`SseDecoder`]: Server-Sent Events, the Streamable HTTP response stream.
//! - [`encode_line`], [`encode_content_length`], [`LineEncoder`] and
//!   [`ContentLengthEncoder`]: the matching encoders.
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope (request, notification, response)
//!   classified without parsing the payload, plus encoders.
//!
//! What it does **not** do: read or write sockets and pipes, know any MCP
//! method, retry, or time anything out. Those belong to the transport and
//! client crates above it.
//!
//! Every decoder enforces a maximum frame length (16 MiB by default) before
//! its buffer grows past it, and no input makes it panic.

mod content_length;
mod encode;
mod error;
pub mod jsonrpc;
mod line;
mod sse;

pub use content_length::ContentLengthDecoder;
pub use encode::{
    ContentLengthEncoder, EncodeError, LineEncoder, encode_content_length, encode_line,
};
pub use error::DecodeError;
pub use line::LineDecoder;
pub use sse::{DEFAULT_MAX_EVENT_LEN, SseDecoder, SseEvent};

/// The default maximum frame length of every decoder: 16 MiB.
///
/// A frame is one JSON-RPC message (or batch). The limit bounds how much memory
/// one peer can make us buffer; raise it only for peers you trust.
pub const DEFAULT_MAX_FRAME_LEN: usize = 16 << 20;
