/// An error from one of the framing decoders.
///
/// After any of these errors the decoder is left in a documented state from
/// which it can go on (or, for Content-Length framing after a broken header,
/// in which it says it cannot); see each decoder's docs for its recovery.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// A frame (or Server-Sent Event) is longer than the configured maximum.
    /// `len` is how much of it had been seen, or how much its header declared,
    /// when the decoder gave up (it may be longer still).
    #[error("frame of at least {len} bytes exceeds the maximum of {max} bytes")]
    FrameTooLong {
        /// The configured maximum frame length.
        max: usize,
        /// The length seen (or declared) so far.
        len: usize,
    },
    /// A Content-Length header block grew past its maximum size without the
    /// blank line that ends it.
    #[error("header block exceeds the maximum of {max} bytes")]
    HeaderTooLong {
        /// The maximum header block size.
        max: usize,
    },
    /// A Content-Length header line is not of the form `name: value` (no colon,
    /// an empty name, or a name with characters a header name cannot have).
    #[error("malformed header line")]
    InvalidHeader,
    /// A Content-Length header block ended without a `Content-Length` header.
    #[error("header block has no Content-Length")]
    MissingContentLength,
    /// The `Content-Length` value is not a decimal byte count that fits in a
    /// `usize`, or two `Content-Length` headers disagree.
    #[error("invalid Content-Length value")]
    InvalidContentLength,
    /// The Content-Length decoder lost track of frame boundaries after an
    /// earlier header error, and dropped `len` bytes it could not frame.
    #[error("framing lost after an earlier header error; {len} bytes dropped")]
    Desynchronized {
        /// How many bytes were dropped by this call.
        len: usize,
    },
    /// The input ended inside a Content-Length header block.
    #[error("input ended inside a header block ({len} bytes buffered)")]
    TruncatedHeader {
        /// How many bytes of the header block had arrived.
        len: usize,
    },
    /// The input ended before the body its header declared was complete.
    #[error("input ended after {received} of {expected} body bytes")]
    TruncatedBody {
        /// The declared body length.
        expected: usize,
        /// How many body bytes had arrived.
        received: usize,
    },
    /// The input ended inside a Server-Sent Event: after some of its fields
    /// but before the blank line that dispatches it, or inside a field line.
    /// The event is not returned (the event-stream rules discard it).
    #[error("input ended inside an event ({len} bytes pending)")]
    TruncatedEvent {
        /// How many bytes of the event had arrived.
        len: usize,
    },
}
