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
//! - `package`: `cargo package` for every publishable crate, and what each
//!   archive holds checked.
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
mod bench;
mod faults;
mod package;
mod servers;
mod interop;
mod tidy;

use cmd::{cargo, root, run};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
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

fn ci() -> Result<(), String> {
    let root = root();
    run(cargo().args(["fmt", "--all", "--check"]))?;
    // Cheap, so early: the module rules before anything is compiled.
    eprintln!("$ cargo xtask tidy");
    tidy::tidy(&root, &[])?;
    eprintln!("$ cargo xtask api");
    api::api(&root, &[])?;
    // Every feature: the facade's `http` code and the feature-gated tests
    // and doctests (the README's) are built and checked too.
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]))?;
    let dir = servers::install(&root)?;
    // The real-server tests are ignored by default (a plain `cargo test`
    // must not report them as passed without running them); here the
    // servers are installed, so every test runs.
    run(cargo()
        .args(["test", "--workspace", "--all-targets", "--all-features"])
        .args(["--", "--include-ignored"])
        .env(servers::DIR_ENV, &dir))?;
    run(cargo().args(["test", "--workspace", "--doc", "--all-features"]))?;
    // The facade without `ws` (on everywhere above): a WebSocket entry of a
    // configuration file stays a typed unsupported-transport error.
    run(cargo().args([
        "test",
        "-p",
        "mcpwire",
        "--features",
        "config",
        "--test",
        "from_config",
    ]))?;
    run(cargo().args(["deny", "check", "licenses", "bans", "sources"]))?;
    eprintln!("$ cargo xtask package");
    package::package(&root, &[])?;
    // Misbehaving peers, then a short soak (the long one is run by hand:
    // `cargo xtask soak --minutes N`).
    eprintln!("$ cargo xtask faults");
    faults::faults(&root, &[])?;
    eprintln!("$ cargo xtask soak --cycles 200");
    faults::soak(&root, &["--cycles".into(), "200".into()])?;
    // Every fuzz target for a few seconds, from a dev build without a
    // sanitizer (`--smoke`: the optimised sanitizer build of every
    // dependency costs three times the CPU). The five-minute runs are made
    // by hand and reported in docs/reliability.md.
    eprintln!("$ cargo xtask fuzz --all --seconds 10 --smoke");
    fuzz::fuzz(
        &root,
        &[
            "--all".into(),
            "--seconds".into(),
            "10".into(),
            "--smoke".into(),
        ],
    )?;
    // After the tests: the official conformance suite and real servers.
    eprintln!("$ cargo xtask conformance");
    conformance::conformance(&root, &[])?;
    eprintln!("$ cargo xtask interop");
    interop::interop(&root, &[])?;
    // Windows and macOS: type-checks, then the Windows tests under Wine.
    eprintln!("$ cargo xtask cross");
    cross::cross(&root, &[])?;
    // Last, because it edits sources in place (restoring each): the
    // mutants of the library lines changed since the commit in
    // `xtask/mutants-base`, a sample that fits about 8 minutes; a missed
    // one not in `xtask/mutants-allow.txt` fails.
    mutants::ci(&root)?;
    Ok(())
}
