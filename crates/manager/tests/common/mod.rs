//! Shared set-up for the manager's tests: servers are the test-support
//! crate's `FakeServer`s on in-memory transports.
#![allow(dead_code, unreachable_pub, reason = "each test binary uses a subset")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcpwire_client::{Error as ClientError, TransportFactory};
use mcpwire_codec::jsonrpc::Message;
use mcpwire_manager::{Connector, Event};
use mcpwire_test_support::{FakeServer, MemoryPeer, memory_pair};
use mcpwire_transport::Transport;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

/// A generous bound for "it happens": only a failing test waits this long.
pub const LONG: Duration = Duration::from_secs(20);

/// Runs `f` with a deadline.
pub async fn within<F: std::future::IntoFuture>(f: F) -> F::Output {
    tokio::time::timeout(LONG, f)
        .await
        .expect("finished in time")
}

/// The fake server ends of a connector's transports, one per connection.
pub struct Peers(mpsc::UnboundedReceiver<MemoryPeer>);

impl Peers {
    /// The next connection's server.
    pub async fn next(&mut self) -> FakeServer {
        FakeServer::new(within(self.0.recv()).await.expect("a connection"))
    }

    /// Whether a connection was opened that nobody took yet.
    pub fn opened(&mut self) -> bool {
        self.0.try_recv().is_ok()
    }
}

/// A connector over in-memory pairs; the server ends arrive on `Peers`.
pub fn memory() -> (Connector, Peers) {
    let (tx, rx) = mpsc::unbounded_channel();
    let connector: Connector = Arc::new(move || {
        let tx = tx.clone();
        let factory: TransportFactory = Box::new(move || {
            let (t, p) = memory_pair(64);
            let _ = tx.send(p);
            Box::pin(async move { Ok(Box::new(t) as Box<dyn Transport>) })
        });
        Ok(factory)
    });
    (connector, Peers(rx))
}

/// A connector whose every transport fails to open, as an unreachable
/// server's does; counts the attempts.
pub fn refused() -> (Connector, Arc<AtomicUsize>) {
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = attempts.clone();
    let connector: Connector = Arc::new(move || {
        let counter = counter.clone();
        let factory: TransportFactory = Box::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let e = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
            Box::pin(async move { Err(ClientError::connect(e)) })
        });
        Ok(factory)
    });
    (connector, attempts)
}

/// An `initialize` result with the tools capability only (so starting
/// lists tools and nothing else).
pub fn tools_only() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": true}},
        "serverInfo": {"name": "fake", "version": "1.0.0"}
    })
}

/// A `tools/list` result naming `tools`.
pub fn tool_list(tools: &[&str]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t, "description": format!("does {t}"), "inputSchema": {"type": "object"}}))
        .collect();
    json!({ "tools": tools })
}

/// Answers the handshake (tools only) and the first `tools/list`.
pub async fn up(server: &mut FakeServer, tools: &[&str]) {
    server.handshake_with(tools_only()).await;
    let list = server.expect_request("tools/list").await;
    server.respond(&list.id, tool_list(tools)).await;
}

/// A call result whose text is `text`.
pub fn text(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// Serves `server` until the client closes: the handshake, `tools/list`
/// with `tools`, and every `tools/call` answered `"{label}:{tool}"`. Every
/// request's method (with the tool's name for calls) goes to the receiver.
pub fn serve(server: FakeServer, label: &str, tools: &[&str]) -> mpsc::UnboundedReceiver<String> {
    serve_listing(server, label, tool_list(tools))
}

/// [`serve`], answering `tools/list` with `list` as it is.
pub fn serve_listing(
    mut server: FakeServer,
    label: &str,
    list: Value,
) -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    let label = label.to_owned();
    tokio::spawn(async move {
        server.handshake_with(tools_only()).await;
        while let Some(message) = server.recv().await {
            let Message::Request(req) = message else {
                continue;
            };
            let params: Value = req
                .params
                .as_ref()
                .and_then(|p| p.deserialize().ok())
                .unwrap_or(Value::Null);
            match req.method.as_str() {
                "tools/list" => {
                    let _ = tx.send("tools/list".to_owned());
                    server.respond(&req.id, list.clone()).await;
                }
                "tools/call" => {
                    let tool = params["name"].as_str().unwrap_or_default().to_owned();
                    let _ = tx.send(format!("tools/call {tool}"));
                    server
                        .respond(&req.id, text(&format!("{label}:{tool}")))
                        .await;
                }
                other => {
                    let _ = tx.send(other.to_owned());
                    server
                        .respond_error(&req.id, -32601, "no such method")
                        .await;
                }
            }
        }
    });
    rx
}

/// Every event already published, without waiting.
pub fn drain(events: &mut broadcast::Receiver<Event>) -> Vec<Event> {
    let mut all = Vec::new();
    while let Ok(e) = events.try_recv() {
        all.push(e);
    }
    all
}

/// What `seen` received so far, without waiting.
pub fn seen(rx: &mut mpsc::UnboundedReceiver<String>) -> Vec<String> {
    let mut all = Vec::new();
    while let Ok(m) = rx.try_recv() {
        all.push(m);
    }
    all
}
