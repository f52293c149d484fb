//! A message over the configured maximum ends the call with a typed error at
//! once, in either direction: never a hang, never unbounded buffering.

mod common;

use common::{LONG, within};
use mcpwire_client::{Client, ClientConfig, ErrorKind};
use mcpwire_transport::{CloseReason, IoConfig, IoTransport};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

const MAX: usize = 4096;

/// A byte-level peer: reads request lines, writes whatever it is told.
struct Peer {
    lines: BufReader<ReadHalf<DuplexStream>>,
    out: WriteHalf<DuplexStream>,
}

impl Peer {
    async fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = within(self.lines.read_line(&mut line)).await.expect("read");
        assert!(n > 0, "the client closed the pipe");
        serde_json::from_str(&line).expect("a JSON line")
    }

    async fn write(&mut self, bytes: &[u8]) {
        self.out.write_all(bytes).await.expect("write");
        self.out.flush().await.expect("flush");
    }

    async fn answer(&mut self, id: &Value, result: Value) {
        let mut line = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .expect("encode");
        line.push(b'\n');
        self.write(&line).await;
    }
}

/// A client over an in-memory byte stream whose frames are capped at `MAX`,
/// after the handshake.
async fn connected() -> (Client, Peer) {
    let (transport, theirs) = IoTransport::pair(IoConfig::new().max_frame_len(MAX));
    let (read, out) = tokio::io::split(theirs);
    let mut peer = Peer {
        lines: BufReader::new(read),
        out,
    };
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    let init = peer.read().await;
    assert_eq!(init["method"], "initialize");
    // No tools capability: `tools/call` goes out without a `tools/list` first.
    let result = json!({
        "protocolVersion": init["params"]["protocolVersion"],
        "capabilities": {},
        "serverInfo": {"name": "limits", "version": "0"}
    });
    peer.answer(&init["id"], result).await;
    assert_eq!(peer.read().await["method"], "notifications/initialized");
    let client = within(connect).await.expect("task").expect("connected");
    (client, peer)
}

#[tokio::test]
async fn an_oversized_answer_fails_the_call_with_frame_too_long() {
    let (client, mut peer) = connected().await;
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .request::<_, Value>("tools/call", Some(&json!({"name": "echo"})))
                .await
        }
    });
    let request = peer.read().await;
    // Twice the maximum and no line end yet: the client must give up on the
    // frame once it passes the maximum, not wait for the rest of it.
    let head = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"text":""#,
        request["id"]
    );
    let mut frame = head.into_bytes();
    frame.resize(2 * MAX, b'x');
    peer.write(&frame).await;
    let err = tokio::time::timeout(LONG, call)
        .await
        .expect("the call ends, it does not hang")
        .expect("task")
        .expect_err("an oversized answer is an error");
    assert_eq!(err.kind(), ErrorKind::Closed, "{err}");
    assert!(
        matches!(err.close_reason(), Some(CloseReason::FrameTooLong { max }) if *max == MAX),
        "close reason: {:?}",
        err.close_reason()
    );
}

#[tokio::test]
async fn an_oversized_request_fails_at_once_and_the_connection_stays_usable() {
    let (client, mut peer) = connected().await;
    let big = json!({"name": "echo", "arguments": {"message": "y".repeat(2 * MAX)}});
    let err = within(client.request::<_, Value>("tools/call", Some(&big)))
        .await
        .expect_err("a request over the maximum is refused");
    assert_eq!(err.kind(), ErrorKind::Transport, "{err}");
    // Nothing of it reached the peer: the next line it reads is the ping.
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let request = peer.read().await;
    assert_eq!(request["method"], "ping");
    peer.answer(&request["id"], json!({})).await;
    within(ping)
        .await
        .expect("task")
        .expect("the connection still works");
}
