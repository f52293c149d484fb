//! The server side of MCP on mcpwire's own layers: a fleet of MCP servers
//! (a [`Manager`](mcpwire_manager::Manager)) offered to any MCP client as
//! one server.
//!
//! [`Server::serve`] runs one client's session over any
//! [`Transport`](mcpwire_transport::Transport) (the process's stdin and
//! stdout, a socket, an in-memory pair): the handshake (the revision the
//! client asks for when we speak it, else our latest), `ping`, and the
//! fleet's catalogue under its public names (`tools/list`, `tools/call`,
//! `prompts/list`, `prompts/get`, `resources/list`, `resources/read`,
//! `resources/templates/list`), each call routed by the manager with its
//! filters, pins and hooks, and `completion/complete` asked of the server
//! that owns the prompt or template.
//!
//! Both eras, per request: a request whose `_meta` declares the stateless
//! revision (2026-07-28, [`MODERN_VERSIONS`]) is served without
//! `initialize`, `server/discover` says what we speak, and that era's
//! requests get no `ping` or `logging/setLevel` (method not found) and its
//! revision's error for a version we do not speak (`-32022`).
//!
//! [`Server::serve_http`] serves Streamable HTTP on a loopback listener
//! (sessions for the `initialize` era, none for the stateless one, a
//! bearer token, `Origin` and `Host` checks), and on Unix
//! `Server::serve_unix` (Unix only) serves each connection of a Unix socket as one
//! client.
//!
//! What it relays: the client's `notifications/cancelled` (or, for a
//! stateless request over HTTP, its closed answer stream) cancels the
//! upstream call; upstream progress reaches the client under its own
//! `progressToken`; to a client of the `initialize` era, a change of the
//! fleet's catalogue is a `list_changed` notification and the servers' log
//! messages reach it as `notifications/message`, the logger named after
//! the server, at or above the level the client set (the stateless era
//! gets neither: there is no `subscriptions/listen` yet). With
//! [`ServerRequests`] (given to both the fleet's builder and
//! [`ServeOptions::server_requests`]), the servers' sampling, elicitation
//! and roots requests go to the client of the `initialize` era whose call
//! caused them, and its answer back (the stateless era's input rounds are
//! not relayed yet).
//!
//! Limits, so a client cannot make us hold unbounded work: each request
//! runs on its own task, at most
//! [`max_in_flight`](ServeOptions::max_in_flight) at once per client (a
//! request over the bound is answered with an error at once); frames are
//! read under the transport's grants and its frame-length limit. Bad input
//! gets a JSON-RPC error, never a panic.
//!
//! ```no_run
//! # async fn demo(manager: mcpwire_manager::Manager) -> Result<(), mcpwire_serve::ServeError> {
//! use mcpwire_serve::Server;
//! use mcpwire_transport::{IoConfig, IoTransport};
//!
//! manager.connect_all().await.ok();
//! let stdio = IoTransport::new(tokio::io::stdin(), tokio::io::stdout(), IoConfig::new());
//! Server::new(manager).serve(stdio).await
//! # }
//! ```

// Lowest layer first: a module imports only from modules declared above it
// (`cargo xtask tidy` checks it).
mod error;
mod wire;
mod methods;
mod complete;
mod relay;
mod requests;
mod session;
mod body;
mod stateless;
mod http;
#[cfg(unix)]
mod unix;

pub use error::ServeError;
pub use http::{HttpOptions, generate_token};
pub use methods::{MODERN_VERSIONS, SUPPORTED_VERSIONS};
pub use requests::ServerRequests;
pub use session::{ServeOptions, Server};
