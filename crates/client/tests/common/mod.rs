//! Shared set-up for the client's fake-server tests.
#![allow(dead_code, unreachable_pub, reason = "each test binary uses a subset")]

use std::time::Duration;

use mcpwire_client::{Client, ClientConfig};
use mcpwire_test_support::{FakeServer, memory_pair};

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
