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

/// How many TCP connections the benchmark server behind `url` has accepted,
/// this query's own included (`GET /connections`, on a connection of its
/// own, closed after the answer).
pub(crate) async fn connections_accepted(url: &str) -> Result<u64, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .ok_or_else(|| format!("not the server's URL: {url}"))?;
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("cannot reach {addr}: {e}"))?;
    let request = format!("GET /connections HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .await
        .map_err(|e| e.to_string())?;
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or("no answer from /connections")?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!("/connections answered {head:?}"));
    }
    body.trim()
        .parse()
        .map_err(|_| format!("/connections answered {body:?}, not a count"))
}
