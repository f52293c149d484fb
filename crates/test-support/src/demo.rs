//! The demo server's executable, for tests that spawn it.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// What names a demo server already built: `cargo xtask ci` sets it to the
/// one its test build made, `cargo xtask cross` to the Windows one.
pub const DEMO_SERVER_ENV: &str = "MCPWIRE_DEMO_SERVER";

/// The demo server's executable, once per test program: the one
/// [`DEMO_SERVER_ENV`] names when it is set, else the one cargo builds (or
/// finds up to date) for this build's target directory. cargo names the
/// executable it made, so neither a default `target/debug` nor a stale
/// binary left there is assumed.
///
/// Under Windows (Wine) there is no cargo to run, so the variable must be
/// set.
pub fn demo_server() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(path) = std::env::var_os(DEMO_SERVER_ENV) {
            return PathBuf::from(path);
        }
        if cfg!(windows) {
            panic!(
                "{DEMO_SERVER_ENV} names the demo server built for Windows (cargo xtask cross \
                 sets it)"
            );
        }
        build()
    })
    .clone()
}

/// Builds the demo server with cargo and returns the executable it names.
fn build() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "-p",
            "mcpwire-demo-server",
            "--bin",
            "mcpwire-demo-server",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(Stdio::inherit())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "the demo server builds");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|m| {
            let bin =
                m["reason"] == "compiler-artifact" && m["target"]["name"] == "mcpwire-demo-server";
            m["executable"].as_str().filter(|_| bin).map(PathBuf::from)
        })
        .expect("cargo names the demo server's executable")
}
