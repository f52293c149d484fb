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
//! What it does not do: speak MCP (frames are opaque bytes here), restart a
//! server, or run on non-Unix systems (process groups and signals are Unix).

mod config;
mod env;
mod error;
mod process;
mod stderr;
mod transport;

pub use config::{StderrMode, StdioConfig};
pub use env::SAFE_ENV_VARS;
pub use error::SpawnError;
pub use transport::StdioTransport;
