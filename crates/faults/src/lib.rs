//! The fault suite behind `cargo xtask faults`: misbehaving MCP peers on
//! loopback, and cases that prove the client neither hangs, leaks nor loses
//! anything when they misbehave.
//!
//! - [`proxy`]: a TCP fault proxy in front of any server (delay, cut, stall,
//!   truncate, reset, garbage, one byte a second, half-open) and a refusing
//!   address.
//! - [`stdio_server`]: scripted stdio servers (this binary run as
//!   `mcpwire-faults stdio-server <mode>`): silent, exiting early, logging to
//!   stdout, crashing mid-call, blocking, flooding, sending 20 MiB frames,
//!   leaving a grandchild behind.
//! - [`http_server`]: a scripted Streamable HTTP MCP server with sessions,
//!   on `mcpwire-test-support`'s scripted HTTP server: GET stream statuses,
//!   429/503 with `Retry-After`, restarts behind the same URL, blocking and
//!   flooding tools, wrong content types, large frames.
//! - [`probe`]: file descriptors, processes and memory of this process.
//! - [`runner`]: runs the cases, checks each one's criterion and the leak
//!   checks after it, prints one line per case and `N passed, M failed`.
//! - [`soak`]: many short stdio and HTTP sessions with a crash or a
//!   disconnect every 50th, then the same leak checks and a bound on memory
//!   growth.
//! - [`client`]: the few places that connect and call, so a change of the
//!   client's API touches one file.
//!
//! Not published; not a library for users.

// A fault case fails by panicking, on purpose and everywhere.
#![allow(clippy::missing_panics_doc)]

pub mod http_server;
pub mod probe;
pub mod client;
pub mod proxy;
pub mod runner;
pub mod cases;
pub mod soak;
pub mod stdio_server;
