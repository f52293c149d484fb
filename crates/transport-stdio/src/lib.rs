//! MCP over a spawned server process's stdin and stdout.
//!
//! This crate will hold the stdio transport: spawning a server (command, args,
//! a safe environment allow-list, working directory), stderr handling, framing
//! over the pipes with active-once flow control, and graceful shutdown of the
//! whole process group (close stdin, wait, SIGTERM, SIGKILL).
