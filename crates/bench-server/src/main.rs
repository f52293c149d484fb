//! A lean MCP echo server for `cargo xtask bench`, built never to be the
//! bottleneck of the client it serves.
//!
//! ```text
//! mcpwire-bench-server stdio
//! mcpwire-bench-server http [--sse] [--port N] [--threads N]
//! ```
//!
//! Over stdio it answers newline-delimited JSON-RPC with a blocking loop.
//! Over Streamable HTTP it binds 127.0.0.1 only, prints its endpoint URL as
//! the first line of stdout, and answers each POST statelessly with JSON (or,
//! with `--sse`, a one-event SSE stream). It knows `initialize`, `ping`,
//! `tools/list` and `tools/call` of one tool, `echo`, which answers with its
//! `message` argument verbatim.
//!
//! Not a server framework and not a test fixture for behaviour: see
//! `mcpwire-demo-server` for that.

mod echo;
mod http;
mod stdio;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("stdio") => stdio::serve(),
        Some("http") => {
            let mut mode = http::AnswerMode::Json;
            let mut port = 0u16;
            let mut threads = 2usize;
            let mut rest = args[1..].iter();
            while let Some(arg) = rest.next() {
                match arg.as_str() {
                    "--sse" => mode = http::AnswerMode::Sse,
                    "--port" => match rest.next().and_then(|p| p.parse().ok()) {
                        Some(p) => port = p,
                        None => return usage(),
                    },
                    "--threads" => match rest.next().and_then(|p| p.parse().ok()) {
                        Some(t) => threads = t,
                        None => return usage(),
                    },
                    _ => return usage(),
                }
            }
            http::serve(mode, port, threads)
        }
        _ => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A peer that went away ends the server quietly.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpwire-bench-server: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: mcpwire-bench-server stdio | http [--sse] [--port N] [--threads N]");
    ExitCode::from(2)
}
