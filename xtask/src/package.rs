//! `cargo xtask package`: packages every publishable crate the way
//! `cargo publish` would (in dependency order, each archive built and its
//! build checked against the archives of the crates it depends on), then
//! checks what each archive holds: its README and both licence files, and
//! nothing large or private (test fixtures, recordings, keys).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::api::CRATES;
use crate::cmd::{cargo, run};
use crate::report::target_dir;

/// The largest file an archive may hold.
const MAX_FILE: u64 = 200 * 1024;

/// Path parts and endings that have no place in a published crate.
const PRIVATE: &[&str] = &[
    "fixtures/",
    "recordings/",
    ".pem",
    ".key",
    ".der",
    ".p12",
    ".env",
    "tests/",
];

/// Where the archives are built and checked, under the target directory;
/// removed before and after.
const BUILD_DIR: &str = "package-check";

/// Packages and checks every publishable crate (the libraries and the
/// command).
pub(crate) fn package(root: &Path, _args: &[String]) -> Result<(), String> {
    let mut names: Vec<&str> = CRATES.iter().map(|(name, _)| *name).collect();
    names.push("mcpwire-cli");
    let names: Vec<&str> = names
        .into_iter()
        .filter(|name| root.join(crate_dir(name)).join("Cargo.toml").exists())
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    forget_earlier_archives(&names, version);
    let build = target_dir(root).join(BUILD_DIR);
    let _ = fs::remove_dir_all(&build);
    let mut cmd = cargo();
    // A working tree with local changes may be packaged too: CI's is clean.
    cmd.args(["package", "--allow-dirty"]);
    for name in &names {
        cmd.args(["-p", name]);
    }
    // An archive is built as a workspace of its own, without our
    // `[profile.dev]`: full debug information in every dependency, several
    // GB a CI machine does not have. The same profile is given here, and the
    // build goes to a directory of its own that is removed afterwards.
    cmd.arg("--target-dir").arg(&build);
    cmd.args(["--config", "profile.dev.debug=\"line-tables-only\""]);
    cmd.args(["--config", "profile.dev.package.\"*\".debug=false"]);
    cmd.env("CARGO_INCREMENTAL", "0");
    let packaged = run(&mut cmd);
    let dir = build.join("package");
    let mut problems = Vec::new();
    if packaged.is_ok() {
        for name in &names {
            let archive = dir.join(format!("{name}-{version}.crate"));
            problems.extend(
                check(&archive, name, version).unwrap_or_else(|e| vec![format!("{name}: {e}")]),
            );
        }
    }
    let _ = fs::remove_dir_all(&build);
    packaged?;
    if problems.is_empty() {
        eprintln!(
            "package: {} crates packaged; each holds its README and both licence files, \
             and nothing large or private",
            names.len()
        );
        Ok(())
    } else {
        Err(format!("packaging:\n  {}", problems.join("\n  ")))
    }
}

/// Forgets what an earlier run left of our archives in the cargo home.
/// Each archive is checked by building it against the archives of the
/// crates it depends on, which cargo serves from a local registry; cargo
/// takes a registry crate of a given version to be immutable, so it would
/// reuse the sources it unpacked for an earlier archive of the same version
/// and check today's crate against yesterday's dependency. (The build itself
/// starts from an empty directory.) Nothing a clean machine has; best
/// effort, so a missing directory is no error.
fn forget_earlier_archives(names: &[&str], version: &str) {
    let home = std::env::var_os("CARGO_HOME").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo"),
        PathBuf::from,
    );
    for (kind, suffix) in [("src", ""), ("cache", ".crate")] {
        let Ok(registries) = fs::read_dir(home.join("registry").join(kind)) else {
            continue;
        };
        for registry in registries.flatten() {
            for name in names {
                let path = registry.path().join(format!("{name}-{version}{suffix}"));
                let _ = fs::remove_dir_all(&path).or_else(|_| fs::remove_file(&path));
            }
        }
    }
}

/// The directory of a publishable crate.
fn crate_dir(name: &str) -> String {
    if name == "mcpwire-cli" {
        return "crates/cli".into();
    }
    CRATES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| (*d).to_owned())
        .unwrap_or_default()
}

/// What is wrong with one archive.
fn check(archive: &Path, name: &str, version: &str) -> Result<Vec<String>, String> {
    let out = Command::new("tar")
        .arg("-tvzf")
        .arg(archive)
        .output()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tar could not read {}: {}",
            archive.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let prefix = format!("{name}-{version}/");
    let mut files = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // `-rw-r--r-- 0/0  1234 1970-01-01 00:00 name-0.1.0/src/lib.rs`
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 6 {
            continue;
        }
        let size: u64 = fields[2].parse().unwrap_or(0);
        let path = fields[5..].join(" ");
        let path = path.strip_prefix(&prefix).unwrap_or(&path).to_owned();
        files.push((path, size));
    }
    let mut problems = Vec::new();
    for wanted in ["README.md", "LICENSE-MIT", "LICENSE-APACHE", "Cargo.toml"] {
        if !files.iter().any(|(p, _)| p == wanted) {
            problems.push(format!("{name}: no {wanted} in the archive"));
        }
    }
    for (path, size) in &files {
        if *size > MAX_FILE {
            problems.push(format!("{name}: {path} is {size} bytes (limit {MAX_FILE})"));
        }
        if let Some(p) = PRIVATE.iter().find(|p| path.contains(*p)) {
            problems.push(format!("{name}: {path} looks private ({p})"));
        }
    }
    Ok(problems)
}
