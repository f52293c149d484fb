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
//! Platforms: Unix (Linux and macOS) and Windows. On Unix the server leads a
//! process group of its own, and closing it goes stdin, `SIGTERM`,
//! `SIGKILL`. On Windows the server runs without a console window in a Job
//! Object that ends every process of its tree when the session ends (so
//! `npx.cmd` -> `node` go together); commands are found through `PATH` and
//! `PATHEXT` (`npx` is `npx.cmd`), `.cmd` and `.bat` files run through
//! `cmd.exe` with their arguments quoted by Rust's standard library (which
//! refuses one it cannot quote safely), and closing goes stdin, then the
//! grace period, then the job's termination (there are no signals). The
//! environment allow-list differs per platform ([`SAFE_ENV_VARS`]).
//! Linux is tested natively; Windows under Wine (`cargo xtask cross`); macOS
//! is type-checked only.
//!
//! What it does not do: speak MCP (frames are opaque bytes here), or restart
//! a server.

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(not(any(unix, windows)))]
compile_error!("mcpwire-stdio runs on Unix (process groups) and Windows (Job Objects) only");

mod config;
mod env;
mod error;
mod spawned;
mod stderr;
mod sys;
mod process;
mod transport;

pub use config::{InheritEnv, StderrMode, StdioConfig};
pub use env::SAFE_ENV_VARS;
pub use error::SpawnError;
pub use transport::StdioTransport;
