//! MCP over a WebSocket: a compatibility transport for servers and gateways
//! that speak it (the Python SDK 1.x `mcp.server.websocket` server, for
//! one). The MCP specification has no WebSocket transport (SEP-1288 is a
//! draft); this crate follows what those servers and the SDK clients do on
//! the wire.
//!
//! Built on tokio-tungstenite (RFC 6455 framing and handshake) with rustls
//! for `wss` (the same root-store choices as `mcpwire-http`):
//!
//! - the upgrade asks for the subprotocol `mcp`, and a server that does not
//!   select it is refused with a typed error (the Python server always
//!   selects it; the TypeScript SDK's client, on browsers and Node, fails
//!   without it);
//! - one JSON-RPC message per text message; binary messages are dropped and
//!   reported, messages over the maximum frame length (16 MiB) are refused
//!   before they are buffered whole;
//! - pings are answered, and a keepalive pings a silent server and gives up
//!   on one that stays silent;
//! - closing sends a close frame and waits for the server's, within a bound;
//! - active-once flow control: nothing is read while the consumer holds no
//!   grant (see [`WsTransport`]).
//!
//! ```no_run
//! use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};
//! use mcpwire_ws::{WsConfig, WsConnector, WsTransport};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let connector = WsConnector::new(WsConfig::new())?;
//! let mut transport = WsTransport::connect(&connector, "ws://127.0.0.1:8000/ws").await?;
//! let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
//! transport.sender().send(bytes::Bytes::from_static(init)).await?;
//! transport.set_active(Active::Once);
//! if let Some(TransportEvent::Frame(answer)) = transport.next_event().await {
//!     println!("{}", String::from_utf8_lossy(&answer));
//! }
//! transport.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! What it does not do: speak HTTP/2 WebSockets (RFC 8441), compress
//! (permessage-deflate), go through an HTTP proxy, or reconnect (the client
//! above reconnects through its transport factory).

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod config;
mod error;
mod request;
mod inbox;
mod driver;
mod tls;
mod connect;
mod transport;

pub use config::WsConfig;
pub use connect::WsConnector;
pub use error::Error;
pub use transport::WsTransport;

pub use http::{HeaderName, HeaderValue};
