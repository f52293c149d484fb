/// Which HTTP transport a [`HttpTransport`](crate::HttpTransport) speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HttpMode {
    /// Streamable HTTP (MCP 2025-03-26 and later): one endpoint, POST per
    /// message, JSON or SSE answers, an optional GET stream.
    StreamableHttp,
    /// The legacy HTTP+SSE transport (MCP 2024-11-05): a GET event stream
    /// that announces a POST endpoint.
    LegacySse,
    /// A receive-only SSE stream: frames arrive, nothing can be sent.
    ReceiveOnlySse,
}

impl HttpMode {
    /// The transport kind reported in
    /// [`TransportInfo`](mcpwire_transport::TransportInfo).
    pub fn kind(self) -> &'static str {
        match self {
            HttpMode::StreamableHttp => "streamable-http",
            HttpMode::LegacySse => "sse",
            HttpMode::ReceiveOnlySse => "sse-receive-only",
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            HttpMode::StreamableHttp => 1,
            HttpMode::LegacySse => 2,
            HttpMode::ReceiveOnlySse => 3,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(HttpMode::StreamableHttp),
            2 => Some(HttpMode::LegacySse),
            3 => Some(HttpMode::ReceiveOnlySse),
            _ => None,
        }
    }
}
