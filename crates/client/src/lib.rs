//! The MCP client: connection lifecycle, requests with timeouts and
//! cancellation, server-initiated requests and notifications, and a typed API
//! for every server feature, over any [`mcpwire_transport::Transport`].
