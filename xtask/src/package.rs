//! `cargo xtask package`: packages every publishable crate the way
//! `cargo publish` would, checks what each archive holds (its README and
//! both licence files, and nothing large or private: test fixtures,
//! recordings, keys), then type-checks the archives, unpacked, as one
//! workspace.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::api::CRATES;
use crate::cmd::{cargo, run, target_dir};

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
    let build = target_dir(root).join(BUILD_DIR);
    let _ = fs::remove_dir_all(&build);
    let mut cmd = cargo();
    // A working tree with local changes may be packaged too: CI's is clean.
    // Not built here one by one (that took 443 s of CI, each crate a
    // dependency graph of its own): `check_as_workspace` below compiles
    // them all at once.
    cmd.args(["package", "--allow-dirty", "--no-verify"]);
    for name in &names {
        cmd.args(["-p", name]);
    }
    cmd.arg("--target-dir").arg(&build);
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
    let compiled = match &packaged {
        Ok(()) if problems.is_empty() => check_as_workspace(root, &build, &names, version),
        _ => Ok(()),
    };
    let _ = fs::remove_dir_all(&build);
    packaged?;
    compiled?;
    if problems.is_empty() {
        eprintln!(
            "package: {} crates packaged; each holds its README and both licence files, \
             and nothing large or private; unpacked, they compile together",
            names.len()
        );
        Ok(())
    } else {
        Err(format!("packaging:\n  {}", problems.join("\n  ")))
    }
}

/// Unpacks every archive into one workspace, each crate's dependencies on
/// the others patched to the unpacked archives, and type-checks it with
/// every feature: a file an archive leaves out, or a dependency that is
/// only a path in the repository, fails here as it would for a user of the
/// published crates. The repository's lock file keeps the versions, and
/// the repository's target directory is used (with its `[profile.dev]`,
/// which an unpacked workspace lacks), so the dependencies clippy checked
/// are not checked again.
fn check_as_workspace(
    root: &Path,
    build: &Path,
    names: &[&str],
    version: &str,
) -> Result<(), String> {
    let unpacked = build.join("unpacked");
    fs::create_dir_all(&unpacked).map_err(|e| format!("{}: {e}", unpacked.display()))?;
    for name in names {
        let archive = build
            .join("package")
            .join(format!("{name}-{version}.crate"));
        run(Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&unpacked))?;
    }
    let members: Vec<String> = names.iter().map(|n| format!("\"{n}-{version}\"")).collect();
    let patches: String = names
        .iter()
        .map(|n| format!("{n} = {{ path = \"{n}-{version}\" }}\n"))
        .collect();
    let manifest = format!(
        "[workspace]\nresolver = \"2\"\nmembers = [{}]\n\n[patch.crates-io]\n{patches}",
        members.join(", ")
    );
    let write = |path: PathBuf, text: &[u8]| {
        fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    write(unpacked.join("Cargo.toml"), manifest.as_bytes())?;
    let lock = fs::read(root.join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    write(unpacked.join("Cargo.lock"), &lock)?;
    run(cargo()
        .args(["check", "--workspace", "--all-features", "--quiet"])
        .arg("--manifest-path")
        .arg(unpacked.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir(root))
        .args(["--config", "profile.dev.debug=\"line-tables-only\""])
        .args(["--config", "profile.dev.package.\"*\".debug=false"])
        .env("CARGO_INCREMENTAL", "0"))
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
