//! A small MCP server for mcpwire's tests, benchmarks and examples.
//!
//! ```text
//! mcpwire-demo-server            serve over stdin and stdout
//! mcpwire-demo-server --http [--port N]
//!                                serve Streamable HTTP on 127.0.0.1 (port N,
//!                                or a free one), printing the URL first
//! ```
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
mod http;

use std::process::ExitCode;
use std::sync::Arc;

use mcpwire_transport::{IoConfig, IoTransport};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--http [--port N] [--token T]`: with a token, every request must
    // carry `Authorization: Bearer T` (a server that wants a token given
    // beforehand and publishes no OAuth metadata, for the CLI's docs).
    let (mut port, mut token) = (None, None);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match (arg.as_str(), port) {
            ("--http", None) => port = Some(0),
            ("--port", Some(_)) => match rest.next().map(|p| p.parse()) {
                Some(Ok(p)) => port = Some(p),
                _ => return usage(),
            },
            ("--token", Some(_)) => match rest.next() {
                Some(t) => token = Some(t.clone()),
                None => return usage(),
            },
            _ => return usage(),
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        match port {
            None => {
                let transport =
                    IoTransport::new(tokio::io::stdin(), tokio::io::stdout(), IoConfig::new());
                let server = Arc::new(peer::Server::default());
                server.serve(transport).await;
                ExitCode::SUCCESS
            }
            Some(port) => match http::serve(port, token).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("mcpwire-demo-server: {e}");
                    ExitCode::FAILURE
                }
            },
        }
    })
}

fn usage() -> ExitCode {
    eprintln!("usage: mcpwire-demo-server [--http [--port N] [--token T]]");
    ExitCode::from(2)
}
