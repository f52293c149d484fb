//! Installs the real MCP servers the tests talk to, from the npm registry and
//! PyPI, into `target/mcp-servers/`. Versions are pinned so a run today and a
//! run next month talk to the same servers.
//!
//! Layout (tests find it through [`DIR_ENV`]):
//! - `npm/node_modules/.bin/mcp-server-everything`, `.../mcp-server-filesystem`,
//!   and the TypeScript SDKs the interop scripts `require` (through
//!   `NODE_PATH`): `@modelcontextprotocol/sdk` (1.x) and the 2.x server
//!   packages `@modelcontextprotocol/server` and `@modelcontextprotocol/node`
//! - `venv/bin/python` with the `mcp` SDK 2.x and `fastmcp`, and
//!   `venv/bin/mcp-server-time`
//! - `venv-mcp1/bin/python` with the `mcp` SDK 1.x and its `ws` extra: the
//!   interop matrix's Python SDK 1.x server, and the last SDK line with a
//!   WebSocket server (`mcp.server.websocket`; mcp 2.x dropped it), for the
//!   WebSocket transport's tests
//!
//! The rmcp server is a crate of the workspace (`crates/interop-rmcp-server`),
//! built by `cargo xtask interop`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd::run;

/// The environment variable that tells tests where the servers are.
pub(crate) const DIR_ENV: &str = "MCPWIRE_SERVERS_DIR";

const NPM_PACKAGES: &[&str] = &[
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/sdk@1.32.2",
    "@modelcontextprotocol/server@2.4.0",
    "@modelcontextprotocol/node@2.1.2",
];
/// fastmcp serves its own rows of the interop matrix and the authorization
/// cases: its in-memory OAuth provider, static bearer tokens and JWTs.
const PY_PACKAGES: &[&str] = &[
    "mcp==2.3.0",
    "mcp-server-time==2026.10.19",
    "fastmcp==4.2.3",
];
/// In a virtualenv of their own: mcp 1.x and 2.x cannot share one.
const PY_MCP1_PACKAGES: &[&str] = &["mcp[ws]==1.30.0"];

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

    python_venv(&dir.join("venv"), PY_PACKAGES)?;
    python_venv(&dir.join("venv-mcp1"), PY_MCP1_PACKAGES)?;
    Ok(dir)
}

/// Installs `packages` into the virtualenv at `venv` unless its stamp says
/// they are there already.
fn python_venv(venv: &Path, packages: &[&str]) -> Result<(), String> {
    let stamp = venv.join(".installed");
    let want = packages.join(" ");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) {
        return Ok(());
    }
    if !venv.join("bin").join("python").exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    }
    run(Command::new(venv.join("bin").join("python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(packages))?;
    std::fs::write(&stamp, &want).map_err(|e| e.to_string())
}
