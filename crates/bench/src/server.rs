//! The benchmark server's HTTP mode, started for the length of one run.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running `mcpwire-bench-server http`; killed when dropped.
pub(crate) struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    /// Starts the server (`sse`: answers as SSE streams) and waits for the
    /// endpoint URL it prints.
    pub(crate) fn start(server: &Path, sse: bool) -> Result<Self, String> {
        let mut command = Command::new(server);
        command
            .arg("http")
            .stdout(Stdio::piped())
            .stdin(Stdio::null());
        if sse {
            command.arg("--sse");
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
        let mut line = String::new();
        let stdout = child.stdout.take().ok_or("no stdout")?;
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let url = line.trim().to_owned();
        if !url.starts_with("http://127.0.0.1:") {
            let _ = child.kill();
            return Err(format!("the server printed {url:?}, not its URL"));
        }
        Ok(HttpServer { child, url })
    }

    /// The endpoint, `http://127.0.0.1:<port>/mcp`.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
