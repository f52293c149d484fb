//! What the CLI's integration tests share: the built binaries, the demo
//! server in its HTTP mode, a scripted HTTP server that refuses, and the
//! request reading and answer writing of the login and redaction tests'
//! scripted servers.

#![allow(dead_code, reason = "each test binary uses part of it")]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The demo server's binary (under Wine, `cargo xtask cross` builds it
/// first and names it in `MCPWIRE_DEMO_SERVER`).
pub(crate) use mcpwire_test_support::demo_server as demo;

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

/// A local server (`tests/servers/pinned_server.py`) whose tools and
/// prompts are those of a JSON file the test rewrites between runs, with a
/// pin file beside it; both removed on drop.
pub(crate) struct PinnedServer {
    dir: tempfile::TempDir,
}

impl PinnedServer {
    /// A server listing `listing` (`{"tools": [...], "prompts": [...]}`).
    pub(crate) fn new(listing: &serde_json::Value) -> Self {
        let server = Self {
            dir: tempfile::tempdir().expect("a temp dir"),
        };
        server.lists(listing);
        server
    }

    /// From now on the server lists `listing`.
    pub(crate) fn lists(&self, listing: &serde_json::Value) {
        std::fs::write(self.listing(), listing.to_string()).expect("the listing is written");
    }

    fn listing(&self) -> PathBuf {
        self.dir.path().join("listing.json")
    }

    /// The pin file.
    pub(crate) fn pins(&self) -> PathBuf {
        self.dir.path().join("pins.json")
    }

    /// The pin file's path as a string, for `--pins`.
    pub(crate) fn pins_str(&self) -> String {
        self.pins().to_str().expect("a UTF-8 path").to_owned()
    }

    /// The server's command line, for `-- CMD`.
    pub(crate) fn command(&self) -> Vec<String> {
        vec![
            "python3".to_owned(),
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/servers/pinned_server.py"
            )
            .to_owned(),
            self.listing().to_str().expect("a UTF-8 path").to_owned(),
        ]
    }

    /// The name its pins have in the pin file: its command line.
    pub(crate) fn key(&self) -> String {
        self.command().join(" ")
    }
}

/// A request as the scripted servers of the login and redaction tests
/// read it.
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) headers: HashMap<String, String>,
    pub(crate) body: Vec<u8>,
}

/// Reads one HTTP/1.1 request (its head and a `Content-Length` body).
pub(crate) fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

/// Writes an answer with a body and `connection: close`.
pub(crate) fn respond(
    stream: &mut TcpStream,
    status: &str,
    headers: &[(&str, String)],
    body: &str,
) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let _ = write!(stream, "{head}\r\n{body}");
}

/// What the Python SDK client scripts report after using the test fleet
/// through `mcpwire serve` (`tests/servers/serve_client_py*.py`): its tools listed, three
/// called, the slow one's progress, and an unknown tool refused.
pub(crate) fn assert_fleet_report(report: &serde_json::Value) {
    assert_eq!(report["serverInfo"], "mcpwire-serve", "{report}");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for name in ["one__echo", "two__add", "three__echo", "two__slow"] {
        assert!(tools.contains(&name), "{name} in {tools:?}");
    }
    assert_eq!(
        report["calls"],
        serde_json::json!({"one__echo": ["hi"], "two__add": ["5"], "three__echo": ["third"]})
    );
    assert_eq!(report["slow"], serde_json::json!(["done after 3 steps"]));
    assert_eq!(
        report["progress"],
        serde_json::json!([
            [1.0, 3.0, "step 1"],
            [2.0, 3.0, "step 2"],
            [3.0, 3.0, "step 3"]
        ])
    );
    let unknown = report["unknown"].as_str().unwrap();
    assert!(unknown.contains("nobody__nothing"), "{unknown}");
}

/// A real server or client that `cargo xtask servers` installed, under
/// `MCPWIRE_SERVERS_DIR` (default `target/mcp-servers`); fails the test
/// if it is missing.
pub(crate) fn installed(relative: &str) -> PathBuf {
    let dir = match std::env::var_os("MCPWIRE_SERVERS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"),
    };
    let path = dir.join(relative);
    assert!(
        path.exists(),
        "{} is not installed: run `cargo xtask servers` (or set MCPWIRE_SERVERS_DIR)",
        path.display()
    );
    path
}

/// A Claude Desktop file naming three demo servers: one, two and three.
pub(crate) fn fleet_config(dir: &Path) -> PathBuf {
    let entry = serde_json::json!({"command": demo()});
    let config = serde_json::json!({"mcpServers": {"one": entry, "two": entry, "three": entry}});
    let path = dir.join("claude_desktop_config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}
