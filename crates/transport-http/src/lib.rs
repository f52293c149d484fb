//! MCP over HTTP: Streamable HTTP (2025-03-26 and later) and the legacy
//! HTTP+SSE transport (2024-11-05), with automatic fallback between them.
//!
//! Built on hyper 1 and rustls: a pooled [`HttpClient`] (HTTP/1.1 and HTTP/2
//! through ALPN, keep-alive, timeouts, custom headers) and an
//! [`HttpTransport`] implementing the [`Transport`](mcpwire_transport::Transport)
//! contract, with sessions, SSE resumption, one [`RetryPolicy`] and
//! active-once flow control over response bodies. See `docs/http.md`.
//!
//! ```no_run
//! use mcpwire_http::{HttpClient, HttpConfig, HttpMode, HttpTransport};
//! use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! // One client per process: its connection pool is shared by every transport.
//! let client = HttpClient::new(HttpConfig::new())?;
//! // Streamable HTTP, or legacy HTTP+SSE if the server only speaks that.
//! let mut transport = HttpTransport::new(&client, "https://example.com/mcp")?;
//! let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
//! transport.sender().send(bytes::Bytes::from_static(init)).await?;
//! transport.set_active(Active::Once);
//! if let Some(TransportEvent::Frame(answer)) = transport.next_event().await {
//!     println!("{} via {:?}", String::from_utf8_lossy(&answer), transport.mode());
//! }
//! assert_ne!(transport.mode(), Some(HttpMode::ReceiveOnlySse));
//! transport.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! Errors: [`Error`] says what went wrong at this layer, its cause (hyper's
//! error, rustls', the operating system's) is its `source()`; an answer of
//! 401 or 403 is [`Error::Authorization`], with every `WWW-Authenticate`
//! [`Challenge`] parsed. Message text is not stable: branch on the variants.
//!
//! What it does not do: know MCP beyond the JSON-RPC envelope (it recognises
//! `initialize` and `notifications/initialized` to manage the session and the
//! GET stream), replay requests after a session expired (the client decides
//! what is safe to repeat), or follow redirects.

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Lowest layer first: a module imports only from modules declared above it
// (`cargo xtask tidy` checks it); `cargo xtask tidy --print` draws the layers.
mod abort;
mod error;
mod events;
mod mode;
mod outbound;
mod proxy;
mod resolve;
mod demand;
mod response;
mod retry;
mod config;
mod tls_setup;
mod connector;
mod client;
mod fetch;
mod session;
mod context;
mod request;
mod sse;
mod legacy;
mod streamable;
mod driver;
mod transport;

pub use client::HttpClient;
pub use config::{Http2, HttpConfig, Proxy};
pub use error::{AuthorizationRequired, EndpointError, Error};
/// Authorization: [`Auth`](mcpwire_auth::Auth) settings, OAuth, bearer tokens.
pub use mcpwire_auth as auth;
pub use mcpwire_auth::Challenge;
pub use mode::HttpMode;
pub use retry::RetryPolicy;
pub use transport::HttpTransport;

pub use http::{HeaderName, HeaderValue};
