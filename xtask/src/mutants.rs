//! `cargo xtask mutants [CRATE...] [-- ARGS...]`: mutation testing of the
//! library crates with cargo-mutants (crates.io), which changes the code one
//! small way at a time (a condition negated, an operator swapped, a body
//! replaced by a default) and runs the crate's tests on each change. A
//! change no test notices ("missed") is behaviour no test holds.
//!
//! `CRATE` is one of `codec`, `transport-core`, `transport-stdio`,
//! `transport-http`, `client` (the directory names under `crates/`); none
//! means all five, one after another. Each crate's mutants are tested
//! against that crate's own tests. `ARGS` go to `cargo mutants` as they are
//! (`-j 1`, `--file src/retry.rs`, `--re 'fn replay'`, `--list`...).
//!
//! Results go to `target/mutants/CRATE/mutants.out/` (`missed.txt`,
//! `caught.txt`, `outcomes.json`...); the command prints the counts per
//! crate and every missed mutant, and fails if any was missed or timed out.
//! A full run takes hours on two cores, so CI does not run it;
//! `docs/reliability.md` keeps the latest figures. If `cargo mutants` is
//! missing it is installed first (`cargo install --locked cargo-mutants`).

use std::path::Path;
use std::process::Stdio;

use crate::cmd::{cargo, display, run};

/// The library crates: directory under `crates/`, and package name.
const CRATES: &[(&str, &str)] = &[
    ("codec", "mcpwire-codec"),
    ("transport-core", "mcpwire-transport"),
    ("transport-stdio", "mcpwire-stdio"),
    ("transport-http", "mcpwire-http"),
    ("client", "mcpwire-client"),
    ("auth", "mcpwire-auth"),
    ("config", "mcpwire-config"),
    ("manager", "mcpwire-manager"),
    ("cli", "mcpwire-cli"),
];

/// The outcome files cargo-mutants writes, one mutant a line.
const OUTCOMES: &[&str] = &["caught", "missed", "unviable", "timeout"];

/// Parses the arguments after `mutants` and runs cargo-mutants per crate.
pub(crate) fn mutants(root: &Path, args: &[String]) -> Result<(), String> {
    let usage = || {
        let names: Vec<&str> = CRATES.iter().map(|(dir, _)| *dir).collect();
        format!(
            "usage: cargo xtask mutants [{}]... [-- CARGO_MUTANTS_ARGS...]",
            names.join("|")
        )
    };
    let (ours, theirs) = match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => (args, &[][..]),
    };
    let mut selected = Vec::new();
    for name in ours {
        let krate = CRATES
            .iter()
            .find(|(dir, _)| dir == name)
            .ok_or_else(usage)?;
        selected.push(*krate);
    }
    if selected.is_empty() {
        selected = CRATES.to_vec();
    }

    ensure_cargo_mutants()?;
    let mut summaries = Vec::new();
    let mut failed = false;
    for (dir, package) in selected {
        let out = root.join("target").join("mutants").join(dir);
        std::fs::create_dir_all(&out)
            .map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        let mut cmd = cargo();
        cmd.args(["mutants", "--package", package, "--output"])
            .arg(&out)
            .args(theirs)
            .current_dir(root);
        eprintln!("$ {}", display(&cmd));
        let status = cmd
            .status()
            .map_err(|e| format!("cannot run `{}`: {e}", display(&cmd)))?;
        // cargo-mutants: 0 all caught, 2 some missed, 3 some timed out;
        // anything else (a failing baseline, bad arguments) is an error.
        match status.code() {
            Some(0) => {}
            Some(2 | 3) => failed = true,
            _ => return Err(format!("`{}` failed: {status}", display(&cmd))),
        }
        let counts = count_outcomes(&out.join("mutants.out"));
        let line = OUTCOMES
            .iter()
            .zip(&counts)
            .map(|(name, n)| format!("{n} {name}"))
            .collect::<Vec<_>>()
            .join(", ");
        summaries.push(format!("{dir}: {line}"));
        print_missed(&out.join("mutants.out"));
    }
    eprintln!("\nmutants per crate:");
    for s in &summaries {
        eprintln!("  {s}");
    }
    if failed {
        Err("some mutants were missed or timed out (see above)".into())
    } else {
        Ok(())
    }
}

/// How many mutants ended in each of [`OUTCOMES`] (0 where the file is
/// missing, e.g. with `--list`).
fn count_outcomes(dir: &Path) -> Vec<usize> {
    OUTCOMES
        .iter()
        .map(|name| {
            std::fs::read_to_string(dir.join(format!("{name}.txt")))
                .map(|text| text.lines().filter(|l| !l.trim().is_empty()).count())
                .unwrap_or(0)
        })
        .collect()
}

fn print_missed(dir: &Path) {
    if let Ok(text) = std::fs::read_to_string(dir.join("missed.txt")) {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            eprintln!("  MISSED {line}");
        }
    }
}

/// Installs cargo-mutants unless `cargo mutants --version` already works.
fn ensure_cargo_mutants() -> Result<(), String> {
    eprintln!("$ cargo mutants --version");
    let present = cargo()
        .args(["mutants", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return Ok(());
    }
    eprintln!("cargo mutants is missing; installing it");
    run(cargo().args(["install", "--locked", "cargo-mutants"]))
}
