//! [`WsConfig`]: the settings of a WebSocket connection.

use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

/// The settings of a [`WsConnector`](crate::WsConnector) and of every
/// [`WsTransport`](crate::WsTransport) it connects.
///
/// All fields are private; each setter is named after its field and states
/// its default. Limits say what they protect against.
#[derive(Debug, Clone)]
#[must_use]
pub struct WsConfig {
    pub(crate) headers: HeaderMap,
    pub(crate) user_agent: HeaderValue,
    pub(crate) connect_timeout: Duration,
    pub(crate) close_timeout: Duration,
    pub(crate) ping_interval: Option<Duration>,
    pub(crate) pong_timeout: Duration,
    pub(crate) max_frame_len: usize,
    pub(crate) read_ahead: usize,
    pub(crate) queue_capacity: usize,
    pub(crate) webpki_roots: bool,
    pub(crate) native_roots: bool,
    pub(crate) extra_roots: Vec<Vec<u8>>,
}

impl Default for WsConfig {
    fn default() -> Self {
        Self {
            headers: HeaderMap::new(),
            user_agent: HeaderValue::from_static(concat!("mcpwire/", env!("CARGO_PKG_VERSION"))),
            connect_timeout: Duration::from_secs(10),
            close_timeout: Duration::from_secs(3),
            ping_interval: Some(Duration::from_secs(30)),
            pong_timeout: Duration::from_secs(10),
            max_frame_len: mcpwire_codec::DEFAULT_MAX_FRAME_LEN,
            read_ahead: 4,
            queue_capacity: 64,
            webpki_roots: true,
            native_roots: false,
            extra_roots: Vec::new(),
        }
    }
}

impl WsConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a header to the upgrade request (an `Authorization` token, say).
    /// Default: none. A header of the same name is replaced. The headers
    /// the WebSocket handshake owns (`Host`, `Connection`, `Upgrade`,
    /// `Sec-WebSocket-*`) cannot be set this way and are ignored.
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// The `User-Agent` header of the upgrade request. Default:
    /// `mcpwire/<version>`.
    pub fn user_agent(mut self, value: HeaderValue) -> Self {
        self.user_agent = value;
        self
    }

    /// How long the TCP connect, the TLS handshake and the WebSocket upgrade
    /// may take together. Default: 10 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long closing may take: flushing queued frames, sending our close
    /// frame and waiting for the server's. A server that never answers the
    /// close is dropped when it runs out. Default: 3 s.
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// How long the server may stay silent before we ping it; `None` turns
    /// the keepalive off. Default: 30 s.
    ///
    /// With the keepalive on, a dead server (or a dead path to it) is found
    /// within `ping_interval + pong_timeout` of the last thing it sent while
    /// the socket is being read. While a message waits for a grant the
    /// socket is not read (see [`WsTransport`](crate::WsTransport)), so no
    /// pong could be seen: the keepalive then waits, and starts again once
    /// the consumer takes the message.
    pub fn ping_interval(mut self, interval: impl Into<Option<Duration>>) -> Self {
        self.ping_interval = interval.into().filter(|d| !d.is_zero());
        self
    }

    /// How long after our ping the server must have sent something (the
    /// pong, or anything else) before the connection is closed with
    /// [`Error::KeepaliveTimeout`](crate::Error::KeepaliveTimeout).
    /// Default: 10 s.
    pub fn pong_timeout(mut self, timeout: Duration) -> Self {
        self.pong_timeout = timeout;
        self
    }

    /// The longest message sent or received, in bytes. Default: 16 MiB, as
    /// for the other transports.
    ///
    /// Inbound, a longer message is refused as soon as a frame header
    /// announces it (or the fragments so far pass it), before it is buffered
    /// whole; the connection then closes with
    /// [`CloseReason::FrameTooLong`](mcpwire_transport::CloseReason::FrameTooLong).
    /// Outbound, [`FrameSender`](mcpwire_transport::FrameSender) refuses
    /// longer frames. Raising it lets a server make us hold that much memory
    /// per message.
    pub fn max_frame_len(mut self, bytes: usize) -> Self {
        self.max_frame_len = bytes.max(1);
        self
    }

    /// How many messages may wait for the consumer at most. Default: 4.
    ///
    /// A message is read only while the consumer holds a grant for it (or,
    /// holding none, while nothing waits), so this bounds what a consumer
    /// that granted many and then stopped polling can make us hold: this
    /// many messages plus one read buffer.
    pub fn read_ahead(mut self, messages: usize) -> Self {
        self.read_ahead = messages.max(1);
        self
    }

    /// How many frames the outbound queue holds before
    /// [`FrameSender::try_send`](mcpwire_transport::FrameSender::try_send)
    /// answers `Busy`. Default: 64.
    pub fn queue_capacity(mut self, frames: usize) -> Self {
        self.queue_capacity = frames.max(1);
        self
    }

    /// Whether the Mozilla root store (webpki-roots) is trusted for `wss`.
    /// Default: true.
    pub fn webpki_roots(mut self, enabled: bool) -> Self {
        self.webpki_roots = enabled;
        self
    }

    /// Whether the platform's root store is trusted too (on Linux the system
    /// bundle, honouring `SSL_CERT_FILE` and `SSL_CERT_DIR`), read when the
    /// [`WsConnector`](crate::WsConnector) is built. Default: false. Certificates that fail to parse are skipped;
    /// finding none at all is an error.
    pub fn native_roots(mut self, enabled: bool) -> Self {
        self.native_roots = enabled;
        self
    }

    /// Trusts one more root certificate, DER-encoded (a private CA, a test
    /// CA).
    pub fn add_root_certificate(mut self, der: Vec<u8>) -> Self {
        self.extra_roots.push(der);
        self
    }
}
