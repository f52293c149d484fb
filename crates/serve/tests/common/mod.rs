//! Shared set-up: a fleet of in-memory upstream servers behind a
//! [`Server`], and a raw client that writes and reads JSON lines.
#![allow(dead_code, unreachable_pub, reason = "each test binary uses a subset")]

pub mod raw_http;

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mcpwire_client::TransportFactory;
use mcpwire_codec::jsonrpc::{
    ErrorCode, ErrorObject, Message, encode_error_response, encode_notification, encode_result,
};
use mcpwire_manager::{Connector, Manager, ServerSpec};
use mcpwire_serve::{ServeOptions, Server};
use mcpwire_test_support::{MemoryPeer, memory_pair};
use mcpwire_transport::{IoConfig, IoTransport, Transport};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc;

/// A generous bound for "it happens": only a failing test waits this long.
pub const LONG: Duration = Duration::from_secs(20);

/// Runs `f` with a deadline.
pub async fn within<F: std::future::IntoFuture>(f: F) -> F::Output {
    tokio::time::timeout(LONG, f)
        .await
        .expect("finished in time")
}

/// What the upstream servers saw: `"{label} {method} {detail}"` lines.
pub type Seen = mpsc::UnboundedReceiver<String>;

/// One upstream server: answers the handshake, lists `tools`, answers
/// each call `"{label}:{tool}"`. The tool `slow` sends one progress
/// notification under the token the call carried, then never answers;
/// a `notifications/cancelled` it gets is reported as
/// `"{label} cancelled {requestId}"`. `tools/list_changed` is sent when the
/// test says so through the returned sender. A tool `log_{level}` sends a
/// log message at that level (logger `x`) before its answer. A tool
/// `nudge` sends one more progress notification under the last `slow`
/// call's token, then answers.
fn upstream(
    mut peer: MemoryPeer,
    label: String,
    tools: Vec<String>,
    seen: mpsc::UnboundedSender<String>,
    mut relist: mpsc::UnboundedReceiver<Vec<String>>,
) {
    tokio::spawn(async move {
        let mut tools = tools;
        let mut slow_token = Value::Null;
        loop {
            let frame = tokio::select! {
                frame = peer.recv_frame() => frame,
                Some(new) = relist.recv() => {
                    tools = new;
                    send(&peer, notification("notifications/tools/list_changed", json!({}))).await;
                    continue;
                }
            };
            let Some(frame) = frame else { return };
            let message = Message::parse(frame).expect("the manager sends JSON-RPC");
            match message {
                Message::Request(req) => {
                    let params: Value = req
                        .params
                        .as_ref()
                        .map(|p| p.deserialize().unwrap())
                        .unwrap_or(Value::Null);
                    let result = match req.method.as_str() {
                        "initialize" => json!({
                            "protocolVersion": "2025-11-25",
                            "capabilities": {"tools": {"listChanged": true}},
                            "serverInfo": {"name": label, "version": "1.0.0"}
                        }),
                        "tools/list" => {
                            let list: Vec<Value> = tools
                                .iter()
                                .map(|t| json!({"name": t, "description": format!("{label}'s {t}"), "inputSchema": {"type": "object"}}))
                                .collect();
                            json!({"tools": list})
                        }
                        "tools/call" => {
                            let tool = params["name"].as_str().unwrap_or_default().to_owned();
                            let _ =
                                seen.send(format!("{label} call {tool} {}", params["arguments"]));
                            if let Some(level) = tool.strip_prefix("log_") {
                                send(&peer, notification("notifications/message", json!({"level": level, "logger": "x", "data": format!("{label} says {level}")}))).await;
                            }
                            if tool == "slow" {
                                let token = params["_meta"]["progressToken"].clone();
                                slow_token = token.clone();
                                send(&peer, notification("notifications/progress", json!({"progressToken": token, "progress": 1, "total": 4, "message": "a quarter"}))).await;
                                continue;
                            }
                            if tool == "nudge" {
                                send(&peer, notification("notifications/progress", json!({"progressToken": slow_token, "progress": 2, "total": 4, "message": "a nudge"}))).await;
                            }
                            json!({"content": [{"type": "text", "text": format!("{label}:{tool}")}]})
                        }
                        // A server of the 2025 era: `server/discover`
                        // (the client's probe) and anything else unknown.
                        other => {
                            if other != "server/discover" {
                                let _ = seen.send(format!("{label} {other}"));
                            }
                            let mut buf = BytesMut::new();
                            let error =
                                ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no such method");
                            encode_error_response(&mut buf, Some(&req.id), &error).unwrap();
                            send(&peer, buf.freeze()).await;
                            continue;
                        }
                    };
                    let mut buf = BytesMut::new();
                    encode_result(&mut buf, &req.id, &result).unwrap();
                    send(&peer, buf.freeze()).await;
                }
                Message::Notification(n) if n.method == "notifications/cancelled" => {
                    let params: Value = n.params.unwrap().deserialize().unwrap();
                    let _ = seen.send(format!("{label} cancelled {}", params["requestId"]));
                }
                _ => {}
            }
        }
    });
}

fn notification(method: &str, params: Value) -> Bytes {
    let mut buf = BytesMut::new();
    encode_notification(&mut buf, method, Some(&params)).unwrap();
    buf.freeze()
}

async fn send(peer: &MemoryPeer, frame: Bytes) {
    let _ = peer.send_frame(frame).await;
}

/// A fleet of upstream servers, connected.
pub struct Fleet {
    pub manager: Manager,
    pub seen: Seen,
    /// Per server, in order: send a new tool list (and `list_changed`).
    pub relist: Vec<mpsc::UnboundedSender<Vec<String>>>,
}

/// Builds and connects a fleet: each `(label, tools)` is one server.
pub async fn fleet(servers: &[(&str, &[&str])]) -> Fleet {
    let (seen_tx, seen) = mpsc::unbounded_channel();
    let mut builder = Manager::builder().debounce(Duration::from_millis(10));
    let mut relist = Vec::new();
    for (label, tools) in servers {
        let (relist_tx, relist_rx) = mpsc::unbounded_channel();
        relist.push(relist_tx);
        // The first connection gets the test's receiver; a later one (a
        // reconnection) a closed one.
        let relist_rx = Arc::new(std::sync::Mutex::new(Some(relist_rx)));
        let label = (*label).to_owned();
        let tools: Vec<String> = tools.iter().map(|t| (*t).to_owned()).collect();
        let seen_tx = seen_tx.clone();
        let name = label.clone();
        let connector: Connector = Arc::new(move || {
            let (label, tools, seen_tx) = (label.clone(), tools.clone(), seen_tx.clone());
            let relist_rx = relist_rx.clone();
            let factory: TransportFactory = Box::new(move || {
                let (t, p) = memory_pair(64);
                let rx = relist_rx
                    .lock()
                    .unwrap()
                    .take()
                    .unwrap_or_else(|| mpsc::unbounded_channel().1);
                upstream(p, label.clone(), tools.clone(), seen_tx.clone(), rx);
                Box::pin(async move { Ok(Box::new(t) as Box<dyn Transport>) })
            });
            Ok(factory)
        });
        builder = builder.server(ServerSpec::with_connector(name, connector));
    }
    let manager = builder.build().unwrap();
    let report = within(manager.connect_all()).await.unwrap();
    assert!(report.all_connected(), "{report:?}");
    Fleet {
        manager,
        seen,
        relist,
    }
}

/// Serves `manager` to a raw client over an in-memory pipe.
pub fn serve_raw(manager: &Manager, options: ServeOptions) -> Raw {
    let (transport, theirs) = IoTransport::pair(IoConfig::new());
    let server = Server::with_options(manager.clone(), options);
    let served = tokio::spawn(async move { server.serve(transport).await });
    let (read, write) = tokio::io::split(theirs);
    Raw {
        read: BufReader::new(read),
        write,
        served,
    }
}

/// A client that writes JSON lines and reads them back, for exact checks
/// of what the server sends.
pub struct Raw {
    read: BufReader<ReadHalf<DuplexStream>>,
    write: WriteHalf<DuplexStream>,
    pub served: tokio::task::JoinHandle<Result<(), mcpwire_serve::ServeError>>,
}

impl Raw {
    /// Sends one line as is.
    pub async fn send_line(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    /// Sends one message.
    pub async fn send(&mut self, message: Value) {
        self.send_line(&message.to_string()).await;
    }

    /// The next message the server sent.
    pub async fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = within(self.read.read_line(&mut line)).await.unwrap();
        assert!(n > 0, "the server closed");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Sends request `id` and returns its answer, skipping notifications.
    pub async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self.recv().await;
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    }

    /// The handshake, asking for `version`; returns the `initialize` result.
    pub async fn initialize(&mut self, version: &str) -> Value {
        let answer = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        answer["result"].clone()
    }

    /// Closes our side: the session should end.
    pub async fn close(mut self) -> Result<(), mcpwire_serve::ServeError> {
        self.write.shutdown().await.unwrap();
        drop(self.write);
        drop(self.read);
        within(self.served).await.unwrap()
    }
}

/// What the upstream servers saw so far, waiting for at least `n` lines.
pub async fn seen_at_least(seen: &mut Seen, n: usize) -> Vec<String> {
    let mut all = Vec::new();
    while all.len() < n {
        all.push(within(seen.recv()).await.expect("a line"));
    }
    while let Ok(line) = seen.try_recv() {
        all.push(line);
    }
    all
}
