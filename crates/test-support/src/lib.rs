//! Test fixtures for mcpwire: an in-memory [`Transport`] pair that honours
//! active-once grants exactly, a scriptable fake MCP server that drives
//! the other end, the demo server's executable, and (feature `http`) a
//! scripted HTTP server.
//!
//! Not published; used by the client's tests, benchmarks and examples, the
//! HTTP transport's tests, the facade's and the command's tests, and the
//! fault suite.
//!
//! [`Transport`]: mcpwire_transport::Transport

// A fixture fails its test by panicking, on purpose and everywhere.
#![allow(clippy::missing_panics_doc)]

#[cfg(feature = "http")]
pub mod http;
mod memory;
mod fake_server;
mod demo;

pub use demo::{DEMO_SERVER_ENV, demo_server};
pub use fake_server::{EXPECT_TIMEOUT, FakeServer, Reply, Script, Step, initialize_result};
pub use memory::{MemoryPeer, MemoryStats, MemoryTransport, SentFields, memory_pair};
