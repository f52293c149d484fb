//! Test fixtures for mcpwire: an in-memory [`Transport`] pair that honours
//! active-once grants exactly, and a scriptable fake MCP server that drives
//! the other end.
//!
//! Not published; used by the client's tests, benchmarks and examples.
//!
//! [`Transport`]: mcpwire_transport::Transport

mod fake_server;
mod memory;

pub use fake_server::{EXPECT_TIMEOUT, FakeServer, Reply, Script, Step, initialize_result};
pub use memory::{MemoryPeer, MemoryStats, MemoryTransport, memory_pair};
