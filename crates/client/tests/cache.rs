//! The response cache (SEP-2549 caching hints, and `list_changed` in the
//! `initialize` era) against a fake server: a fresh answer is served
//! without asking, an expired one is asked again, the cache modes, the
//! notifications that invalidate, scopes across credentials, the bounds,
//! pagination.
//!
//! "Nothing was sent" is checked by the order of what the server sees: a
//! cached call is followed by an uncached one, and the uncached one must be
//! the next request to arrive.

mod common;

use std::task::{Context, Poll};
use std::time::Duration;

use common::{connected, within};
use mcpwire_client::types::{ElicitAction, ElicitParams, ElicitResult};
use mcpwire_client::{
    CacheMode, Client, ClientConfig, ConnectionState, CredentialId, HandlerError, ListKind,
    Reconnect, RequestContext, ResponseCache, TransportFactory,
};
use mcpwire_test_support::{FakeServer, MemoryPeer, MemoryTransport, memory_pair};
use mcpwire_transport::{Active, FrameSender, Transport, TransportEvent, TransportInfo};
use serde_json::{Value, json};

fn discover_result() -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {"listChanged": true}, "resources": {}, "prompts": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "stateless", "version": "2"}},
        "ttlMs": 0,
        "cacheScope": "public"
    })
}

/// A stateless client, past its handshake.
async fn modern(config: ClientConfig) -> (Client, FakeServer) {
    let (transport, peer) = memory_pair(64);
    let server = FakeServer::new(peer);
    start_modern(transport, server, config).await
}

async fn start_modern<T: Transport>(
    transport: T,
    mut server: FakeServer,
    config: ClientConfig,
) -> (Client, FakeServer) {
    let connect = tokio::spawn(Client::connect(transport, config));
    let probe = server.expect_request("server/discover").await;
    server.respond(&probe.id, discover_result()).await;
    let client = within(connect).await.unwrap().unwrap();
    ack_listen(&mut server).await;
    (client, server)
}

/// Acknowledges the `subscriptions/listen` stream a stateless client opens
/// once ready (the server advertises `tools.listChanged`).
async fn ack_listen(server: &mut FakeServer) {
    let listen = server.expect_request("subscriptions/listen").await;
    let id = match &listen.id {
        mcpwire_codec::jsonrpc::Id::Number(n) => *n,
        other => panic!("our ids are numbers, got {other}"),
    };
    server
        .notify(
            "notifications/subscriptions/acknowledged",
            json!({"_meta": {"io.modelcontextprotocol/subscriptionId": id}, "notifications": {"toolsListChanged": true}}),
        )
        .await;
}

fn tools(names: &[&str], ttl: u64, scope: &str) -> Value {
    let tools: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
        .collect();
    json!({"resultType": "complete", "tools": tools, "ttlMs": ttl, "cacheScope": scope})
}

fn contents(uri: &str, text: &str, ttl: u64, scope: &str) -> Value {
    json!({
        "resultType": "complete",
        "contents": [{"uri": uri, "text": text}],
        "ttlMs": ttl,
        "cacheScope": scope
    })
}

fn names(list: &mcpwire_client::types::ListToolsResult) -> Vec<String> {
    list.tools.iter().map(|t| t.name.clone()).collect()
}

/// Lists tools, answering with `result` if the request reaches the server.
async fn list(
    client: &Client,
    server: &mut FakeServer,
    mode: CacheMode,
    result: Value,
) -> Vec<String> {
    let task = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).cache(mode).await }
    });
    let req = server.expect_request("tools/list").await;
    server.respond(&req.id, result).await;
    names(&within(task).await.unwrap().unwrap())
}

/// Lists tools expecting the cache to answer: nothing reaches the server
/// (checked by [`barrier`]).
async fn list_cached(client: &Client, server: &mut FakeServer) -> Vec<String> {
    let listed = within(client.list_tools(None)).await.unwrap();
    barrier(client, server).await;
    names(&listed)
}

/// A `prompts/list` without caching hints: the next request the server
/// sees must be it (so nothing was sent before it), and once it is
/// answered every notification sent earlier has been handled.
async fn barrier(client: &Client, server: &mut FakeServer) {
    let task = tokio::spawn({
        let client = client.clone();
        async move { client.list_prompts(None).await }
    });
    let req = server.expect_request("prompts/list").await;
    server
        .respond(&req.id, json!({"resultType": "complete", "prompts": []}))
        .await;
    within(task).await.unwrap().unwrap();
}

async fn read(client: &Client, server: &mut FakeServer, uri: &str, result: Value) -> String {
    let task = tokio::spawn({
        let client = client.clone();
        let uri = uri.to_owned();
        async move { client.read_resource(&uri).await }
    });
    let req = server.expect_request("resources/read").await;
    assert_eq!(
        req.params.as_ref().unwrap().deserialize::<Value>().unwrap()["uri"],
        uri
    );
    server.respond(&req.id, result).await;
    text(&within(task).await.unwrap().unwrap())
}

async fn read_cached(client: &Client, server: &mut FakeServer, uri: &str) -> String {
    let result = within(client.read_resource(uri)).await.unwrap();
    barrier(client, server).await;
    text(&result)
}

fn text(result: &mcpwire_client::types::ReadResourceResult) -> String {
    result.contents[0].text.clone().unwrap()
}

#[tokio::test]
async fn a_fresh_answer_is_served_without_asking_the_server() {
    let (client, mut server) = modern(ClientConfig::new()).await;
    let first = list(
        &client,
        &mut server,
        CacheMode::Use,
        tools(&["a"], 60_000, "public"),
    )
    .await;
    assert_eq!(first, ["a"]);
    assert_eq!(list_cached(&client, &mut server).await, ["a"]);
    // call_tool needs the tool list: the cache has it.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("a", &json!({})).await }
    });
    let req = server.expect_request("tools/call").await;
    server
        .respond(&req.id, json!({"resultType": "complete", "content": []}))
        .await;
    within(call).await.unwrap().unwrap();
    client.close().await;
}

#[tokio::test]
async fn an_answer_without_a_ttl_is_not_kept() {
    let (client, mut server) = modern(ClientConfig::new()).await;
    for ttl in [json!(0), json!(-5), Value::Null] {
        let mut result = tools(&["a"], 0, "public");
        result["ttlMs"] = ttl;
        list(&client, &mut server, CacheMode::Use, result).await;
    }
    list(
        &client,
        &mut server,
        CacheMode::Use,
        tools(&["a"], 0, "public"),
    )
    .await;
    client.close().await;
}

#[tokio::test]
async fn an_expired_answer_is_asked_again() {
    let (client, mut server) = modern(ClientConfig::new()).await;
    list(
        &client,
        &mut server,
        CacheMode::Use,
        tools(&["a"], 1_000, "public"),
    )
    .await;
    // The clock moves without sleeping: still fresh just before the TTL...
    tokio::time::pause();
    tokio::time::advance(Duration::from_millis(990)).await;
    tokio::time::resume();
    assert_eq!(list_cached(&client, &mut server).await, ["a"]);
    // ... stale at it.
    tokio::time::pause();
    tokio::time::advance(Duration::from_millis(20)).await;
    tokio::time::resume();
    let again = list(
        &client,
        &mut server,
        CacheMode::Use,
        tools(&["b"], 1_000, "public"),
    )
    .await;
    assert_eq!(again, ["b"]);
    assert_eq!(list_cached(&client, &mut server).await, ["b"]);
    client.close().await;
}

#[tokio::test]
async fn refresh_asks_and_stores_bypass_neither_reads_nor_stores() {
    let (client, mut server) = modern(ClientConfig::new()).await;
    list(
        &client,
        &mut server,
        CacheMode::Use,
        tools(&["a"], 60_000, "public"),
    )
    .await;
    let refreshed = list(
        &client,
        &mut server,
        CacheMode::Refresh,
        tools(&["b"], 60_000, "public"),
    )
    .await;
    assert_eq!(refreshed, ["b"]);
    assert_eq!(list_cached(&client, &mut server).await, ["b"]);
    let bypassed = list(
        &client,
        &mut server,
        CacheMode::Bypass,
        tools(&["c"], 60_000, "public"),
    )
    .await;
    assert_eq!(bypassed, ["c"]);
    assert_eq!(
        list_cached(&client, &mut server).await,
        ["b"],
        "bypass stored nothing"
    );
    client.close().await;
}

#[tokio::test]
async fn list_changed_invalidates_its_lists_in_the_stateless_era() {
    let (client, mut server) = modern(ClientConfig::new()).await;
    let mut changed = client.list_changed(ListKind::Tools);
    list(
        &client,
        &mut server,
        CacheMode::Use,
        tools(&["a"], 60_000, "public"),
    )
    .await;
    // Another list's notification leaves the tools alone.
    server
        .notify("notifications/prompts/list_changed", json!({}))
        .await;
    assert_eq!(list_cached(&client, &mut server).await, ["a"]);
    server
        .notify("notifications/tools/list_changed", json!({}))
        .await;
    within(changed.changed()).await.unwrap();
    assert_eq!(
        list(
            &client,
            &mut server,
            CacheMode::Use,
            tools(&["b"], 60_000, "public")
        )
        .await,
        ["b"]
    );

    // Templates go with resources/list_changed.
    let templates = tokio::spawn({
        let client = client.clone();
        async move { client.list_resource_templates(None).await }
    });
    let req = server.expect_request("resources/templates/list").await;
    server
        .respond(
            &req.id,
            json!({"resultType": "complete", "resourceTemplates": [], "ttlMs": 60_000, "cacheScope": "public"}),
        )
        .await;
    within(templates).await.unwrap().unwrap();
    within(client.list_resource_templates(None)).await.unwrap();
    barrier(&client, &mut server).await;
    server
        .notify("notifications/resources/list_changed", json!({}))
        .await;
    barrier(&client, &mut server).await;
    let templates = tokio::spawn({
        let client = client.clone();
        async move { client.list_resource_templates(None).await }
    });
    let req = server.expect_request("resources/templates/list").await;
    server
        .respond(
            &req.id,
            json!({"resultType": "complete", "resourceTemplates": []}),
        )
        .await;
    within(templates).await.unwrap().unwrap();
    client.close().await;
}

#[tokio::test]
async fn resources_updated_invalidates_the_read_of_that_uri_only() {
    let (client, mut server) = modern(ClientConfig::new()).await;
    read(
        &client,
        &mut server,
        "file:///a",
        contents("file:///a", "a1", 60_000, "public"),
    )
    .await;
    read(
        &client,
        &mut server,
        "file:///b",
        contents("file:///b", "b1", 60_000, "public"),
    )
    .await;
    assert_eq!(read_cached(&client, &mut server, "file:///a").await, "a1");
    server
        .notify(
            "notifications/resources/updated",
            json!({"uri": "file:///a"}),
        )
        .await;
    barrier(&client, &mut server).await;
    assert_eq!(read_cached(&client, &mut server, "file:///b").await, "b1");
    let a = read(
        &client,
        &mut server,
        "file:///a",
        contents("file:///a", "a2", 60_000, "public"),
    )
    .await;
    assert_eq!(a, "a2");
    client.close().await;
}

#[tokio::test]
async fn the_initialize_era_keeps_lists_until_their_list_changed() {
    // The fake server declares listChanged for tools, resources, prompts.
    let (client, mut server) = connected(ClientConfig::new()).await;
    let legacy = |names: &[&str]| {
        let mut t = tools(names, 0, "public");
        t.as_object_mut().unwrap().retain(|k, _| k == "tools");
        t
    };
    list(&client, &mut server, CacheMode::Use, legacy(&["a"])).await;
    // No TTL, yet kept: the server will say when the list changes.
    let cached = within(client.list_tools(None)).await.unwrap();
    assert_eq!(names(&cached), ["a"]);
    server
        .notify("notifications/tools/list_changed", json!({}))
        .await;
    // Once a later answer is in, the notification was handled.
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
    assert_eq!(
        list(&client, &mut server, CacheMode::Use, legacy(&["b"])).await,
        ["b"]
    );
    // Reads are not kept in this era.
    for text in ["x1", "x2"] {
        let mut result = contents("file:///x", text, 60_000, "public");
        result
            .as_object_mut()
            .unwrap()
            .retain(|k, _| k == "contents");
        assert_eq!(read(&client, &mut server, "file:///x", result).await, text);
    }
    client.close().await;
}

#[tokio::test]
async fn the_initialize_era_does_not_cache_a_list_without_list_changed() {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    let mut init = mcpwire_test_support::initialize_result("2025-11-25");
    init["capabilities"]["tools"] = json!({});
    server.handshake_with(init).await;
    let client = within(connect).await.unwrap().unwrap();
    for name in ["a", "b"] {
        let got = list(
            &client,
            &mut server,
            CacheMode::Use,
            json!({"tools": [{"name": name, "inputSchema": {"type": "object"}}]}),
        )
        .await;
        assert_eq!(got, [name]);
    }
    client.close().await;
}

#[tokio::test]
async fn a_new_session_forgets_what_only_list_changed_kept_current() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let mut sessions = client.sessions();
    sessions.mark_unchanged();
    list(&client, &mut server, CacheMode::Use, json!({"tools": []})).await;
    // The session expires under a request: the client initializes again.
    let task = tokio::spawn({
        let client = client.clone();
        async move { client.list_prompts(None).await }
    });
    let frame = server.recv_frame().await.unwrap();
    assert!(String::from_utf8_lossy(&frame).contains("prompts/list"));
    server
        .undeliver(frame, mcpwire_transport::TransportError::SessionExpired)
        .await;
    server.handshake().await;
    let again = server.expect_request("prompts/list").await;
    server.respond(&again.id, json!({"prompts": []})).await;
    within(task).await.unwrap().unwrap();
    within(sessions.changed()).await.unwrap();
    // Notifications may have been missed between the sessions.
    list(&client, &mut server, CacheMode::Use, json!({"tools": []})).await;
    client.close().await;
}

/// A memory transport that says it reaches `url`, as an HTTP transport
/// would: clients sharing a cache share that server's public answers.
struct Named {
    inner: MemoryTransport,
    url: &'static str,
}

impl Transport for Named {
    fn sender(&self) -> FrameSender {
        self.inner.sender()
    }
    fn set_active(&mut self, active: Active) {
        self.inner.set_active(active)
    }
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        self.inner.poll_event(cx)
    }
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.inner.poll_close(cx)
    }
    fn info(&self) -> TransportInfo {
        TransportInfo::new("streamable-http", self.url)
    }
}

async fn user(cache: &ResponseCache, url: &'static str, who: Option<&str>) -> (Client, FakeServer) {
    let (transport, peer) = memory_pair(64);
    let mut config = ClientConfig::new().response_cache(cache.clone());
    if let Some(who) = who {
        config = config.credential_id(CredentialId::new(who));
    }
    start_modern(
        Named {
            inner: transport,
            url,
        },
        FakeServer::new(peer),
        config,
    )
    .await
}

#[tokio::test]
async fn private_answers_are_never_served_to_another_credential() {
    let url = "http://gateway.test/private-scope";
    let cache = ResponseCache::default();
    let (alice, mut alice_server) = user(&cache, url, Some("alice")).await;
    let (bob, mut bob_server) = user(&cache, url, Some("bob")).await;

    // Alice's answers: the tool list is public, her inbox private.
    list(
        &alice,
        &mut alice_server,
        CacheMode::Use,
        tools(&["t"], 60_000, "public"),
    )
    .await;
    let inbox = contents("mail://inbox", "alice's mail", 60_000, "private");
    read(&alice, &mut alice_server, "mail://inbox", inbox).await;
    assert_eq!(cache.len(), 2);

    // Bob shares the public list, never Alice's inbox.
    assert_eq!(list_cached(&bob, &mut bob_server).await, ["t"]);
    let bobs = contents("mail://inbox", "bob's mail", 60_000, "private");
    assert_eq!(
        read(&bob, &mut bob_server, "mail://inbox", bobs).await,
        "bob's mail"
    );
    assert_eq!(
        read_cached(&bob, &mut bob_server, "mail://inbox").await,
        "bob's mail"
    );
    assert_eq!(
        read_cached(&alice, &mut alice_server, "mail://inbox").await,
        "alice's mail"
    );

    // Another client of Alice's sees her private answer; a client that
    // declared no credential sees neither private answer.
    let (alice2, mut alice2_server) = user(&cache, url, Some("alice")).await;
    assert_eq!(
        read_cached(&alice2, &mut alice2_server, "mail://inbox").await,
        "alice's mail"
    );
    let (anon, mut anon_server) = user(&cache, url, None).await;
    let theirs = contents("mail://inbox", "nobody's mail", 60_000, "private");
    assert_eq!(
        read(&anon, &mut anon_server, "mail://inbox", theirs).await,
        "nobody's mail"
    );

    // Another server's answers are its own, public or not.
    let (other, mut other_server) = user(&cache, "http://gateway.test/other", Some("alice")).await;
    list(
        &other,
        &mut other_server,
        CacheMode::Use,
        tools(&["u"], 60_000, "public"),
    )
    .await;
    for c in [alice, bob, alice2, anon, other] {
        c.close().await;
    }
}

#[tokio::test]
async fn without_a_shared_cache_nothing_crosses_clients() {
    // Two clients of the same server, each with its own cache (the default).
    let url = "http://gateway.test/own-caches";
    let (a, mut a_server) = {
        let (t, p) = memory_pair(64);
        start_modern(
            Named { inner: t, url },
            FakeServer::new(p),
            ClientConfig::new(),
        )
        .await
    };
    let (b, mut b_server) = {
        let (t, p) = memory_pair(64);
        start_modern(
            Named { inner: t, url },
            FakeServer::new(p),
            ClientConfig::new(),
        )
        .await
    };
    list(
        &a,
        &mut a_server,
        CacheMode::Use,
        tools(&["t"], 60_000, "public"),
    )
    .await;
    list(
        &b,
        &mut b_server,
        CacheMode::Use,
        tools(&["t"], 60_000, "public"),
    )
    .await;
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn the_size_bound_evicts_the_least_recently_used_and_zero_disables() {
    let (client, mut server) = modern(ClientConfig::new().response_cache_size(2, 1 << 20)).await;
    for uri in ["file:///a", "file:///b"] {
        read(
            &client,
            &mut server,
            uri,
            contents(uri, uri, 60_000, "public"),
        )
        .await;
    }
    assert_eq!(
        read_cached(&client, &mut server, "file:///a").await,
        "file:///a"
    );
    read(
        &client,
        &mut server,
        "file:///c",
        contents("file:///c", "c", 60_000, "public"),
    )
    .await;
    // b was the least recently used.
    assert_eq!(
        read(
            &client,
            &mut server,
            "file:///b",
            contents("file:///b", "b2", 60_000, "public")
        )
        .await,
        "b2"
    );
    client.close().await;

    let (client, mut server) = modern(ClientConfig::new().response_cache_size(0, 0)).await;
    for _ in 0..2 {
        list(
            &client,
            &mut server,
            CacheMode::Use,
            tools(&["a"], 60_000, "public"),
        )
        .await;
    }
    client.close().await;
}

#[tokio::test]
async fn pages_are_cached_per_cursor_and_a_refused_cursor_lists_again() {
    let (client, mut server) = modern(ClientConfig::new()).await;
    let page = |name: &str, ttl: u64, next: Option<&str>| {
        let mut p = tools(&[name], ttl, "public");
        if let Some(c) = next {
            p["nextCursor"] = json!(c);
        }
        p
    };
    let cursor_of = |req: &mcpwire_codec::jsonrpc::Request| {
        req.params.as_ref().unwrap().deserialize::<Value>().unwrap()["cursor"].clone()
    };
    let walk = |client: &Client| {
        let client = client.clone();
        tokio::spawn(async move { client.list_all_tools().await })
    };
    // First walk: page 1 kept a minute, page 2 not at all.
    let task = walk(&client);
    let p1 = server.expect_request("tools/list").await;
    assert_eq!(cursor_of(&p1), Value::Null);
    server.respond(&p1.id, page("a", 60_000, Some("c1"))).await;
    let p2 = server.expect_request("tools/list").await;
    assert_eq!(cursor_of(&p2), "c1");
    server.respond(&p2.id, page("b", 0, None)).await;
    assert_eq!(within(task).await.unwrap().unwrap().len(), 2);

    // Second walk: page 1 from the cache, page 2 asked with its cursor,
    // which the server no longer takes: the walk starts over.
    let task = walk(&client);
    let p2 = server.expect_request("tools/list").await;
    assert_eq!(cursor_of(&p2), "c1");
    server.respond_error(&p2.id, -32602, "Invalid cursor").await;
    let p1 = server.expect_request("tools/list").await;
    assert_eq!(cursor_of(&p1), Value::Null);
    server.respond(&p1.id, page("x", 60_000, Some("c9"))).await;
    let p2 = server.expect_request("tools/list").await;
    assert_eq!(cursor_of(&p2), "c9");
    server.respond(&p2.id, page("y", 0, None)).await;
    let all: Vec<String> = within(task)
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(all, ["x", "y"]);
    client.close().await;
}

#[tokio::test]
async fn an_answer_after_input_rounds_is_not_kept() {
    let config = ClientConfig::new().elicitation(|_p: ElicitParams, _cx: RequestContext| async {
        Ok::<_, HandlerError>(ElicitResult::new(
            ElicitAction::Accept,
            Some(Default::default()),
        ))
    });
    let (client, mut server) = modern(config).await;
    let task = tokio::spawn({
        let client = client.clone();
        async move { client.read_resource("file:///secret").await }
    });
    let req = server.expect_request("resources/read").await;
    server
        .respond(
            &req.id,
            json!({
                "resultType": "input_required",
                "inputRequests": {"ok": {"method": "elicitation/create", "params": {
                    "mode": "form", "message": "sure?", "requestedSchema": {"type": "object", "properties": {}}
                }}},
                "requestState": "s1"
            }),
        )
        .await;
    let again = server.expect_request("resources/read").await;
    server
        .respond(&again.id, contents("file:///secret", "s", 60_000, "public"))
        .await;
    within(task).await.unwrap().unwrap();
    // The answer depended on the input: the next read asks again.
    read(
        &client,
        &mut server,
        "file:///secret",
        contents("file:///secret", "s", 60_000, "public"),
    )
    .await;
    client.close().await;
}

#[tokio::test]
async fn a_fresh_discover_answer_spares_the_handshake_of_a_reconnection() {
    let (tx, mut peers) = tokio::sync::mpsc::unbounded_channel::<MemoryPeer>();
    let factory: TransportFactory = Box::new(move || {
        let (t, p) = memory_pair(16);
        let _ = tx.send(p);
        Box::pin(async move { Ok(Box::new(t) as Box<dyn Transport>) })
    });
    let config = ClientConfig::new().reconnect(
        Reconnect::new()
            .initial_delay(Duration::from_millis(10))
            .max_delay(Duration::from_millis(20)),
    );
    let connect = tokio::spawn(Client::connect_with(factory, config));
    let mut server = FakeServer::new(within(peers.recv()).await.unwrap());
    let probe = server.expect_request("server/discover").await;
    let mut discovered = discover_result();
    discovered["ttlMs"] = json!(60_000);
    discovered["instructions"] = json!("cached instructions");
    server.respond(&probe.id, discovered).await;
    let client = within(connect).await.unwrap().unwrap();
    let mut states = client.watch_state();

    server.crash(1, &[]).await;
    within(states.wait_for(|s| matches!(s, ConnectionState::Backoff { .. })))
        .await
        .unwrap();
    let mut server = FakeServer::new(within(peers.recv()).await.unwrap());
    // Ready again without asking: the first thing the new server sees is
    // the subscription stream, then the caller's request.
    within(states.wait_for(|s| matches!(s, ConnectionState::Ready)))
        .await
        .unwrap();
    ack_listen(&mut server).await;
    assert_eq!(
        client.instructions().as_deref(),
        Some("cached instructions")
    );
    barrier(&client, &mut server).await;
    client.close().await;
}
