//! Subscriptions in both eras against a fake server: the stateless era's
//! `subscriptions/listen` stream (tagged notifications into the same lanes,
//! a broken stream opened again with the current set, a server without it),
//! the same `subscribe_resource` code working in both eras, and how a
//! stateless request is cancelled where streams cannot be closed.

mod common;

use std::time::Duration;

use common::{connected, factory, within};
use mcpwire_client::types::ResourceUpdated;
use mcpwire_client::{
    CancellationToken, Client, ClientConfig, ConnectionState, EraChoice, ErrorKind, ListKind,
    Reconnect,
};
use mcpwire_codec::jsonrpc::{Id, Message, Request};
use mcpwire_test_support::{FakeServer, MemoryPeer, memory_pair};
use mcpwire_transport::TransportError;
use serde_json::{Value, json};

const SUB: &str = "io.modelcontextprotocol/subscriptionId";
const URI: &str = "file:///watched";

fn params(req: &Request) -> Value {
    req.params
        .as_ref()
        .map(|p| p.deserialize().unwrap())
        .unwrap_or(Value::Null)
}

fn num(id: &Id) -> i64 {
    match id {
        Id::Number(n) => *n,
        other => panic!("our ids are numbers, got {other}"),
    }
}

/// A client of the stateless era whose server advertises `caps`.
async fn modern(caps: Value) -> (Client, FakeServer) {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    let probe = server.expect_request("server/discover").await;
    let result = json!({
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": caps,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "stateless", "version": "2"}},
    });
    server.respond(&probe.id, result).await;
    let client = within(connect).await.unwrap().unwrap();
    (client, server)
}

/// Expects a `subscriptions/listen` asking for `filter`, acknowledges it
/// with `acked`, and returns its id (the subscription id).
async fn expect_listen(server: &mut FakeServer, filter: Value, acked: Value) -> Id {
    let req = server.expect_request("subscriptions/listen").await;
    let p = params(&req);
    assert_eq!(p["notifications"], filter, "the filter asked for");
    assert_eq!(
        p["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
        "a request like any other of the era"
    );
    let id = num(&req.id);
    server
        .notify(
            "notifications/subscriptions/acknowledged",
            json!({"_meta": {SUB: id}, "notifications": acked}),
        )
        .await;
    req.id
}

async fn tagged(server: &FakeServer, method: &str, id: &Id, mut params: Value) {
    params["_meta"] = json!({SUB: num(id)});
    server.notify(method, params).await;
}

/// What a user writes, whatever the era: subscribe, wait for an update.
async fn user_code(client: Client) -> ResourceUpdated {
    let mut sub = client.subscribe_resource(URI).await.expect("subscribed");
    assert_eq!(sub.uri(), URI);
    sub.changed().await.expect("an update")
}

#[tokio::test]
async fn listen_delivers_tagged_notifications_through_the_usual_lanes() {
    let (client, mut server) = modern(json!({
        "tools": {"listChanged": true},
        "prompts": {"listChanged": true},
        "resources": {}
    }))
    .await;
    let mut tools = client.list_changed(ListKind::Tools);
    let mut prompts = client.list_changed(ListKind::Prompts);
    // Only the kinds the server advertises are asked for.
    let filter = json!({"toolsListChanged": true, "promptsListChanged": true});
    let id = expect_listen(&mut server, filter.clone(), filter).await;
    tagged(&server, "notifications/tools/list_changed", &id, json!({})).await;
    within(tools.changed()).await.unwrap();
    assert_eq!(*tools.borrow_and_update(), 1);
    // Another subscription's notification is not ours: dropped. The next
    // one of ours comes through alone.
    let other = Id::Number(num(&id) + 1000);
    tagged(
        &server,
        "notifications/prompts/list_changed",
        &other,
        json!({}),
    )
    .await;
    tagged(
        &server,
        "notifications/prompts/list_changed",
        &id,
        json!({}),
    )
    .await;
    within(prompts.changed()).await.unwrap();
    assert_eq!(*prompts.borrow_and_update(), 1);
    // Requests go on beside the stream.
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).await }
    });
    let req = server.expect_request("tools/list").await;
    server.respond(&req.id, json!({"tools": []})).await;
    within(list).await.unwrap().unwrap();
    assert_eq!(*tools.borrow(), 1, "exactly one tools change");
    // The acknowledgement itself is not a notification for the user.
    let mut other_lane = client.notifications();
    tagged(&server, "notifications/x", &id, json!({})).await;
    let seen = within(other_lane.recv()).await.unwrap();
    assert_eq!(seen.method, "notifications/x");
}

#[tokio::test]
async fn the_same_subscription_code_works_in_both_eras() {
    // The `initialize` era: `resources/subscribe`, untagged updates.
    let (client, mut server) = connected(ClientConfig::new()).await;
    let user = tokio::spawn(user_code(client.clone()));
    let req = server.expect_request("resources/subscribe").await;
    assert_eq!(params(&req)["uri"], URI);
    server.respond(&req.id, json!({})).await;
    // The subscription is in place once the call returned; the update
    // comes after it.
    tokio::time::sleep(Duration::from_millis(50)).await;
    server
        .notify("notifications/resources/updated", json!({"uri": URI}))
        .await;
    assert_eq!(within(user).await.unwrap().uri, URI);

    // The stateless era: the same code opens a stream with the resource.
    let (client, mut server) = modern(json!({"resources": {"subscribe": true}})).await;
    let user = tokio::spawn(user_code(client.clone()));
    let filter = json!({"resourceSubscriptions": [URI]});
    let id = expect_listen(&mut server, filter.clone(), filter).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    tagged(
        &server,
        "notifications/resources/updated",
        &id,
        json!({"uri": URI}),
    )
    .await;
    assert_eq!(within(user).await.unwrap().uri, URI);

    // Unsubscribing leaves nothing to listen to: the stream is cancelled,
    // and without streams to close (stdio) that is `notifications/cancelled`.
    let unsubscribe = tokio::spawn({
        let client = client.clone();
        async move { client.unsubscribe_resource(URI).await }
    });
    let cancel = server.expect_notification("notifications/cancelled").await;
    let p: Value = cancel.params.unwrap().deserialize().unwrap();
    assert_eq!(p["requestId"], num(&id));
    within(unsubscribe).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_new_subscription_replaces_the_stream_once_the_new_one_is_acknowledged() {
    let (client, mut server) = modern(json!({"tools": {"listChanged": true}})).await;
    let mut tools = client.list_changed(ListKind::Tools);
    let first = expect_listen(
        &mut server,
        json!({"toolsListChanged": true}),
        json!({"toolsListChanged": true}),
    )
    .await;
    let sub = tokio::spawn({
        let client = client.clone();
        async move { client.subscribe_resource(URI).await.map(|_| ()) }
    });
    let req = server.expect_request("subscriptions/listen").await;
    assert_eq!(
        params(&req)["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": [URI]}),
        "the whole set, on a new stream"
    );
    // Until the new stream is acknowledged, the old one still delivers.
    tagged(
        &server,
        "notifications/tools/list_changed",
        &first,
        json!({}),
    )
    .await;
    within(tools.changed()).await.unwrap();
    tools.borrow_and_update();
    let second = req.id;
    server
        .notify(
            "notifications/subscriptions/acknowledged",
            json!({"_meta": {SUB: num(&second)}, "notifications": {"toolsListChanged": true, "resourceSubscriptions": [URI]}}),
        )
        .await;
    within(sub).await.unwrap().unwrap();
    // Then the old one is cancelled, and its notifications are dropped.
    let cancel = server.expect_notification("notifications/cancelled").await;
    let p: Value = cancel.params.unwrap().deserialize().unwrap();
    assert_eq!(p["requestId"], num(&first));
    tagged(
        &server,
        "notifications/tools/list_changed",
        &first,
        json!({}),
    )
    .await;
    tagged(
        &server,
        "notifications/tools/list_changed",
        &second,
        json!({}),
    )
    .await;
    within(tools.changed()).await.unwrap();
    assert_eq!(*tools.borrow_and_update(), 2, "only the current stream's");
}

#[tokio::test]
async fn a_broken_stream_is_opened_again_with_the_current_subscriptions() {
    let (client, mut server) = modern(json!({"resources": {"subscribe": true}})).await;
    let sub = tokio::spawn({
        let client = client.clone();
        async move { client.subscribe_resource(URI).await }
    });
    // Read the raw frame, to hand it back as a lost answer stream.
    let frame = server.recv_frame().await.unwrap();
    let Ok(Message::Request(req)) = Message::parse(frame.clone()) else {
        panic!("expected the listen request");
    };
    assert_eq!(req.method, "subscriptions/listen");
    let filter = json!({"resourceSubscriptions": [URI]});
    server
        .notify(
            "notifications/subscriptions/acknowledged",
            json!({"_meta": {SUB: num(&req.id)}, "notifications": filter}),
        )
        .await;
    let mut sub = within(sub).await.unwrap().unwrap();
    // The stream breaks (what HTTP reports when an answer stream drops).
    server
        .undeliver(
            frame,
            TransportError::Lost(std::sync::Arc::new(std::io::Error::other("stream dropped"))),
        )
        .await;
    // After a short delay, the same set on a new stream.
    let second = expect_listen(&mut server, filter.clone(), filter.clone()).await;
    assert_ne!(second, req.id, "a new request id");
    tokio::time::sleep(Duration::from_millis(50)).await;
    tagged(
        &server,
        "notifications/resources/updated",
        &req.id,
        json!({"uri": URI}),
    )
    .await;
    tagged(
        &server,
        "notifications/resources/updated",
        &second,
        json!({"uri": "file:///watched/sub"}),
    )
    .await;
    let update = within(sub.changed()).await.unwrap();
    assert_eq!(update.uri, "file:///watched/sub", "only the live stream's");

    // The server ends it itself (stdio: `notifications/cancelled` naming
    // it): opened again too.
    server
        .notify(
            "notifications/cancelled",
            json!({"requestId": num(&second)}),
        )
        .await;
    let third = expect_listen(&mut server, filter.clone(), filter.clone()).await;
    // And a graceful end (its answer) as well.
    server
        .respond(
            &third,
            json!({"resultType": "complete", "_meta": {SUB: num(&third)}}),
        )
        .await;
    expect_listen(&mut server, filter.clone(), filter).await;
}

#[tokio::test]
async fn a_server_without_listen_degrades_and_requests_are_unaffected() {
    let (client, mut server) = modern(json!({"tools": {"listChanged": true}})).await;
    let req = server.expect_request("subscriptions/listen").await;
    server
        .respond_error(&req.id, -32601, "Method not found")
        .await;
    // Requests work as before.
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).await }
    });
    let req = server.expect_request("tools/list").await;
    server.respond(&req.id, json!({"tools": []})).await;
    within(list).await.unwrap().unwrap();
    // Not retried on its own; a subscription asks once more and fails with
    // the server's answer.
    let sub = tokio::spawn({
        let client = client.clone();
        async move { client.subscribe_resource(URI).await.map(|_| ()) }
    });
    let req = server.expect_request("subscriptions/listen").await;
    server
        .respond_error(&req.id, -32601, "Method not found")
        .await;
    let err = within(sub).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(err.server_error().unwrap().code.0, -32601);
    // A server that leaves the resource out of its acknowledgement fails
    // the call too (and the stream goes on without it).
    let sub = tokio::spawn({
        let client = client.clone();
        async move { client.subscribe_resource(URI).await.map(|_| ()) }
    });
    let asked = json!({"toolsListChanged": true, "resourceSubscriptions": [URI]});
    expect_listen(&mut server, asked, json!({"toolsListChanged": true})).await;
    let err = within(sub).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
}

#[tokio::test]
async fn a_stateless_request_cancelled_over_stdio_sends_notifications_cancelled() {
    let (client, mut server) = modern(json!({"tools": {}})).await;
    let token = CancellationToken::new();
    let call = tokio::spawn({
        let client = client.clone();
        let token = token.clone();
        async move {
            client
                .call_tool("slow", &json!({}))
                .cancel_token(token)
                .await
        }
    });
    let list = server.expect_request("tools/list").await;
    server
        .respond(
            &list.id,
            json!({"tools": [{"name": "slow", "inputSchema": {"type": "object"}}]}),
        )
        .await;
    let req = server.expect_request("tools/call").await;
    token.cancel();
    assert_eq!(
        within(call).await.unwrap().unwrap_err().kind(),
        ErrorKind::Cancelled
    );
    let cancel = server.expect_notification("notifications/cancelled").await;
    let p: Value = cancel.params.unwrap().deserialize().unwrap();
    assert_eq!(p["requestId"], num(&req.id));
}

#[tokio::test]
async fn subscriptions_are_asked_for_again_after_a_reconnection_in_both_eras() {
    let quick = Reconnect::new()
        .initial_delay(Duration::from_millis(20))
        .max_delay(Duration::from_millis(100));
    for era in [EraChoice::Legacy, EraChoice::Modern] {
        let modern = era == EraChoice::Modern;
        let (f, mut peers) = factory();
        let config = ClientConfig::new()
            .era(era.clone())
            .reconnect(quick.clone());
        let connect = tokio::spawn(Client::connect_with(f, config));
        let start = |mut server: FakeServer| async move {
            if modern {
                let req = server.expect_request("server/discover").await;
                let result = json!({"supportedVersions": ["2026-07-28"], "capabilities": {"resources": {"subscribe": true}}});
                server.respond(&req.id, result).await;
            } else {
                server.handshake().await;
            }
            server
        };
        let server = start(FakeServer::new(within(peers.recv()).await.unwrap())).await;
        let client = within(connect).await.unwrap().unwrap();
        let mut server = server;
        let sub = tokio::spawn({
            let client = client.clone();
            async move { client.subscribe_resource(URI).await }
        });
        let filter = json!({"resourceSubscriptions": [URI]});
        if modern {
            expect_listen(&mut server, filter.clone(), filter.clone()).await;
        } else {
            let req = server.expect_request("resources/subscribe").await;
            server.respond(&req.id, json!({})).await;
        }
        let mut sub = within(sub).await.unwrap().unwrap();
        // The connection drops; the client reconnects on its own.
        server.crash(1, &[]).await;
        let mut states = client.watch_state();
        within(states.wait_for(|s| matches!(s, ConnectionState::Backoff { .. })))
            .await
            .unwrap();
        let mut server = start(FakeServer::new(within(peers.recv()).await.unwrap())).await;
        // The new session is told again, unasked.
        let id = if modern {
            Some(expect_listen(&mut server, filter.clone(), filter).await)
        } else {
            let req = server.expect_request("resources/subscribe").await;
            assert_eq!(params(&req)["uri"], URI);
            server.respond(&req.id, json!({})).await;
            None
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let update = json!({"uri": URI});
        match &id {
            Some(id) => tagged(&server, "notifications/resources/updated", id, update).await,
            None => {
                server
                    .notify("notifications/resources/updated", update)
                    .await
            }
        }
        assert_eq!(within(sub.changed()).await.unwrap().uri, URI, "{era:?}");
        client.close().await;
    }
}

/// The next request on `peer` (no deadline: the test runs in paused time,
/// where the client's backoff may be longer than any fixed wait).
async fn next_request(peer: &mut MemoryPeer) -> (Value, String) {
    let frame = peer.recv_frame().await.expect("the client is there");
    let msg: Value = serde_json::from_slice(&frame).unwrap();
    let method = msg["method"].as_str().unwrap_or_default().to_owned();
    (msg["id"].clone(), method)
}

async fn reply(peer: &MemoryPeer, id: &Value, outcome: Value) {
    let mut msg = json!({"jsonrpc": "2.0", "id": id});
    if outcome.get("code").is_some() {
        msg["error"] = outcome;
    } else {
        msg["result"] = outcome;
    }
    assert!(peer.send_frame(msg.to_string()).await);
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_keeps_failing_stops_after_its_budget_until_the_set_changes() {
    let (transport, mut peer) = memory_pair(64);
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    let (id, method) = next_request(&mut peer).await;
    assert_eq!(method, "server/discover");
    let caps = json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}});
    reply(
        &peer,
        &id,
        json!({"supportedVersions": ["2026-07-28"], "capabilities": caps}),
    )
    .await;
    let client = connect.await.unwrap().unwrap();
    // The first attempt, then 8 more after growing delays: the budget.
    let refused = json!({"code": -32603, "message": "Subscription limit reached"});
    let started = tokio::time::Instant::now();
    for _ in 0..9 {
        let (id, method) = next_request(&mut peer).await;
        assert_eq!(method, "subscriptions/listen");
        reply(&peer, &id, refused.clone()).await;
    }
    let spent = started.elapsed();
    assert!(
        spent >= Duration::from_secs(40) && spent <= Duration::from_secs(120),
        "backed off between attempts (250 ms doubling to 30 s): {spent:?}"
    );
    // Then nothing more, however long it waits.
    assert!(
        tokio::time::timeout(Duration::from_secs(600), peer.recv_frame())
            .await
            .is_err(),
        "gave up"
    );
    // A change of the set is a new start: one more attempt, whose failure
    // the subscriber gets.
    let sub = tokio::spawn({
        let client = client.clone();
        async move { client.subscribe_resource(URI).await.map(|_| ()) }
    });
    let (id, method) = next_request(&mut peer).await;
    assert_eq!(method, "subscriptions/listen");
    reply(&peer, &id, refused).await;
    let err = sub.await.unwrap().unwrap_err();
    assert_eq!(err.code().map(|c| c.0), Some(-32603));
}
