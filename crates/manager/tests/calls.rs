//! Routed calls: unknown names, hooks that deny, a concurrency cap, a
//! session that expires mid-fleet, a crash and reconnection, resources
//! routed by their owner.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcpwire_client::{ClientConfig, ErrorKind, Reconnect};
use mcpwire_manager::{
    CallHook, CallInfo, Denial, Error, Event, Health, HookFuture, HookStage, Manager, ServerSpec,
};
use mcpwire_transport::TransportError;
use serde_json::{Value, json};

#[tokio::test]
async fn unknown_names_fail_locally_with_the_closest_names() {
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .server(ServerSpec::with_connector("b", b))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut a_seen = serve(a_peers.next().await, "a", &["echo", "read_file"]);
    let mut b_seen = serve(b_peers.next().await, "b", &["echo"]);
    within(connect).await.unwrap().unwrap();

    let err = manager.call_tool("echo", &json!({})).await.unwrap_err();
    assert_eq!(err.suggestions(), ["a__echo", "b__echo"]);
    assert!(err.to_string().contains("did you mean"), "{err}");
    let err = manager
        .call_tool("a__raed_file", &json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.suggestions()[0], "a__read_file");
    let err = manager.call_tool("zzz", &json!({})).await.unwrap_err();
    assert!(matches!(err, Error::UnknownTool { ref suggestions, .. } if suggestions.is_empty()));
    // Nothing reached either server.
    assert_eq!(seen(&mut a_seen), ["tools/list"]);
    assert_eq!(seen(&mut b_seen), ["tools/list"]);
    manager.close().await;
}

/// Denies tools whose name starts with `delete` unless the server is
/// trusted; records every call it sees, with its arguments.
struct Guard {
    seen: Arc<Mutex<Vec<(String, Value)>>>,
}

impl CallHook for Guard {
    fn before_call<'a>(&'a self, call: &'a CallInfo<'a>) -> HookFuture<'a> {
        self.seen
            .lock()
            .unwrap()
            .push((call.name.to_owned(), call.arguments.clone()));
        let verdict = if call.tool.starts_with("delete") && !call.trusted {
            Err(Denial::new("deleting needs approval"))
        } else {
            Ok(())
        };
        Box::pin(std::future::ready(verdict))
    }
}

/// Withholds answers that mention a secret.
struct Redact;

impl CallHook for Redact {
    fn after_call<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        outcome: Result<&'a mcpwire_client::types::CallToolResult, &'a Error>,
    ) -> HookFuture<'a> {
        let verdict = match outcome {
            Ok(r) if r.text().contains("secret") => Err(Denial::new("the answer holds a secret")),
            _ => Ok(()),
        };
        Box::pin(std::future::ready(verdict))
    }
}

#[tokio::test]
async fn a_hook_that_denies_stops_the_call_before_it_is_sent() {
    let (fs, mut fs_peers) = memory();
    let (trusted, mut trusted_peers) = memory();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("fs", fs))
        .server(ServerSpec::with_connector("vault", trusted).trust(true))
        .hook(Guard {
            seen: calls.clone(),
        })
        .hook(Redact)
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut fs_seen = serve(fs_peers.next().await, "fs", &["delete_file", "read"]);
    let mut vault_seen = serve(trusted_peers.next().await, "secret", &["delete_key"]);
    within(connect).await.unwrap().unwrap();

    let err = manager
        .call_tool("fs__delete_file", &json!({"path": "/etc"}))
        .await
        .unwrap_err();
    match &err {
        Error::Denied {
            name,
            server,
            reason,
            stage,
        } => {
            assert_eq!((name.as_str(), server.as_str()), ("fs__delete_file", "fs"));
            assert_eq!(reason, "deleting needs approval");
            assert_eq!(*stage, HookStage::Before);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        seen(&mut fs_seen),
        ["tools/list"],
        "the server never saw it"
    );
    let r = within(manager.call_tool("fs__read", &json!({"path": "/tmp"})))
        .await
        .unwrap();
    assert_eq!(r.text(), "fs:read");

    // A trusted server passes the guard; the answer hook withholds what it
    // answers (its text holds "secret").
    let err = manager
        .call_tool("vault__delete_key", &json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Denied {
                stage: HookStage::After,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        seen(&mut vault_seen),
        ["tools/list", "tools/call delete_key"]
    );
    assert_eq!(
        *calls.lock().unwrap(),
        [
            ("fs__delete_file".to_owned(), json!({"path": "/etc"})),
            ("fs__read".to_owned(), json!({"path": "/tmp"})),
            ("vault__delete_key".to_owned(), json!({})),
        ]
    );
    manager.close().await;
}

#[tokio::test]
async fn a_concurrency_cap_holds_calls_back() {
    let (c, mut peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("one", c).max_concurrent(1))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = peers.next().await;
    up(&mut server, &["work"]).await;
    within(connect).await.unwrap().unwrap();

    let first = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("one__work", &json!({"n": 1})).await }
    });
    let second = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("one__work", &json!({"n": 2})).await }
    });
    let req = server.expect_request("tools/call").await;
    let quiet = tokio::time::timeout(Duration::from_millis(300), server.recv()).await;
    assert!(quiet.is_err(), "a second call went out: {quiet:?}");
    server.respond(&req.id, text("first")).await;
    let req2 = server.expect_request("tools/call").await;
    server.respond(&req2.id, text("second")).await;
    let mut texts = vec![
        within(first).await.unwrap().unwrap().text(),
        within(second).await.unwrap().unwrap().text(),
    ];
    texts.sort();
    assert_eq!(texts, ["first", "second"]);
    manager.close().await;
}

#[tokio::test]
async fn an_expired_session_mid_fleet_reinitializes_refreshes_that_server_and_replays_nothing_unsafe()
 {
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .server(ServerSpec::with_connector("b", b))
        .debounce(Duration::from_millis(50))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = a_peers.next().await;
    up(&mut server, &["delete"]).await;
    let mut b_seen = serve(b_peers.next().await, "b", &["echo"]);
    within(connect).await.unwrap().unwrap();
    let mut events = manager.events();

    // A call of a tool with no read-only or idempotent annotation is in
    // flight when the session expires.
    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("a__delete", &json!({})).await }
    });
    let frame = server.recv_frame().await.unwrap();
    assert!(String::from_utf8_lossy(&frame).contains("tools/call"));
    server
        .undeliver(frame, TransportError::SessionExpired)
        .await;
    server.handshake_with(tools_only()).await;

    let err = within(call).await.unwrap().unwrap_err();
    assert!(
        matches!(err, Error::Request { ref server, .. } if server == "a"),
        "{err:?}"
    );
    assert_eq!(
        err.client_error().unwrap().kind(),
        ErrorKind::OutcomeUnknown
    );

    // The new session's lists are read again; the call is not sent again.
    let list = server.expect_request("tools/list").await;
    server
        .respond(&list.id, tool_list(&["delete", "added"]))
        .await;
    within(async {
        while manager.route("a__added").is_err() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let quiet = tokio::time::timeout(Duration::from_millis(300), server.recv()).await;
    assert!(quiet.is_err(), "something more was sent: {quiet:?}");
    assert!(
        drain(&mut events).iter().any(
            |e| matches!(e, Event::CatalogueChanged { servers } if servers == &["a".to_owned()])
        )
    );
    assert!(manager.health("a").unwrap().is_ready());
    // The rest of the fleet never noticed.
    assert_eq!(seen(&mut b_seen), ["tools/list"]);
    let r = within(manager.call_tool("b__echo", &json!({})))
        .await
        .unwrap();
    assert_eq!(r.text(), "b:echo");
    manager.close().await;
}

#[tokio::test]
async fn health_follows_a_crash_and_a_reconnection_that_refreshes_the_lists() {
    let (c, mut peers) = memory();
    let reconnect = Reconnect::new()
        .initial_delay(Duration::from_millis(20))
        .max_delay(Duration::from_millis(50));
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("s", c))
        .client_config(ClientConfig::new().reconnect(reconnect))
        .debounce(Duration::from_millis(20))
        .build()
        .unwrap();
    let mut health = manager.watch_health("s").unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = peers.next().await;
    up(&mut server, &["old"]).await;
    within(connect).await.unwrap().unwrap();
    assert!(health.borrow_and_update().is_ready());

    server.crash(1, &["boom"]).await;
    within(health.wait_for(|h| matches!(h, Health::Degraded(_))))
        .await
        .unwrap();
    // The restarted server offers other tools: they replace the old ones.
    let mut server = peers.next().await;
    server.handshake_with(tools_only()).await;
    within(health.wait_for(Health::is_ready)).await.unwrap();
    let list = server.expect_request("tools/list").await;
    server.respond(&list.id, tool_list(&["new"])).await;
    within(async {
        while manager.route("s__new").is_err() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(manager.route("s__old").is_err(), "no stale tools");
    manager.close().await;
}

#[tokio::test]
async fn resources_and_prompts_route_to_their_owner() {
    let (c, mut peers) = memory();
    let (d, mut d_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("docs", c))
        .server(ServerSpec::with_connector("other", d))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = peers.next().await;
    server
        .handshake_with(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"resources": {}, "prompts": {}},
            "serverInfo": {"name": "docs", "version": "1"}
        }))
        .await;
    let r = server.expect_request("prompts/list").await;
    server
        .respond(&r.id, json!({"prompts": [{"name": "summarize"}]}))
        .await;
    let r = server.expect_request("resources/list").await;
    server
        .respond(
            &r.id,
            json!({"resources": [{"uri": "docs://readme", "name": "readme"}]}),
        )
        .await;
    let r = server.expect_request("resources/templates/list").await;
    server
        .respond(
            &r.id,
            json!({"resourceTemplates": [{"uriTemplate": "docs://page/{id}", "name": "page"}]}),
        )
        .await;
    let _other = serve(d_peers.next().await, "other", &["x"]);
    within(connect).await.unwrap().unwrap();
    assert_eq!(manager.resources()[0].server, "docs");
    assert_eq!(manager.resource_templates()[0].server, "docs");
    assert_eq!(manager.prompts().unwrap()[0].name, "docs__summarize");
    // Where each goes, found without copying the lists.
    assert_eq!(
        manager.route_prompt("docs__summarize").unwrap(),
        ("docs".into(), "summarize".into())
    );
    assert!(matches!(
        manager.route_prompt("docs__nothing"),
        Err(Error::UnknownPrompt { .. })
    ));
    assert_eq!(manager.route_resource("docs://readme").unwrap(), "docs");
    assert_eq!(manager.route_resource("docs://page/7").unwrap(), "docs");
    assert!(matches!(
        manager.route_resource("nowhere://x"),
        Err(Error::UnknownResource { .. })
    ));

    for uri in ["docs://readme", "docs://page/7"] {
        let read = tokio::spawn({
            let m = manager.clone();
            async move { m.read_resource(uri).trace_context(trace()).await }
        });
        let r = server.expect_request("resources/read").await;
        let params: Value = r.params.unwrap().deserialize().unwrap();
        assert_eq!(params["uri"], uri);
        assert_eq!(params["_meta"]["traceparent"], TRACEPARENT, "{params}");
        server
            .respond(&r.id, json!({"contents": [{"uri": uri, "text": "hi"}]}))
            .await;
        within(read).await.unwrap().unwrap();
    }
    let err = manager.read_resource("nowhere://x").await.unwrap_err();
    assert!(matches!(err, Error::UnknownResource { .. }), "{err:?}");

    let get = tokio::spawn({
        let m = manager.clone();
        async move {
            m.get_prompt("docs__summarize", None)
                .trace_context(trace())
                .await
        }
    });
    let r = server.expect_request("prompts/get").await;
    let params: Value = r.params.unwrap().deserialize().unwrap();
    assert_eq!(params["name"], "summarize");
    assert_eq!(params["_meta"]["traceparent"], TRACEPARENT, "{params}");
    server.respond(&r.id, json!({"messages": []})).await;
    within(get).await.unwrap().unwrap();
    manager.close().await;
}

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn trace() -> mcpwire_client::TraceContext {
    mcpwire_client::TraceContext::new(TRACEPARENT)
}

/// A routed tool call takes the client's request options: each reaches
/// the server's request, and the call's own timeout bounds it.
#[tokio::test]
async fn a_routed_call_takes_the_request_options() {
    let (c, mut peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", c))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = peers.next().await;
    up(&mut server, &["t"]).await;
    within(connect).await.unwrap().unwrap();

    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("a__t", json!({})).trace_context(trace()).await }
    });
    let r = server.expect_request("tools/call").await;
    let params: Value = r.params.unwrap().deserialize().unwrap();
    assert_eq!(params["_meta"]["traceparent"], TRACEPARENT, "{params}");
    server.respond(&r.id, text("done")).await;
    within(call).await.unwrap().unwrap();

    let call = tokio::spawn({
        let m = manager.clone();
        async move {
            m.call_tool("a__t", json!({}))
                .timeout(Duration::from_millis(100))
                .await
        }
    });
    // Seen, never answered.
    server.expect_request("tools/call").await;
    let err = within(call).await.unwrap().unwrap_err();
    let Error::Request { source, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(source.kind(), ErrorKind::Timeout, "{err:?}");
    manager.close().await;
}
