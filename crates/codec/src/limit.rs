//! The default limit on the length of one frame.

/// The default maximum frame length of every decoder: 16 MiB.
///
/// A frame is one JSON-RPC message (or batch). The limit bounds how much memory
/// one peer can make us buffer; raise it only for peers you trust.
pub const DEFAULT_MAX_FRAME_LEN: usize = 16 << 20;
