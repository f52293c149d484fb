//! Reconnection, keepalive and session expiry against fake servers.

mod common;

use std::time::Duration;

use common::{LONG, factory, within};
use mcpwire_client::types::{ListRootsResult, Root};
use mcpwire_client::{
    Client, ClientConfig, ConnectionState, ErrorKind, HandlerError, Keepalive, Reconnect,
    RequestContext, TransportFactory,
};
use mcpwire_codec::jsonrpc::Id;
use mcpwire_test_support::{FakeServer, MemoryPeer, memory_pair};
use mcpwire_transport::{Transport, TransportError};
use serde_json::{Value, json};
use tokio::sync::mpsc;

async fn next_server(peers: &mut mpsc::UnboundedReceiver<MemoryPeer>) -> FakeServer {
    FakeServer::new(within(peers.recv()).await.expect("a new connection"))
}

fn quick_reconnect() -> Reconnect {
    Reconnect::new()
        .initial_delay(Duration::from_millis(20))
        .max_delay(Duration::from_millis(100))
        .max_attempts(3)
}

#[tokio::test]
async fn after_a_crash_in_flight_calls_fail_and_the_client_reconnects() {
    let (f, mut peers) = factory();
    let config = ClientConfig::new().reconnect(quick_reconnect());
    let connect = tokio::spawn(Client::connect_with(f, config));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    let mut states = client.watch_state();

    let c = client.clone();
    let call = tokio::spawn(async move { c.ping().await });
    server.expect_request("ping").await;
    server.crash(1, &["segfault"]).await;
    let err = within(call).await.unwrap().unwrap_err();
    assert!(err.is_closed() && err.is_retryable(), "{err:?}");
    assert_eq!(err.stderr_tail(), ["segfault".to_string()]);

    within(states.wait_for(|s| matches!(s, ConnectionState::Backoff { .. })))
        .await
        .unwrap();
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    within(states.wait_for(ConnectionState::is_ready))
        .await
        .unwrap();
    let c = client.clone();
    let ping = tokio::spawn(async move { c.ping().await });
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_reconnect_attempt_is_announced_as_connecting() {
    let (transport, peer) = memory_pair(16);
    let mut first = Some(Box::new(transport) as Box<dyn Transport>);
    let f: TransportFactory = Box::new(move || match first.take() {
        Some(t) => Box::pin(async move { Ok(t) }),
        // The second attempt never opens: it stays where it starts.
        None => Box::pin(std::future::pending()),
    });
    let config = ClientConfig::new().reconnect(quick_reconnect());
    let connect = tokio::spawn(Client::connect_with(f, config));
    let mut server = FakeServer::new(peer);
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    server.crash(1, &[]).await;
    let mut states = client.watch_state();
    let s = within(states.wait_for(|s| matches!(s, ConnectionState::Connecting { .. })))
        .await
        .unwrap()
        .clone();
    assert!(
        matches!(s, ConnectionState::Connecting { attempt: 1 }),
        "{s:?}"
    );
}

#[tokio::test]
async fn without_a_policy_a_crash_closes_for_good() {
    let (f, mut peers) = factory();
    let connect = tokio::spawn(Client::connect_with(f, ClientConfig::new()));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    server.crash(1, &[]).await;
    let mut states = client.watch_state();
    let closed = within(states.wait_for(ConnectionState::is_closed))
        .await
        .unwrap()
        .clone();
    assert!(matches!(closed, ConnectionState::Closed(Some(ref e)) if e.is_closed()));
    // The factory is never called again (and is dropped: the channel ends).
    let next = tokio::time::timeout(Duration::from_millis(200), peers.recv()).await;
    assert!(!matches!(next, Ok(Some(_))), "no reconnection attempt");
}

#[tokio::test]
async fn the_reconnect_budget_is_finite() {
    let (f, mut peers) = factory();
    let config = ClientConfig::new().reconnect(quick_reconnect().max_attempts(2));
    let client = Client::start(f, config);
    // Every attempt's server dies before answering initialize.
    for _ in 0..3 {
        let mut server = next_server(&mut peers).await;
        server.expect_request("initialize").await;
        server.crash(1, &[]).await;
    }
    let mut states = client.watch_state();
    let s = within(states.wait_for(ConnectionState::is_closed))
        .await
        .unwrap()
        .clone();
    assert!(matches!(s, ConnectionState::Closed(Some(_))), "{s:?}");
    assert!(peers.try_recv().is_err(), "no fourth attempt");
}

#[tokio::test]
async fn keepalive_failures_close_the_connection() {
    let keepalive = Keepalive::new(Duration::from_millis(50))
        .timeout(Duration::from_secs(1))
        .max_failures(2);
    let (f, mut peers) = factory();
    let connect = tokio::spawn(Client::connect_with(
        f,
        ClientConfig::new().keepalive(keepalive),
    ));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    // Answer the first ping, then go silent.
    let p = server.expect_request("ping").await;
    server.respond(&p.id, json!({})).await;
    server.expect_request("ping").await;
    server.expect_notification("notifications/cancelled").await;
    server.expect_request("ping").await;
    server.expect_notification("notifications/cancelled").await;
    server.expect_closed().await;
    let mut states = client.watch_state();
    let s = within(states.wait_for(ConnectionState::is_closed))
        .await
        .unwrap()
        .clone();
    let ConnectionState::Closed(Some(e)) = s else {
        panic!("{s:?}")
    };
    assert!(e.to_string().contains("keepalive"), "{e}");
}

#[tokio::test]
async fn an_expired_session_reinitializes_and_replays_only_what_is_safe() {
    let (f, mut peers) = factory();
    let connect = tokio::spawn(Client::connect_with(f, ClientConfig::new()));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();

    // A read (always safe) and a call of a tool with no annotations.
    let c = client.clone();
    let read = tokio::spawn(async move { c.read_resource("file:///x").await });
    let read_frame = server.recv_frame().await.unwrap();
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("delete", json!({})).await });
    // Not listed yet: the call goes at once, as a tool with no annotations.
    let call_frame = server.recv_frame().await.unwrap();
    assert!(String::from_utf8_lossy(&call_frame).contains("tools/call"));

    server
        .undeliver(read_frame.clone(), TransportError::SessionExpired)
        .await;
    server
        .undeliver(call_frame, TransportError::SessionExpired)
        .await;
    server.handshake().await;
    // The read goes out again, byte for byte; the call does not.
    let again = server.recv_frame().await.unwrap();
    assert_eq!(again, read_frame);
    let req = mcpwire_codec::jsonrpc::Message::parse(again).unwrap();
    let mcpwire_codec::jsonrpc::Message::Request(req) = req else {
        panic!()
    };
    server
        .respond(
            &req.id,
            json!({"contents": [{"uri": "file:///x", "text": "x"}]}),
        )
        .await;
    let read = within(read).await.unwrap().unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("x"));
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown);
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn other_undelivered_requests_fail_with_a_transport_error() {
    let (f, mut peers) = factory();
    let connect = tokio::spawn(Client::connect_with(f, ClientConfig::new()));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    let c = client.clone();
    let call = tokio::spawn(async move { c.request::<_, Value>("x/y", Some(&json!({}))).await });
    let frame = server.recv_frame().await.unwrap();
    server.undeliver(frame, TransportError::Timeout).await;
    let err = tokio::time::timeout(LONG, call)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Transport);
    assert!(std::error::Error::source(&err).is_some());
}

#[tokio::test]
async fn each_new_session_is_counted_and_forgets_the_listed_tools() {
    let (f, mut peers) = factory();
    let config = ClientConfig::new().reconnect(quick_reconnect());
    let connect = tokio::spawn(Client::connect_with(f, config));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    let mut sessions = client.sessions();
    assert_eq!(*sessions.borrow_and_update(), 1);

    let c = client.clone();
    let listed = tokio::spawn(async move { c.list_all_tools().await });
    let list = server.expect_request("tools/list").await;
    let tools = json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
    server.respond(&list.id, tools.clone()).await;
    within(listed).await.unwrap().unwrap();

    // The process dies and comes back: a second session.
    server.crash(1, &[]).await;
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    within(sessions.wait_for(|n| *n == 2)).await.unwrap();
    let mut states = client.watch_state();
    within(states.wait_for(ConnectionState::is_ready))
        .await
        .unwrap();

    // What the old process listed is forgotten: a structured answer lists
    // the tools again, after the call.
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("t", json!({})).await });
    let req = server.expect_request("tools/call").await;
    server
        .respond(
            &req.id,
            json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": {}}),
        )
        .await;
    let list = server.expect_request("tools/list").await;
    server.respond(&list.id, tools).await;
    assert_eq!(within(call).await.unwrap().unwrap().text(), "ok");
}

#[tokio::test]
async fn without_a_policy_the_factory_is_let_go_once_the_session_is_ready() {
    let (f, mut peers) = factory();
    let connect = tokio::spawn(Client::connect_with(f, ClientConfig::new()));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    // The factory held the channel's sender: dropped, the channel ends
    // while the client is still up and answering.
    assert!(
        within(peers.recv()).await.is_none(),
        "the factory is dropped"
    );
    let c = client.clone();
    let ping = tokio::spawn(async move { c.ping().await });
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
    assert!(client.state().is_ready());
}

#[tokio::test]
async fn with_a_policy_the_factory_is_kept_and_server_requests_are_answered_after_a_reconnect() {
    let (f, mut peers) = factory();
    let config = ClientConfig::new()
        .reconnect(quick_reconnect())
        .max_concurrent_handlers(1)
        .roots(|_cx: RequestContext| async {
            Ok::<_, HandlerError>(ListRootsResult::new(vec![Root::new("file:///work", None)]))
        });
    let connect = tokio::spawn(Client::connect_with(f, config));
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    let mut states = client.watch_state();

    // The handler's slots are made by the first server request.
    server.request(1, "roots/list", json!({})).await;
    let r = server.expect_response(&Id::Number(1)).await;
    assert_eq!(
        r.outcome.unwrap().deserialize::<Value>().unwrap()["roots"][0]["uri"],
        "file:///work"
    );

    server.crash(1, &[]).await;
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    within(states.wait_for(ConnectionState::is_ready))
        .await
        .unwrap();
    // The same slots serve the new connection (the bound is 1: the first
    // request's slot was given back).
    server.request(2, "roots/list", json!({})).await;
    let r = server.expect_response(&Id::Number(2)).await;
    assert_eq!(
        r.outcome.unwrap().deserialize::<Value>().unwrap()["roots"][0]["uri"],
        "file:///work"
    );
}

#[tokio::test]
async fn the_sessions_counter_watched_before_the_first_session_sees_it_start() {
    let (f, mut peers) = factory();
    let client = Client::start(f, ClientConfig::new());
    let mut sessions = client.sessions();
    assert_eq!(*sessions.borrow_and_update(), 0);
    let mut server = next_server(&mut peers).await;
    server.handshake().await;
    within(sessions.changed()).await.unwrap();
    assert_eq!(*sessions.borrow_and_update(), 1);
    // A receiver made later starts at the current count.
    assert_eq!(*client.sessions().borrow(), 1);
}
