//! Shared set-up for the client's fake-server tests.
#![allow(dead_code, unreachable_pub, reason = "each test binary uses a subset")]

use std::time::Duration;

use mcpwire_client::{Client, ClientConfig, TransportFactory};
use mcpwire_test_support::{FakeServer, MemoryPeer, memory_pair};
use mcpwire_transport::Transport;
use tokio::sync::mpsc;

/// A generous bound for "it happens": only a failing test waits this long.
pub const LONG: Duration = Duration::from_secs(20);

/// A client connected to a fake server that completed the handshake.
pub async fn connected(config: ClientConfig) -> (Client, FakeServer) {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, config));
    server.handshake().await;
    let client = tokio::time::timeout(LONG, connect)
        .await
        .expect("connect in time")
        .expect("task")
        .expect("connected");
    (client, server)
}

/// Runs `f` with a deadline.
pub async fn within<F: std::future::IntoFuture>(f: F) -> F::Output {
    tokio::time::timeout(LONG, f)
        .await
        .expect("finished in time")
}

/// A factory that makes a fresh in-memory pair per connection attempt and
/// hands the peer to the test.
pub fn factory() -> (TransportFactory, mpsc::UnboundedReceiver<MemoryPeer>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let f: TransportFactory = Box::new(move || {
        let (t, p) = memory_pair(16);
        let _ = tx.send(p);
        Box::pin(async move { Ok(Box::new(t) as Box<dyn Transport>) })
    });
    (f, rx)
}

/// Answers the `server/discover` probe `server` is sent next as a stateless
/// server (2026-07-28) whose tools do not announce their changes, so no
/// listening stream opens.
pub async fn answer_probe_as_stateless(server: &mut FakeServer) {
    let probe = server.expect_request("server/discover").await;
    server
        .respond(
            &probe.id,
            serde_json::json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "stateless", "version": "2"}},
                "ttlMs": 0,
                "cacheScope": "public"
            }),
        )
        .await;
}
