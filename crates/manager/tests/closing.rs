//! A call that comes while a server is being disconnected, held here
//! because mutation testing (`cargo xtask mutants manager`) found it
//! unguarded (`client_for_call` in `src/start.rs`): while the client
//! closes, the server has no client but still shows the health it had,
//! which may carry an error without being a failure (degraded by a failed
//! relisting). A call then is told the server is not connected, not that
//! it failed.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use common::*;
use mcpwire_client::TransportFactory;
use mcpwire_manager::{Connector, Error, Manager, ServerSpec};
use mcpwire_test_support::{FakeServer, MemoryPeer, MemoryTransport, memory_pair};
use mcpwire_transport::{Active, FrameSender, Transport, TransportEvent, TransportInfo};
use serde_json::json;
use tokio::sync::{Semaphore, mpsc};

type Gate = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A memory transport whose close waits until the test opens the gate, so
/// that the moment between a client's removal and its end can be looked at.
struct SlowClose {
    inner: MemoryTransport,
    gate: Option<Gate>,
}

impl Transport for SlowClose {
    fn sender(&self) -> FrameSender {
        self.inner.sender()
    }

    fn set_active(&mut self, active: Active) {
        self.inner.set_active(active);
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        self.inner.poll_event(cx)
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(gate) = &mut self.gate {
            std::task::ready!(gate.as_mut().poll(cx));
            self.gate = None;
        }
        self.inner.poll_close(cx)
    }

    fn info(&self) -> TransportInfo {
        self.inner.info()
    }
}

/// A connector of [`SlowClose`] transports; the server ends arrive on
/// the receiver, and each close waits for a permit of the returned semaphore.
fn slow_close() -> (
    Connector,
    mpsc::UnboundedReceiver<MemoryPeer>,
    Arc<Semaphore>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    let permits = gate.clone();
    let connector: Connector = Arc::new(move || {
        let tx = tx.clone();
        let gate = gate.clone();
        let factory: TransportFactory = Box::new(move || {
            let (inner, peer) = memory_pair(64);
            let _ = tx.send(peer);
            let gate = gate.clone();
            let wait: Gate = Box::pin(async move {
                let _ = gate.acquire_owned().await;
            });
            let t = SlowClose {
                inner,
                gate: Some(wait),
            };
            Box::pin(async move { Ok(Box::new(t) as Box<dyn Transport>) })
        });
        Ok(factory)
    });
    (connector, rx, permits)
}

#[tokio::test]
async fn a_call_while_a_degraded_server_disconnects_is_told_it_is_not_connected() {
    let (connector, mut peers, gate) = slow_close();
    let manager = Manager::builder()
        .server(
            ServerSpec::with_connector("a", connector)
                .connect(mcpwire_manager::ConnectPolicy::Manual),
        )
        .debounce(Duration::from_millis(10))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect("a").await }
    });
    let mut server = FakeServer::new(within(peers.recv()).await.expect("a connection"));
    up(&mut server, &["echo"]).await;
    within(connect).await.unwrap().unwrap();

    // Degraded: a relisting fails, the client stays.
    let mut health = manager.watch_health("a").unwrap();
    server
        .notify("notifications/tools/list_changed", json!({}))
        .await;
    let r = server.expect_request("tools/list").await;
    server.respond_error(&r.id, -32603, "Internal error").await;
    within(health.wait_for(|h| !h.is_ready())).await.unwrap();
    assert!(manager.health("a").unwrap().error().is_some());

    // Disconnecting: the client is gone, its close not finished.
    let disconnect = tokio::spawn({
        let m = manager.clone();
        async move { m.disconnect("a").await }
    });
    within(async {
        while manager.client("a").is_some() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(!disconnect.is_finished(), "the close did not wait");
    let still = manager.health("a").unwrap();
    assert!(still.error().is_some() && !still.is_failed(), "{still:?}");

    let err = within(manager.call_tool("a__echo", &json!({})))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotConnected { .. }), "{err:?}");

    gate.add_permits(1);
    within(disconnect).await.unwrap().unwrap();
    assert!(matches!(
        manager.health("a").unwrap(),
        mcpwire_manager::Health::Disconnected
    ));
    manager.close().await;
}
