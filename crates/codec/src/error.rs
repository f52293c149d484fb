/// An error from one of the framing decoders.
///
/// After any of these errors the decoder is left in a documented state from
/// which it can go on; see each decoder's docs for its recovery.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// A frame is longer than the configured maximum. `len` is how much of it
    /// had been seen when the decoder gave up (it may be longer still).
    #[error("frame of at least {len} bytes exceeds the maximum of {max} bytes")]
    FrameTooLong {
        /// The configured maximum frame length.
        max: usize,
        /// The length seen (or declared) so far.
        len: usize,
    },
}
