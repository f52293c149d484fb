//! Configuration of [`IoTransport`](crate::IoTransport).

use std::time::Duration;

/// How frames are delimited on a byte stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Framing {
    /// One JSON message per line (LF or CRLF), the MCP stdio framing. The
    /// default.
    #[default]
    Newline,
    /// A `Content-Length: N` header block, a blank line, then exactly N bytes
    /// (the LSP framing, which some older servers speak). Bodies may contain
    /// newlines.
    ContentLength,
}

/// What to do with a line that cannot be JSON (its first non-blank byte is
/// neither `{` nor `[`), typically a server that logs to stdout.
///
/// Only newline framing is checked; the check looks at one byte, so a line
/// that starts like JSON but is not still reaches the envelope parser above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NonJsonPolicy {
    /// Skip the line without using a grant, count it, and report a non-fatal
    /// [`TransportError::NonJson`](crate::TransportError::NonJson) at most
    /// once per second (the first one at once). The default.
    #[default]
    Skip,
    /// Deliver the line as a frame like any other; the layer above decides.
    Deliver,
}

/// Settings of an [`IoTransport`](crate::IoTransport).
///
/// Every limit bounds memory a peer can make us hold; the defaults suit local
/// servers and are safe against a misbehaving one.
#[derive(Debug, Clone)]
#[must_use]
pub struct IoConfig {
    pub(crate) framing: Framing,
    pub(crate) max_frame_len: usize,
    pub(crate) read_buffer_size: usize,
    pub(crate) outbound_capacity: usize,
    pub(crate) flush_timeout: Duration,
    pub(crate) non_json: NonJsonPolicy,
}

impl Default for IoConfig {
    fn default() -> Self {
        Self {
            framing: Framing::Newline,
            max_frame_len: mcpwire_codec::DEFAULT_MAX_FRAME_LEN,
            read_buffer_size: 64 << 10,
            outbound_capacity: 64,
            flush_timeout: Duration::from_secs(2),
            non_json: NonJsonPolicy::Skip,
        }
    }
}

impl IoConfig {
    /// The default settings.
    pub fn new() -> Self {
        Self::default()
    }

    /// The framing of both directions. Default: [`Framing::Newline`].
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// The longest frame accepted in either direction, in bytes. Default:
    /// 16 MiB.
    ///
    /// Inbound, a longer frame is a non-fatal error followed by
    /// [`CloseReason::FrameTooLong`](crate::CloseReason::FrameTooLong); the
    /// transport never buffers more than this (plus one read) for one frame.
    /// Outbound, [`FrameSender`](crate::FrameSender) refuses longer frames.
    /// Raising it lets a peer make us hold that much memory per frame.
    pub fn max_frame_len(mut self, max: usize) -> Self {
        self.max_frame_len = max.max(1);
        self
    }

    /// How many bytes one read asks for, and the most the transport reads
    /// ahead while no grant is outstanding. Default: 64 KiB. Minimum: 1 KiB.
    ///
    /// Larger reads mean fewer system calls for big frames; the read-ahead
    /// is what a paused consumer holds before the peer is pushed back.
    pub fn read_buffer_size(mut self, size: usize) -> Self {
        self.read_buffer_size = size.max(1024);
        self
    }

    /// How many frames the outbound queue holds before
    /// [`FrameSender::try_send`](crate::FrameSender::try_send) answers
    /// `Busy`. Default: 64.
    pub fn outbound_capacity(mut self, capacity: usize) -> Self {
        self.outbound_capacity = capacity.max(1);
        self
    }

    /// How long closing waits for queued frames to be written before it gives
    /// up on them. Default: 2 s.
    pub fn flush_timeout(mut self, timeout: Duration) -> Self {
        self.flush_timeout = timeout;
        self
    }

    /// What to do with lines that cannot be JSON. Default:
    /// [`NonJsonPolicy::Skip`].
    pub fn non_json(mut self, policy: NonJsonPolicy) -> Self {
        self.non_json = policy;
        self
    }
}
