//! What the CLI's integration tests share: the built binaries, the demo
//! server in its HTTP mode, and a scripted HTTP server that refuses.

#![allow(dead_code, reason = "each test binary uses part of it")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The `mcpwire` binary under test.
pub(crate) fn mcpwire() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_mcpwire"));
    // No tokens, history or colour from the machine running the tests.
    cmd.env(
        "MCPWIRE_TOKEN_DIR",
        std::env::temp_dir().join("mcpwire-cli-tests-tokens"),
    )
    .env(
        "MCPWIRE_HISTORY",
        std::env::temp_dir().join("mcpwire-cli-tests-history"),
    )
    .env_remove("NO_COLOR")
    // Tables fit this width, whatever terminal runs the tests.
    .env("COLUMNS", "100");
    cmd
}

/// The demo server's binary, built (or found up to date) by cargo once per
/// test binary: a binary left from an older build is never run.
pub(crate) fn demo() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_BIN_EXE_mcpwire"))
                .parent()
                .expect("a target directory")
                .to_owned();
            let path = dir.join(format!(
                "mcpwire-demo-server{}",
                std::env::consts::EXE_SUFFIX
            ));
            if cfg!(windows) {
                // Under Wine there is no cargo to run: `cargo xtask cross`
                // builds the demo server before these tests.
                assert!(path.exists(), "{} is built first", path.display());
                return path;
            }
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "-p", "mcpwire-demo-server"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("cargo runs");
            assert!(status.success(), "the demo server builds");
            path
        })
        .clone()
}

/// The demo server's path as a string, for `-- CMD`.
pub(crate) fn demo_str() -> String {
    demo().to_str().expect("a UTF-8 path").to_owned()
}

/// The demo server in its Streamable HTTP mode on 127.0.0.1; killed on drop.
pub(crate) struct DemoHttp {
    child: Child,
    /// Its endpoint.
    pub(crate) url: String,
}

impl DemoHttp {
    /// Starts it and reads its URL.
    pub(crate) fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts it with `extra` options (`--token T`) and reads its URL.
    pub(crate) fn start_with(extra: &[&str]) -> Self {
        let mut child = Command::new(demo())
            .arg("--http")
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the demo server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("a URL");
        Self {
            child,
            url: line.trim().to_owned(),
        }
    }
}

impl Drop for DemoHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP server on 127.0.0.1 that answers every request with `status`
/// and `extra` headers (a server that needs authorization: 401 with a
/// challenge); returns its URL. The thread ends with the test process.
pub(crate) fn refusing_server(status: &'static str, extra: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("an address");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 16 << 10];
                let _ = stream.read(&mut buf);
                let body = "{}";
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\n{extra}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    format!("http://{addr}/mcp")
}

/// stdout of a finished command as text.
pub(crate) fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr of a finished command as text.
pub(crate) fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
