//! Installs the real MCP servers the tests talk to, from the npm registry and
//! PyPI, into `target/mcp-servers/`. Versions are pinned so a run today and a
//! run next month talk to the same servers.
//!
//! Layout (tests find it through [`DIR_ENV`]):
//! - `npm/node_modules/.bin/mcp-server-everything`, `.../mcp-server-filesystem`
//! - `venv/bin/python` with the `mcp` SDK, and `venv/bin/mcp-server-time`

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd::run;

/// The environment variable that tells tests where the servers are.
pub(crate) const DIR_ENV: &str = "MCPWIRE_SERVERS_DIR";

const NPM_PACKAGES: &[&str] = &[
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
];
const PY_PACKAGES: &[&str] = &["mcp==2.3.0", "mcp-server-time==2026.10.19"];

/// Installs what is missing; returns the servers directory.
pub(crate) fn install(root: &Path) -> Result<PathBuf, String> {
    let dir = root.join("target").join("mcp-servers");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;

    let npm = dir.join("npm");
    let stamp = npm.join(".installed");
    let want = NPM_PACKAGES.join(" ");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(want.as_str()) {
        std::fs::create_dir_all(&npm).map_err(|e| e.to_string())?;
        if !npm.join("package.json").exists() {
            std::fs::write(npm.join("package.json"), "{\"private\":true}\n")
                .map_err(|e| e.to_string())?;
        }
        run(Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&npm)
            .args(NPM_PACKAGES))?;
        std::fs::write(&stamp, &want).map_err(|e| e.to_string())?;
    }

    let venv = dir.join("venv");
    let stamp = venv.join(".installed");
    let want = PY_PACKAGES.join(" ");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(want.as_str()) {
        if !venv.join("bin").join("python").exists() {
            run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        }
        run(Command::new(venv.join("bin").join("python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(PY_PACKAGES))?;
        std::fs::write(&stamp, &want).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}
