//! `cargo xtask faults [FILTER...]`: the fault suite (`crates/faults`).
//!
//! Builds `mcpwire-faults` and the bench server it puts a fault proxy in
//! front of, in release mode, then runs every case (or those whose name
//! contains one of the filters; `--list` lists them). Each case prints one
//! line with its criterion; the run ends with `N passed, M failed` and fails
//! if any case did.

use std::path::Path;
use std::process::Command;

use super::bench::target_dir;
use super::{cargo, run};

/// Builds and runs the fault suite.
pub(crate) fn faults(root: &Path, args: &[String]) -> Result<(), String> {
    run(cargo().args([
        "build",
        "--release",
        "-p",
        "mcpwire-faults",
        "-p",
        "mcpwire-bench-server",
    ]))?;
    let bin = target_dir(root).join("release");
    run(Command::new(bin.join("mcpwire-faults"))
        .arg("--bench-server")
        .arg(bin.join("mcpwire-bench-server"))
        .args(args))
}
