//! Handshake, version negotiation and state transitions against a fake server.

mod common;

use common::{LONG, within};
use mcpwire_client::{
    Client, ClientConfig, ConnectionState, ErrorKind, HandlerError, RequestContext,
    types::{ElicitParams, ElicitResult, ListRootsResult},
};
use mcpwire_test_support::{FakeServer, initialize_result, memory_pair};
use serde_json::json;

#[tokio::test]
async fn each_supported_version_is_accepted_and_the_session_is_exposed() {
    for version in mcpwire_client::SUPPORTED_VERSIONS {
        let (transport, peer) = memory_pair(8);
        let mut server = FakeServer::new(peer);
        let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
        let params = server.handshake_with(initialize_result(version)).await;
        assert_eq!(params["protocolVersion"], "2025-11-25");
        assert_eq!(params["clientInfo"]["name"], "mcpwire");
        assert_eq!(
            params["capabilities"],
            json!({}),
            "no handlers, no capabilities"
        );
        let client = within(connect).await.unwrap().unwrap();
        assert_eq!(client.protocol_version().as_deref(), Some(*version));
        assert_eq!(client.server_info().unwrap().name, "fake");
        assert_eq!(client.instructions().as_deref(), Some("be nice"));
        let caps = client.server_capabilities().unwrap();
        assert_eq!(caps.resources.unwrap().subscribe, Some(true));
        client.close().await;
        server.expect_closed().await;
    }
}

#[tokio::test]
async fn capabilities_follow_the_configured_handlers() {
    let config = ClientConfig::new()
        .roots(|_cx: RequestContext| async {
            Ok::<ListRootsResult, HandlerError>(
                serde_json::from_value(json!({"roots": []})).unwrap(),
            )
        })
        .roots_list_changed(true)
        .elicitation(|_p: ElicitParams, _cx: RequestContext| async {
            Ok::<_, HandlerError>(ElicitResult::new(
                mcpwire_client::types::ElicitAction::Decline,
                None,
            ))
        })
        .elicitation_url(true);
    let (transport, peer) = memory_pair(8);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, config));
    let params = server.handshake().await;
    assert_eq!(
        params["capabilities"],
        json!({"roots": {"listChanged": true}, "elicitation": {"form": {}, "url": {}}})
    );
    within(connect).await.unwrap().unwrap();
}

#[tokio::test]
async fn an_unsupported_version_is_a_clear_error_and_the_client_disconnects() {
    let (transport, peer) = memory_pair(8);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    let init = server.expect_request("initialize").await;
    server
        .respond(&init.id, initialize_result("1999-01-01"))
        .await;
    let err = within(connect).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnsupportedVersion);
    assert_eq!(err.server_version(), Some("1999-01-01"));
    assert!(err.to_string().contains("2025-11-25"), "{err}");
    // No `initialized`: the client closes instead.
    server.expect_closed().await;
}

#[tokio::test]
async fn an_initialize_error_fails_connect_with_the_server_error() {
    let (transport, peer) = memory_pair(8);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    let init = server.expect_request("initialize").await;
    server.respond_error(&init.id, -32602, "bad version").await;
    let err = within(connect).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(err.server_error().unwrap().message, "bad version");
}

#[tokio::test]
async fn a_crash_during_the_handshake_reports_the_stderr_tail() {
    let (transport, peer) = memory_pair(8);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    server.expect_request("initialize").await;
    server.crash(2, &["fatal: no config"]).await;
    let err = within(connect).await.unwrap().unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    assert_eq!(err.stderr_tail(), ["fatal: no config".to_string()]);
    // The exit is the cause; it names the status (and the stderr line).
    let cause = std::error::Error::source(&err).expect("the close reason");
    assert!(cause.to_string().contains("status 2"), "{cause}");
    assert!(matches!(
        err.close_reason(),
        Some(mcpwire_transport::CloseReason::Exited(_))
    ));
}

/// The client starts in `Connecting { attempt: 0 }`, and its first attempt
/// does not announce that state again: each notice wakes whoever waits on
/// the state (`connect_with` first among them) while the server starts.
#[tokio::test]
async fn the_first_attempt_does_not_announce_connecting_again() {
    // A transport that never opens: the first attempt stays where it starts.
    let client = Client::start(
        Box::new(|| Box::pin(std::future::pending())),
        ClientConfig::new(),
    );
    let states = client.watch_state();
    // The connection task runs on this (current-thread) runtime once the
    // test yields, up to the transport that never opens.
    for _ in 0..16 {
        tokio::task::yield_now().await;
    }
    assert!(
        matches!(*states.borrow(), ConnectionState::Connecting { attempt: 0 }),
        "{:?}",
        *states.borrow()
    );
    assert!(
        !states.has_changed().unwrap(),
        "Connecting was announced again"
    );
    // A state that does change is still announced.
    client.close().await;
    assert!(states.has_changed().unwrap());
}

#[tokio::test]
async fn states_move_from_connecting_to_closed() {
    let (transport, peer) = memory_pair(8);
    let mut server = FakeServer::new(peer);
    let mut slot = Some(Box::new(transport) as Box<dyn mcpwire_transport::Transport>);
    let client = Client::start(
        Box::new(move || {
            let t = slot.take().unwrap();
            Box::pin(async move { Ok(t) })
        }),
        ClientConfig::new(),
    );
    let mut states = client.watch_state();
    let seen = tokio::spawn(async move {
        let mut names = vec![format!("{:?}", *states.borrow_and_update())];
        while states.changed().await.is_ok() {
            let s = states.borrow_and_update().clone();
            names.push(format!("{s:?}"));
            if s.is_closed() {
                break;
            }
        }
        names
    });
    server.handshake().await;
    let mut w = client.watch_state();
    within(w.wait_for(ConnectionState::is_ready)).await.unwrap();
    client.close().await;
    let names = tokio::time::timeout(LONG, seen).await.unwrap().unwrap();
    let kinds: Vec<&str> = names
        .iter()
        .map(|n| n.split([' ', '(', '{']).next().unwrap())
        .collect();
    // Intermediate states may coalesce in a watch, but the order holds.
    let order = ["Connecting", "Initializing", "Ready", "Closing", "Closed"];
    let mut at = 0;
    for k in &kinds {
        let pos = order.iter().position(|o| o == k).expect("known state");
        assert!(pos >= at, "out of order: {kinds:?}");
        at = pos;
    }
    assert_eq!(kinds.last(), Some(&"Closed"), "{kinds:?}");
    assert!(kinds.contains(&"Ready"), "{kinds:?}");
    assert!(matches!(client.state(), ConnectionState::Closed(None)));
    let err = client.ping().await.unwrap_err();
    assert!(err.is_closed());
}

#[tokio::test]
async fn connecting_starts_nothing_until_polled_and_the_future_stays_small() {
    let (transport, peer) = memory_pair(8);
    let mut server = FakeServer::new(peer);
    let connect = Client::connect(transport, ClientConfig::new());
    // The configuration waits in a box, not in the future: a caller opening
    // many sessions at once holds one such future per session.
    assert!(
        std::mem::size_of_val(&connect) < std::mem::size_of::<ClientConfig>() / 2,
        "connect future of {} bytes",
        std::mem::size_of_val(&connect)
    );
    let before = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    tokio::task::yield_now().await;
    assert_eq!(
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks(),
        before,
        "no connection task before the first poll"
    );
    let connect = tokio::spawn(connect);
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    assert!(matches!(client.state(), ConnectionState::Ready));
}
