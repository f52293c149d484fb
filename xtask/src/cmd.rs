//! Running commands: from the workspace root, each echoed before it runs.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (the parent of this crate's directory).
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Runs `cmd` from the workspace root, echoing it first; an error unless it
/// exits with status 0.
pub(crate) fn run(cmd: &mut Command) -> Result<(), String> {
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

pub(crate) fn display(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// The variable that hands tests a demo server already built
/// (`mcpwire_test_support::DEMO_SERVER_ENV`; xtask does not link that crate).
pub(crate) const DEMO_SERVER_ENV: &str = "MCPWIRE_DEMO_SERVER";

/// Where cargo builds: `CARGO_TARGET_DIR`, else `target/` in the workspace.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

/// Builds every program of the workspace with every feature, and returns
/// the directory that holds them. The commands that run our programs
/// (`faults`, `conformance`, `interop`) all build through this one
/// selection, so in `ci` the dependencies are compiled once for them all
/// (each with a selection of its own, two of them took about 90 s).
///
/// The tests are in the selection too (`--tests`): their dev-dependencies
/// take part in feature resolution, so the libraries are the ones `ci`'s
/// test build already compiled. Programs alone resolved features without
/// them: 8 dependencies (tokio among them) came out different, and those,
/// what is built on them and the whole workspace were compiled again (106 s
/// of CI). With the tests, only the 6 programs no test runs are left.
pub(crate) fn build_programs(root: &Path) -> Result<PathBuf, String> {
    run(cargo().args([
        "build",
        "--quiet",
        "--workspace",
        "--all-features",
        "--bins",
        "--tests",
    ]))?;
    Ok(target_dir(root).join("debug"))
}

pub(crate) fn cargo() -> Command {
    Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}
