//! The MCP client: connection lifecycle, requests with timeouts and
//! cancellation, server-initiated requests and notifications, and a typed API
//! for every server feature, over any [`mcpwire_transport::Transport`].
//!
//! ```no_run
//! # async fn demo<T: mcpwire_transport::Transport>(transport: T) -> Result<(), mcpwire_client::Error> {
//! use mcpwire_client::{Client, ClientConfig};
//!
//! let client = Client::connect(transport, ClientConfig::new()).await?;
//! for tool in client.list_all_tools().await? {
//!     println!("{}", tool.name);
//! }
//! let result = client.call_tool("echo", &serde_json::json!({"message": "hi"})).await?;
//! println!("{}", result.text());
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! # Shape
//!
//! A [`Client`] is a cheap handle. One background task (the driver) owns the
//! transport, parses each inbound frame once and completes the waiting caller
//! directly. Callers encode and queue their own requests, so a request costs
//! no task and no hop on the way out. The handshake is a separate lifecycle
//! over the request engine, so other lifecycles can be added without
//! touching it.
//!
//! # Requests
//!
//! Every request is a [`Call`]: await it as it is, or set
//! [`RequestOptions`] on it first (`.timeout(..)`, `.on_progress(..)`,
//! `.cancel_token(..)`, `.options(..)`).
//!
//! # Errors
//!
//! One [`Error`] type, branched on by [`ErrorKind`] and `is_*` helpers. Its
//! `Display` says what went wrong at this level only; the cause, down to
//! the operating system's error, is in [`source`](std::error::Error::source).
//! Message text is not stable.
//!
//! # Cancellation safety
//!
//! Every request future may be dropped at any point. Dropping it frees its
//! pending entry and, if the request was already queued for sending, tells
//! the server without waiting: in the stateless era over Streamable HTTP by
//! closing the request's answer stream (the revision's way), otherwise by
//! queueing `notifications/cancelled`. The server may
//! still have acted on the request; its late answer is ignored. Timeouts and
//! [`RequestOptions::cancel_token`] take the same path. `initialize` is never
//! cancelled, as the specification requires.
//!
//! # Failures never hang
//!
//! When the connection ends, every request in flight fails with an
//! [`ErrorKind::Closed`] error carrying the close reason and, for a process,
//! the tail of its stderr. While the client is not ready (connecting, backing
//! off before a reconnect), calls fail at once with a retryable `Closed` error.
//!
//! # Features
//!
//! `otel` (off by default): a request without an explicit
//! [`TraceContext`] carries the current `tracing` span's OpenTelemetry
//! context as `traceparent`/`tracestate` in its `_meta` (through
//! `tracing-opentelemetry`; the user's subscriber must have its layer).
//!
//! Not here: transports (see `mcpwire-stdio`, `mcpwire-http`), and any
//! server-side framework.

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate's layers, lowest first: a module imports only from modules
// declared above it (`cargo xtask tidy` checks it, and `cargo xtask tidy
// --print` draws the layers). Each folder's module doc says what it holds.
pub mod types; // The wire types.
mod base; // The vocabulary: errors, options, versions, stamps, the lock helper.
mod cache; // What the client keeps of the server's answers.
mod config; // The client's configuration.
mod observe; // Spans, metrics and their labels.
mod notify; // Server notifications: their inbox and lanes.
mod requests; // Requests both ways over one connection.
mod session; // One connection's life, and reconnecting.
mod client; // The `Client` handle and `Call`.
pub mod ops; // The requests a `Call` runs.
pub mod tasks; // The tasks extension.
pub mod skills; // The skills extension.
pub mod apps; // The MCP Apps extension.
mod api; // The client's typed methods, one per server feature.

pub use base::error::{Error, ErrorKind};
pub use base::handler::{
    BoxFuture, ElicitationHandler, HandlerError, RequestContext, RootsHandler, SamplingHandler,
};
pub use base::options::{
    CacheMode, Deadline, ProgressCallback, Replay, RequestOptions, TraceContext,
};
pub use base::state::ConnectionState;
pub use base::version::{
    Era, EraChoice, LATEST_VERSION, MODERN_VERSION, MODERN_VERSIONS, SUPPORTED_VERSIONS, is_modern,
    is_supported,
};
pub use cache::store::{
    CredentialId, DEFAULT_CACHE_BYTES, DEFAULT_CACHE_ENTRIES, MAX_TTL, ResponseCache,
};
pub use client::call::{Call, CallFuture, Operation};
pub use client::handle::Client;
pub use config::{ClientConfig, ElicitationDefaults, Keepalive, Reconnect};
pub use notify::inbox::{ListKind, ServerNotification};
pub use observe::telemetry::{REQUEST_TARGET, SESSION_TARGET};
pub use ops::{LevelApplied, ResourceSubscription};
pub use session::connection::TransportFactory;
pub use tokio_util::sync::CancellationToken;
