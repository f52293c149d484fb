//! A small MCP server over its own stdin and stdout, for mcpwire's tests,
//! benchmarks and quickstart.
//!
//! It speaks newline-delimited JSON-RPC through mcpwire's own codec and
//! `IoTransport`. Tools: `echo`, `add` (with an `outputSchema`), `slow`
//! (reports progress), `ask_llm` (asks the client to sample, when it can) and
//! `ask_user` (asks the client to elicit, when it can). One resource, one
//! resource template, one prompt with completion, logging.
//!
//! This is a test fixture, deliberately small: not a server framework.

mod catalog;
mod peer;

use std::sync::Arc;

use mcpwire_transport::{IoConfig, IoTransport};

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let transport = IoTransport::new(tokio::io::stdin(), tokio::io::stdout(), IoConfig::new());
        let server = Arc::new(peer::Server::default());
        server.serve(transport).await;
    });
}
