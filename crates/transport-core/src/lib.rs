//! The transport abstraction of mcpwire, with active-once flow control.
//!
//! A [`Transport`] moves whole frames (one JSON-RPC message each) between us
//! and one MCP peer. It knows framing and I/O, nothing of MCP methods. Every
//! concrete transport (a spawned process, an HTTP endpoint, any byte stream)
//! implements the same contract, so the client above runs over all of them.
//!
//! The contract in one paragraph: frames go out through a cloneable
//! [`FrameSender`] (bounded queue: `Busy` when full, never unbounded). Events
//! come in through [`Transport::poll_event`], and **frames are delivered only
//! against grants** set with [`Transport::set_active`]: one frame per grant,
//! nothing while paused. A transport reads ahead at most a small bounded
//! buffer while no grant is outstanding, so a consumer that stops asking makes
//! the peer block (its pipe or TCP window fills) instead of making us buffer
//! without bound. `Closed` is reported exactly once, last. See
//! [`Transport`] for the full contract.
//!
//! [`IoTransport`] implements the contract over any byte stream (pipes,
//! sockets, an in-memory pair from [`IoTransport::pair`] for scripting a fake
//! peer), with newline framing.
//!
//! Features, both off by default: `test-util` adds `GrantHarness`, which
//! checks any transport against the contract one grant at a time (for the
//! tests of a transport); `direct-send` adds the `DirectSend` hook through
//! which a transport takes frames on the sender's own task (`mcpwire-http`
//! uses it).
//!
//! A sender may say what a frame is and add header fields for transports
//! whose messages have headers, such as HTTP ([`Outgoing`]: its
//! [`FrameKind`] and [`FrameMeta`]), so such a transport need not read the
//! frame again; a transport without headers ignores both. A
//! transport that carries each request on its own stream can stop one
//! ([`FrameSender::abort`], through its [`RequestAbort`]).
//!
//! A [`Tap`] sees every frame a transport sends and receives, with the
//! header fields it sent (HTTP), and changes nothing of it
//! ([`tap_transport`]).
//!
//! What this crate does not do: spawn processes, speak HTTP, or know MCP.
//!
//! ```
//! use bytes::Bytes;
//! use mcpwire_transport::{Active, IoConfig, IoTransport, Transport, TransportEvent, TransportExt};
//! use tokio::io::AsyncWriteExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // A scripted peer in memory: what it writes, the transport receives.
//! let (mut transport, mut peer) = IoTransport::pair(IoConfig::new());
//! peer.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n").await.unwrap();
//!
//! // Nothing is delivered until a grant is given.
//! transport.set_active(Active::Once);
//! match transport.next_event().await {
//!     Some(TransportEvent::Frame(frame)) => assert!(frame.starts_with(b"{")),
//!     other => panic!("{other:?}"),
//! }
//! transport.sender().send(Bytes::from_static(b"{}")).await.unwrap();
//! transport.close().await;
//! # }
//! ```

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod abort;
mod active;
mod backoff;
mod outgoing;
mod error;
mod event;
mod io_config;
mod direct;
mod tap;
#[cfg(feature = "tls")]
pub mod tls;
mod writer;
mod outbound;
mod sender;
mod transport;
#[cfg(feature = "test-util")]
mod harness;
mod io;
mod tapped;

pub use abort::RequestAbort;
pub use active::{Active, Grants};
pub use backoff::{Backoff, Jitter};
pub use error::{ConnectError, HttpStatus, SendError, TransportError};
pub use event::{CloseReason, ExitInfo, TransportEvent};
#[cfg(feature = "test-util")]
pub use harness::{GrantHarness, HarnessError};
pub use io::IoTransport;
pub use io_config::{Framing, IoConfig, NonJsonPolicy};
pub use outgoing::{FrameKind, FrameMeta, Outgoing};
pub use sender::FrameSender;
#[cfg(feature = "direct-send")]
pub use sender::{DirectSend, Offered};
pub use tap::{Direction, REDACTED, Tap, Tapped, is_credential_header};
pub use tapped::{TappedTransport, tap_transport};
pub use transport::{Transport, TransportExt, TransportInfo};
