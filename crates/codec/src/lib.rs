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
//! With the `tokio-codec` feature, every decoder and encoder also implements
//! tokio-util's `Decoder` or `Encoder` (errors as `CodecError`), for use
//! with `FramedRead` and `FramedWrite`. The `frame-growth` feature exposes
//! the frame-buffer growth rule (`grow_frame_buffer`) and the large-frame
//! buffer kept for reuse (`SpareBuffer`) for transports built on this crate;
//! users of the codec do not need them.
//!
//! What it does **not** do: read or write sockets and pipes, know any MCP
//! method, retry, or time anything out. Those belong to the transport and
//! client crates above it.
//!
//! Every decoder enforces a maximum frame length (16 MiB by default) before
//! its buffer grows past it, and no input makes it panic.
//!
//! ```
//! use bytes::BytesMut;
//! use mcpwire_codec::LineDecoder;
//! use mcpwire_codec::jsonrpc::{Id, Message};
//!
//! let mut decoder = LineDecoder::new();
//! // Bytes arrive in pieces; a frame comes out once its line is complete.
//! let mut buf = BytesMut::from(&b"{\"jsonrpc\":\"2.0\",\"id\":0,"[..]);
//! assert_eq!(decoder.decode(&mut buf)?, None);
//! buf.extend_from_slice(b"\"result\":{\"tools\":[]}}\n");
//! let frame = decoder.decode(&mut buf)?.expect("a complete line");
//! let Message::Response(response) = Message::parse(frame)? else {
//!     panic!("not a response");
//! };
//! assert_eq!(response.id, Some(Id::Number(0)));
//! assert_eq!(response.outcome.unwrap().as_str(), r#"{"tools":[]}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
mod huge_pages;
mod grow;
#[cfg(feature = "frame-growth")]
mod growth;
mod limit;
#[cfg(feature = "frame-growth")]
mod spare;
mod content_length;
mod encode;
pub mod jsonrpc;
mod line;
mod sse;
#[cfg(feature = "tokio-codec")]
mod tokio_codec;

pub use content_length::ContentLengthDecoder;
pub use encode::{
    ContentLengthEncoder, EncodeError, LineEncoder, encode_content_length, encode_line,
};
pub use error::DecodeError;
#[cfg(feature = "frame-growth")]
pub use growth::{LARGE_FRAME_LEN, grow_frame_buffer, grow_frame_buffer_len};
pub use limit::DEFAULT_MAX_FRAME_LEN;
pub use line::LineDecoder;
#[cfg(feature = "frame-growth")]
pub use spare::SpareBuffer;
pub use sse::{DEFAULT_MAX_EVENT_LEN, SseDecoder, SseEvent};
#[cfg(feature = "tokio-codec")]
pub use tokio_codec::CodecError;
