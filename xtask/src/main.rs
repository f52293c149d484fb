//! Project automation, run as `cargo xtask <command>` from anywhere in the
//! repository. Every command prints the commands it runs.
//!
//! - `ci`: format check, `tidy`, clippy, real-server install, tests,
//!   `cargo deny`, `faults`, a short `soak`, every fuzz target for 10 s (`fuzz --smoke`),
//!   then `conformance`, `interop`, `cross` and a sample of
//!   `mutants --diff`.
//! - `tidy`: the house rules as a check: no import circle between the
//!   modules of a crate, modules declared lowest layer first (no import
//!   from an earlier-declared module into a later one), no source file over
//!   800 lines, every public module documented (`--print` draws each
//!   crate's module layers).
//! - `api [--write]`: the public-API guard (listings in `xtask/api/`).
//! - `package`: `cargo package` for every publishable crate, what each
//!   archive holds checked, and the archives type-checked together.
//! - `conformance`: the official MCP conformance suite's client scenarios.
//! - `interop`: the client against real MCP servers, per server and
//!   transport.
//! - `bench`: mcpwire against rmcp and a raw baseline; writes
//!   `docs/benchmarks.md` (`--serve`: the rows of `mcpwire serve` instead).
//! - `faults`: misbehaving servers and networks; one line per case.
//! - `soak`: many short sessions with injected crashes; checks for leaks.
//! - `servers`: install the real MCP servers the tests talk to into
//!   `target/mcp-servers/` (npm packages and a Python virtualenv).
//! - `cli-docs`: runs every `mcpwire` command against the demo server and
//!   writes `docs/cli.md` with their real output.
//! - `cross [windows|macos]`: every crate type-checked for Windows and
//!   macOS, and the Windows tests run under Wine (Debian's toolchain; see
//!   `cross.rs`).
//! - `mutants`: mutation testing of the library crates; `ci` runs a
//!   sample of the mutants in the lines changed since `xtask/mutants-base`.

use std::env;
use std::process::ExitCode;

mod api;
mod cmd;
mod cli_docs;
mod conformance;
mod cross;
mod fuzz;
mod mutants;
mod report;
mod density;
mod bench_serve;
mod bench_solo;
mod behind;
mod bench;
mod faults;
mod package;
mod servers;
mod interop;
mod tidy;
mod ci;

use cmd::root;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::ci(&root()),
        Some("servers") => servers::install(&root()).map(|_| ()),
        Some("conformance") => conformance::conformance(&root(), &args[1..]),
        Some("interop") => interop::interop(&root(), &args[1..]),
        Some("fuzz") => fuzz::fuzz(&root(), &args[1..]),
        Some("bench") => bench::bench(&root(), &args[1..]),
        Some("cli-docs") => cli_docs::cli_docs(&root(), &args[1..]),
        Some("tidy") => tidy::tidy(&root(), &args[1..]),
        Some("api") => api::api(&root(), &args[1..]),
        Some("package") => package::package(&root(), &args[1..]),
        Some("mutants") => mutants::mutants(&root(), &args[1..]),
        Some("cross") => cross::cross(&root(), &args[1..]),
        Some("faults") => faults::faults(&root(), &args[1..]),
        Some("soak") => faults::soak(&root(), &args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <ci|tidy|api|package|servers|conformance|interop|fuzz|bench|faults|soak|cli-docs|cross|mutants>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
