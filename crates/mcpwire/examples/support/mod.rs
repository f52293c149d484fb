//! What the examples share: finding the demo server binary.

use std::path::{Path, PathBuf};

/// Finds the demo server binary, building it when run under cargo.
pub(crate) fn demo_server() -> Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(path) = std::env::var_os("MCPWIRE_DEMO_SERVER") {
        return Ok(path.into());
    }
    let name = format!("mcpwire-demo-server{}", std::env::consts::EXE_SUFFIX);
    // This example lives in target/<profile>/examples/; binaries one up.
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot locate the target directory")?;
    let candidate = profile_dir.join(&name);
    if candidate.exists() {
        return Ok(candidate);
    }
    if let Some(cargo) = std::env::var_os("CARGO") {
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let mut cmd = std::process::Command::new(cargo);
        cmd.args(["build", "-p", "mcpwire-demo-server"]);
        if release {
            cmd.arg("--release");
        }
        if cmd.status()?.success() && candidate.exists() {
            return Ok(candidate);
        }
    }
    Err(format!(
        "demo server not found at {}; run `cargo build -p mcpwire-demo-server` first",
        candidate.display()
    )
    .into())
}
