//! The tokio floor for stdio: the raw baseline's JSON-RPC lines, written and
//! read through tokio's child pipes on the bench's runtime, with no MCP
//! library. It measures what any tokio client pays for the runtime alone
//! (waking the caller from the reactor), so a client's W2 latency can be
//! read against it as well as against the blocking raw pipe. Sequential
//! workloads only.

use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Mutex;

use crate::raw_wire::{INITIALIZE, INITIALIZED, echo_request, parse_answer};
use crate::workload::Caller;

struct Pipes {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    request: Vec<u8>,
    next_id: u64,
}

impl Pipes {
    async fn write_line(&mut self, frame: &[u8]) -> Result<(), String> {
        self.stdin.write_all(frame).await.map_err(|e| e.to_string())
    }

    async fn read_answer(&mut self) -> Result<(u64, usize), String> {
        self.line.clear();
        let n = self
            .stdout
            .read_until(b'\n', &mut self.line)
            .await
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed its stdout".into());
        }
        parse_answer(&self.line)
    }
}

/// A connected bare-tokio pipe. The mutex is never contended: the
/// workloads it runs are sequential.
#[derive(Clone)]
pub(crate) struct RawTokio {
    pipes: Arc<Mutex<Pipes>>,
    child: Arc<Mutex<Option<Child>>>,
}

impl RawTokio {
    /// Spawns `server stdio` and completes the handshake.
    pub(crate) async fn stdio(server: &Path) -> Result<Self, String> {
        let mut child = Command::new(server)
            .arg("stdio")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut pipes = Pipes {
            stdin: child.stdin.take().ok_or("stdin")?,
            stdout: BufReader::with_capacity(64 << 10, child.stdout.take().ok_or("stdout")?),
            line: Vec::new(),
            request: Vec::new(),
            next_id: 1,
        };
        pipes.write_line(&[INITIALIZE, b"\n"].concat()).await?;
        pipes.read_answer().await?;
        pipes.write_line(&[INITIALIZED, b"\n"].concat()).await?;
        Ok(RawTokio {
            pipes: Arc::new(Mutex::new(pipes)),
            child: Arc::new(Mutex::new(Some(child))),
        })
    }
}

impl Caller for RawTokio {
    async fn echo(&self, message: &str) -> Result<usize, String> {
        let mut pipes = self.pipes.lock().await;
        let p = &mut *pipes;
        p.request.clear();
        echo_request(&mut p.request, p.next_id, message);
        p.request.push(b'\n');
        p.next_id += 1;
        let request = std::mem::take(&mut p.request);
        let written = p.write_line(&request).await;
        p.request = request;
        written?;
        Ok(p.read_answer().await?.1)
    }

    async fn close(self) {
        if let Some(mut child) = self.child.lock().await.take() {
            drop(self.pipes);
            let _ = child.wait().await;
        }
    }
}
