//! `cargo xtask faults [FILTER...]` and `cargo xtask soak [--minutes N]
//! [--cycles N]`: the fault suite and the soak (`crates/faults`).
//!
//! Both build `mcpwire-faults` and the bench server it puts a fault proxy in
//! front of, in the dev profile (the cases judge behaviour, not speed, and
//! the test build has already compiled everything they need). `faults` runs every case (or those whose name
//! contains one of the filters; `--list` lists them); each case prints one
//! line with its criterion, and the run ends with `N passed, M failed`.
//! `soak` runs at least 1,000 stdio and 1,000 Streamable HTTP sessions (or
//! `--cycles`), and goes on for `--minutes`, then checks for leftovers.
//! Either fails if anything did.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd::{build_programs, run};

/// Builds and runs the fault suite.
pub(crate) fn faults(root: &Path, args: &[String]) -> Result<(), String> {
    let bin = build(root)?;
    run(Command::new(bin.join("mcpwire-faults"))
        .arg("--bench-server")
        .arg(bin.join("mcpwire-bench-server"))
        .args(args))
}

/// Builds and runs the soak.
pub(crate) fn soak(root: &Path, args: &[String]) -> Result<(), String> {
    let bin = build(root)?;
    run(Command::new(bin.join("mcpwire-faults"))
        .arg("soak")
        .args(args))
}

/// Builds the suite and the bench server; returns their directory.
fn build(root: &Path) -> Result<PathBuf, String> {
    build_programs(root)
}
