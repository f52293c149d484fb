//! The demo server writes through tokio's own `stdout()` (a single-waker
//! write half backed by a blocking thread) into a real pipe. Issue 18: an
//! answer could sit unsent until the next request arrived. Each test here
//! sends one request at a time and waits, bounded, for its answer before
//! the next, so a stranded answer is a failure, not a delay.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// How long one answer may take before it counts as stranded.
const ROUND_TRIP: Duration = Duration::from_secs(10);

const SERVER: &str = env!("CARGO_BIN_EXE_mcpwire-demo-server");

/// The issue's own reproduction, checked in next to this file: a Python
/// client (standard library only) sends 10,000 sequential pings.
#[test]
fn the_python_ping_loop_gets_10000_answers() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ping_loop.py");
    let out = std::process::Command::new("python3")
        .args([script, SERVER, "10000"])
        .output()
        .expect("python3 runs (it is part of the test toolchain, as for the stdio tests)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim() == "ok 10000",
        "{}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    /// The demo server, initialized. `read_capacity` is how much one read of
    /// its stdout takes.
    async fn start(read_capacity: usize) -> Peer {
        let mut child = tokio::process::Command::new(SERVER)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the demo server starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::with_capacity(read_capacity, child.stdout.take().unwrap());
        let mut peer = Peer {
            child,
            stdin,
            stdout,
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "ping_loop", "version": "0"}}});
        peer.call(&init, Duration::ZERO).await;
        peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        peer
    }

    async fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).await.expect("the server reads");
    }

    /// Sends `request` and returns its answer, read in pieces of the read
    /// capacity with `pause` after each; panics if it takes longer than
    /// [`ROUND_TRIP`].
    async fn call(&mut self, request: &Value, pause: Duration) -> Value {
        self.send(request).await;
        let read = async {
            let mut line = Vec::new();
            loop {
                let chunk = self.stdout.fill_buf().await.expect("read");
                assert!(!chunk.is_empty(), "the server closed its stdout");
                let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                    Some(at) => (at + 1, true),
                    None => (chunk.len(), false),
                };
                line.extend_from_slice(&chunk[..take]);
                self.stdout.consume(take);
                if done {
                    return line;
                }
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
            }
        };
        let line = tokio::time::timeout(ROUND_TRIP, read)
            .await
            .unwrap_or_else(|_| panic!("no answer to {} (stranded)", request["id"]));
        let answer: Value = serde_json::from_slice(&line).expect("a JSON answer");
        assert_eq!(answer["id"], request["id"], "{answer}");
        answer
    }
}

/// Thousands of pings from Rust, each bounded on its own.
#[tokio::test]
async fn tokio_stdout_in_a_child_answers_every_sequential_ping() {
    let mut peer = Peer::start(64 << 10).await;
    for i in 1..=5_000 {
        let answer = peer
            .call(
                &json!({"jsonrpc": "2.0", "id": i, "method": "ping"}),
                Duration::ZERO,
            )
            .await;
        assert_eq!(answer["result"], json!({}));
    }
    peer.child.kill().await.unwrap();
}

/// Answers larger than the pipe, read slowly: the server's stdout pipe is
/// full while each answer is written, so its blocking writes wait on the
/// reader, and small answers in between take the direct path.
#[tokio::test]
async fn tokio_stdout_into_a_full_pipe_answers_every_sequential_call() {
    let mut peer = Peer::start(4096).await;
    for i in 1..=400 {
        let len = [10, 3_000, 100_000, 70_000][i % 4];
        let message = "m".repeat(len);
        let answer = peer
            .call(
                &json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": message}}}),
                Duration::from_micros(100),
            )
            .await;
        assert_eq!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .map(str::len),
            Some(len)
        );
        let ping = peer
            .call(
                &json!({"jsonrpc": "2.0", "id": format!("p{i}"), "method": "ping"}),
                Duration::ZERO,
            )
            .await;
        assert_eq!(ping["result"], json!({}));
    }
    peer.child.kill().await.unwrap();
}
