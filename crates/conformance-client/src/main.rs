//! The client that `cargo xtask conformance` and `cargo xtask interop` drive.
//!
//! Two modes, both through mcpwire's public API only:
//!
//! - `mcpwire-conformance URL`: what the official MCP conformance suite runs
//!   for a client scenario. The scenario's name comes from
//!   `MCP_CONFORMANCE_SCENARIO` (and its data, where it has any, from
//!   `MCP_CONFORMANCE_CONTEXT`); the server URL is the last argument. The
//!   client connects with its default settings plus handlers that play the
//!   user, and does what the scenario asks (see [`scenario`]). A behaviour a
//!   scenario needs belongs in the library, never here.
//! - `mcpwire-conformance interop --url URL | --stdio -- PROGRAM ARGS...`:
//!   one interop case against a real server (see [`interop`]).
//! - `mcpwire-conformance fleet --config FILE [--call NAME JSON]...`: a
//!   configuration file of real servers through the manager (see [`fleet`]).
//!
//! Exit status 0 when everything asked for succeeded, 1 otherwise (the reason
//! on stderr), 2 for a usage error.

mod arguments;
mod auth;
mod user;
mod scenario;
mod fleet;
mod interop;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpwire-conformance: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = match args.first().map(String::as_str) {
        Some("interop") => match interop::Case::parse(&args[1..]) {
            Ok(case) => runtime.block_on(case.run()),
            Err(usage) => {
                eprintln!("mcpwire-conformance: {usage}\n{}", interop::USAGE);
                return ExitCode::from(2);
            }
        },
        Some("fleet") => match fleet::Fleet::parse(&args[1..]) {
            Ok(case) => runtime.block_on(case.run()),
            Err(usage) => {
                eprintln!("mcpwire-conformance: {usage}\n{}", fleet::USAGE);
                return ExitCode::from(2);
            }
        },
        Some(_) => {
            // The suite appends the URL to the command it was given.
            let url = args.last().cloned().unwrap_or_default();
            let name = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
            let context = std::env::var("MCP_CONFORMANCE_CONTEXT").ok();
            runtime.block_on(scenario::run(&name, &url, context.as_deref()))
        }
        None => {
            eprintln!(
                "usage: mcpwire-conformance URL (scenario in MCP_CONFORMANCE_SCENARIO)\n{}",
                interop::USAGE
            );
            return ExitCode::from(2);
        }
    };
    // Close is awaited inside each mode; anything still running (a handler
    // the server never cancelled) must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpwire-conformance: {e}");
            ExitCode::FAILURE
        }
    }
}
