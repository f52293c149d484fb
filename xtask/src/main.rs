//! Project automation, run as `cargo xtask <command>` from anywhere in the
//! repository. Every command prints the commands it runs.
//!
//! - `ci`: format check, clippy, real-server install, tests, `cargo deny`,
//!   then `conformance` and `interop`.
//! - `conformance`: the official MCP conformance suite's client scenarios.
//! - `interop`: the client against real MCP servers, per server and
//!   transport.
//! - `bench`: mcpwire against rmcp and a raw baseline; writes
//!   `docs/benchmarks.md`.
//! - `faults`: misbehaving servers and networks; one line per case.
//! - `soak`: many short sessions with injected crashes; checks for leaks.
//! - `servers`: install the real MCP servers the tests talk to into
//!   `target/mcp-servers/` (npm packages and a Python virtualenv).

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod bench;
mod conformance;
mod density;
mod faults;
mod fuzz;
mod interop;
mod servers;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("servers") => servers::install(&root()).map(|_| ()),
        Some("conformance") => conformance::conformance(&root(), &args[1..]),
        Some("interop") => interop::interop(&root(), &args[1..]),
        Some("fuzz") => fuzz::fuzz(&root(), &args[1..]),
        Some("bench") => bench::bench(&root(), &args[1..]),
        Some("faults") => faults::faults(&root(), &args[1..]),
        Some("soak") => faults::soak(&root(), &args[1..]),
        _ => {
            eprintln!("usage: cargo xtask <ci|servers|conformance|interop|fuzz|bench|faults|soak>");
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

/// The workspace root (the parent of this crate's directory).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Runs `cmd` from the workspace root, echoing it first; an error unless it
/// exits with status 0.
fn run(cmd: &mut Command) -> Result<(), String> {
    cmd.current_dir(root());
    eprintln!("$ {}", display(cmd));
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run `{}`: {e}", display(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed: {status}", display(cmd)))
    }
}

fn display(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

fn cargo() -> Command {
    Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn ci() -> Result<(), String> {
    let root = root();
    run(cargo().args(["fmt", "--all", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    let dir = servers::install(&root)?;
    run(cargo()
        .args(["test", "--workspace", "--all-targets"])
        .env(servers::DIR_ENV, &dir)
        .env(servers::REQUIRE_ENV, "1"))?;
    run(cargo().args(["test", "--workspace", "--doc"]))?;
    run(cargo().args(["deny", "check", "licenses", "bans", "sources"]))?;
    // After the tests: the official conformance suite and real servers.
    eprintln!("$ cargo xtask conformance");
    conformance::conformance(&root, &[])?;
    eprintln!("$ cargo xtask interop");
    interop::interop(&root, &[])?;
    Ok(())
}
