//! MCP over HTTP: Streamable HTTP (2025-03-26 and later) and the legacy
//! HTTP+SSE transport (2024-11-05), with automatic fallback between them.
//!
//! This crate will hold both HTTP transports on hyper 1 and rustls: sessions,
//! SSE resumption, one retry policy, and active-once flow control over
//! response bodies.
