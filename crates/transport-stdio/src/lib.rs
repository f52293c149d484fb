//! MCP over a spawned server process's stdin and stdout.
//!
//! [`StdioTransport::spawn`] starts a server from a [`StdioConfig`] (command,
//! arguments, a safe environment allow-list, working directory, framing,
//! limits, [`StderrMode`], shutdown timeouts) and returns a
//! [`Transport`](mcpwire_transport::Transport) with active-once flow control.
//! Framing and flow control are [`IoTransport`](mcpwire_transport::IoTransport)'s;
//! this crate adds the process: spawning without a shell, draining stderr,
//! noticing a crash at once, and shutting the whole process group down.
//!
//! ```no_run
//! use bytes::Bytes;
//! use mcpwire_stdio::{StderrMode, StdioConfig, StdioTransport};
//! use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let mut server = StdioTransport::spawn(
//!     StdioConfig::new("uvx")
//!         .arg("mcp-server-time")
//!         .env("TZ", "UTC") // only what the server needs: secrets stay out
//!         .stderr(StderrMode::Capture),
//! )
//! .await?;
//! server.set_active(Active::Once);
//! server
//!     .sender()
//!     .send(Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#))
//!     .await?;
//! while let Some(event) = server.next_event().await {
//!     match event {
//!         TransportEvent::Frame(frame) => {
//!             println!("{}", String::from_utf8_lossy(&frame));
//!             break;
//!         }
//!         TransportEvent::Stderr(line) => eprintln!("server: {line}"),
//!         TransportEvent::Closed(reason) => return Err(reason.to_string().into()),
//!         _ => {}
//!     }
//! }
//! server.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! What it does not do: speak MCP (frames are opaque bytes here), restart a
//! server, or run on non-Unix systems (process groups and signals are Unix).

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(not(unix))]
compile_error!("mcpwire-stdio needs Unix process groups and signals");

mod config;
mod env;
mod error;
mod process;
mod stderr;
mod transport;

pub use config::{InheritEnv, StderrMode, StdioConfig};
pub use env::SAFE_ENV_VARS;
pub use error::SpawnError;
pub use transport::StdioTransport;
