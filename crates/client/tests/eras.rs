//! The two eras against a fake server: the probe and its fallbacks, the
//! stateless era's `_meta`, the unsupported-version retry, multi round-trip
//! requests and their limit, tools with invalid header annotations, and a
//! tampered skill.

mod common;

use std::time::Duration;

use common::within;
use mcpwire_client::types::{ElicitAction, ElicitParams, ElicitResult, LoggingLevel};
use mcpwire_client::{
    Client, ClientConfig, Era, EraChoice, ErrorKind, HandlerError, RequestContext, TraceContext,
};
use mcpwire_codec::jsonrpc::Request;
use mcpwire_test_support::{FakeServer, memory_pair};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

fn params(req: &Request) -> Value {
    req.params
        .as_ref()
        .map(|p| p.deserialize().unwrap())
        .unwrap_or(Value::Null)
}

fn discover_result(caps: Value) -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": caps,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "stateless", "version": "2"}},
        "instructions": "be brief",
        "ttlMs": 0,
        "cacheScope": "public"
    })
}

/// A client of the stateless era, past its probe.
async fn modern(config: ClientConfig, caps: Value) -> (Client, FakeServer) {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, config));
    let probe = server.expect_request("server/discover").await;
    server.respond(&probe.id, discover_result(caps)).await;
    let client = within(connect).await.unwrap().unwrap();
    (client, server)
}

fn accept(config: ClientConfig) -> ClientConfig {
    config.elicitation(|_p: ElicitParams, _cx: RequestContext| async {
        let mut content = serde_json::Map::new();
        content.insert("confirmed".into(), json!(true));
        Ok::<_, HandlerError>(ElicitResult::new(ElicitAction::Accept, Some(content)))
    })
}

#[tokio::test]
async fn the_probe_selects_the_stateless_era_and_every_request_carries_its_meta() {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, accept(ClientConfig::new())));
    let probe = server.expect_request("server/discover").await;
    let meta = params(&probe)["_meta"].clone();
    assert_eq!(meta[VERSION_KEY], "2026-07-28");
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "mcpwire"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"],
        json!({"form": {}})
    );
    server
        .respond(&probe.id, discover_result(json!({"tools": {}})))
        .await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Modern));
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    assert_eq!(client.server_info().unwrap().name, "stateless");
    assert_eq!(client.instructions().as_deref(), Some("be brief"));

    // Every later request declares the same version, and a trace context
    // travels beside it.
    let trace = TraceContext::new("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).trace_context(trace).await }
    });
    let req = server.expect_request("tools/list").await;
    let meta = params(&req)["_meta"].clone();
    assert_eq!(meta[VERSION_KEY], "2026-07-28");
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    assert_eq!(
        meta["traceparent"],
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    );
    server
        .respond(&req.id, json!({"resultType": "complete", "tools": []}))
        .await;
    within(list).await.unwrap().unwrap();
    client.close().await;
}

#[tokio::test]
async fn any_error_to_the_probe_falls_back_to_initialize() {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    // Not -32601: a legacy server's implementation-defined error.
    let probe = server.expect_request("server/discover").await;
    server
        .respond_error(&probe.id, -32602, "Invalid request parameters")
        .await;
    let init = server.handshake().await;
    assert!(
        init.get("_meta").is_none(),
        "initialize carries no stateless _meta"
    );
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Legacy));
    client.close().await;
}

/// A probe that reached no server (a refused connection) is reported as it
/// is: a server of both eras that came up meanwhile would take `initialize`,
/// and the session would be of the wrong era.
#[tokio::test]
async fn a_probe_that_reached_no_server_is_reported_without_initialize() {
    use mcpwire_transport::TransportError;
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    let frame = server.recv_frame().await.unwrap();
    let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
    server
        .undeliver(
            frame,
            TransportError::Unreachable(std::sync::Arc::new(refused)),
        )
        .await;
    let err = within(connect).await.unwrap().unwrap_err();
    assert!(err.is_unreachable(), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Transport);
    assert_eq!(err.to_string(), "could not reach the server");
    let cause = std::error::Error::source(&err).expect("the transport's error");
    assert_eq!(
        cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind),
        Some(std::io::ErrorKind::ConnectionRefused)
    );
    // No `initialize` followed: the next thing the server sees is the end.
    server.expect_closed().await;
}

#[tokio::test]
async fn a_silent_probe_falls_back_after_the_probe_timeout() {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let config = ClientConfig::new().probe_timeout(Duration::from_millis(200));
    let connect = tokio::spawn(Client::connect(transport, config));
    let _ignored = server.expect_request("server/discover").await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Legacy));
    client.close().await;
}

/// A server slow to start answers the probe after its timeout and from
/// then on serves the stateless era only (as the Python SDK 2.x does): its
/// refusal of `initialize` (`-32022`) sends the client back to
/// `server/discover`.
#[tokio::test]
async fn initialize_refused_as_the_stateless_era_after_a_late_probe_discovers_the_server() {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let config = ClientConfig::new().probe_timeout(Duration::from_millis(200));
    let connect = tokio::spawn(Client::connect(transport, config));
    let _late = server.expect_request("server/discover").await;
    let init = server.expect_request("initialize").await;
    server
        .respond_error(
            &init.id,
            -32022,
            "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted",
        )
        .await;
    let probe = server.expect_request("server/discover").await;
    server
        .respond(&probe.id, discover_result(json!({"tools": {}})))
        .await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Modern));
    client.close().await;
}

#[tokio::test]
async fn a_pinned_legacy_era_never_probes() {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let config = ClientConfig::new().era(EraChoice::Legacy);
    let connect = tokio::spawn(Client::connect(transport, config));
    // The very first message is initialize.
    match server.recv().await {
        Some(mcpwire_codec::jsonrpc::Message::Request(r)) => {
            assert_eq!(r.method, "initialize");
            server
                .respond(&r.id, mcpwire_test_support::initialize_result("2025-11-25"))
                .await;
        }
        other => panic!("{other:?}"),
    }
    server
        .expect_notification("notifications/initialized")
        .await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Legacy));
    client.close().await;
}

#[tokio::test]
async fn an_unsupported_version_is_retried_once_with_one_the_server_lists() {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let config = ClientConfig::new().era(EraChoice::Version("2026-01-01".into()));
    let connect = tokio::spawn(Client::connect(transport, config));
    let first = server.expect_request("server/discover").await;
    assert_eq!(params(&first)["_meta"][VERSION_KEY], "2026-01-01");
    server
        .send_raw(
            json!({"jsonrpc": "2.0", "id": first.id, "error": {"code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28"], "requested": "2026-01-01"}}})
            .to_string(),
        )
        .await;
    let second = server.expect_request("server/discover").await;
    assert_ne!(second.id, first.id);
    assert_eq!(params(&second)["_meta"][VERSION_KEY], "2026-07-28");
    server.respond(&second.id, discover_result(json!({}))).await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    client.close().await;
}

#[tokio::test]
async fn input_rounds_answer_with_the_handlers_and_echo_the_state() {
    let (client, mut server) = modern(accept(ClientConfig::new()), json!({})).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("book", &json!({"seat": "12A"})).await }
    });
    let first = server.expect_request("tools/call").await;
    server
        .respond(
            &first.id,
            json!({"resultType": "input_required",
                "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
                    "message": "Sure?", "requestedSchema": {"type": "object",
                        "properties": {"confirmed": {"type": "boolean"}}}}}},
                "requestState": "{\"opaque\": 1}"}),
        )
        .await;
    let retry = server.expect_request("tools/call").await;
    assert_ne!(retry.id, first.id, "a round is a new request");
    let p = params(&retry);
    assert_eq!(p["arguments"]["seat"], "12A");
    assert_eq!(p["requestState"], "{\"opaque\": 1}");
    assert_eq!(p["inputResponses"]["confirm"]["action"], "accept");
    assert_eq!(p["inputResponses"]["confirm"]["content"]["confirmed"], true);
    assert_eq!(p["_meta"][VERSION_KEY], "2026-07-28");
    server
        .respond(
            &retry.id,
            json!({"resultType": "complete", "content": [{"type": "text", "text": "booked"}]}),
        )
        .await;
    let result = within(call).await.unwrap().unwrap();
    assert_eq!(result.text(), "booked");
    client.close().await;
}

#[tokio::test]
async fn past_the_round_limit_the_call_fails_with_a_typed_error() {
    let config = accept(ClientConfig::new()).max_input_rounds(2);
    let (client, mut server) = modern(config, json!({})).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("loop", &json!({})).await }
    });
    for _ in 0..3 {
        let req = server.expect_request("tools/call").await;
        server
            .respond(
                &req.id,
                json!({"resultType": "input_required", "requestState": "again"}),
            )
            .await;
    }
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InputRequired);
    client.close().await;
    server.expect_closed().await;
}

#[tokio::test]
async fn input_without_a_handler_fails_the_call() {
    let (client, mut server) = modern(ClientConfig::new(), json!({})).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("t", &json!({})).await }
    });
    let req = server.expect_request("tools/call").await;
    server
        .respond(
            &req.id,
            json!({"resultType": "input_required",
                "inputRequests": {"s": {"method": "sampling/createMessage", "params": {}}}}),
        )
        .await;
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InputRequired);
    client.close().await;
}

#[tokio::test]
async fn in_the_initialize_era_an_input_required_result_is_just_a_result() {
    let (client, mut server) = common::connected(ClientConfig::new()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("t", &json!({})).await }
    });
    let req = server.expect_request("tools/call").await;
    server
        .respond(
            &req.id,
            json!({"resultType": "input_required", "content": []}),
        )
        .await;
    within(call).await.unwrap().unwrap();
    client.close().await;
}

#[tokio::test]
async fn tools_with_invalid_header_annotations_are_not_listed() {
    let (client, mut server) = modern(ClientConfig::new(), json!({"tools": {}})).await;
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_all_tools().await }
    });
    let req = server.expect_request("tools/list").await;
    server
        .respond(
            &req.id,
            json!({"resultType": "complete", "tools": [
                {"name": "good", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}}}},
                {"name": "bad", "inputSchema": {"type": "object", "properties": {
                    "n": {"type": "number", "x-mcp-header": "N"}}}}
            ]}),
        )
        .await;
    let tools = within(list).await.unwrap().unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    client.close().await;
}

fn digest(body: &str) -> String {
    let hash = Sha256::digest(body.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[tokio::test]
async fn a_tampered_skill_is_refused_and_nothing_more_of_it_is_read() {
    let (client, mut server) = common::connected(ClientConfig::new()).await;
    let skill_md = "---\nname: pdf\ndescription: Read PDFs\n---\nBody.\n";
    let forms = "Forms.\n";
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.skills().list_all().await }
    });
    let req = server.expect_request("skills/list").await;
    server
        .respond(
            &req.id,
            json!({"skills": [{"uri": "skill://pdf/SKILL.md",
            "frontmatter": {"name": "pdf", "description": "Read PDFs"},
            "resources": [
                {"uri": "skill://pdf/SKILL.md", "digest": digest(skill_md), "size": skill_md.len()},
                {"uri": "skill://pdf/FORMS.md", "digest": digest(forms), "size": forms.len()}
            ]}]}),
        )
        .await;
    let skills = within(list).await.unwrap().unwrap();
    assert_eq!(skills.len(), 1);

    // Same size, other bytes: the digest catches it.
    let load = tokio::spawn({
        let client = client.clone();
        let skill = skills[0].clone();
        async move { client.skills().load(&skill).await }
    });
    let read = server.expect_request("resources/read").await;
    assert_eq!(params(&read)["uri"], "skill://pdf/SKILL.md");
    let tampered = skill_md.replace("Body.", "Evil.");
    server
        .respond(
            &read.id,
            json!({"contents": [{"uri": "skill://pdf/SKILL.md", "text": tampered}]}),
        )
        .await;
    let err = within(load).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SkillVerification);

    // Untampered, both files are read and verified.
    let load = tokio::spawn({
        let client = client.clone();
        let skill = skills[0].clone();
        async move { client.skills().load(&skill).await }
    });
    for (uri, text) in [
        ("skill://pdf/SKILL.md", skill_md),
        ("skill://pdf/FORMS.md", forms),
    ] {
        let read = server.expect_request("resources/read").await;
        assert_eq!(params(&read)["uri"], uri);
        server
            .respond(&read.id, json!({"contents": [{"uri": uri, "text": text}]}))
            .await;
    }
    let loaded = within(load).await.unwrap().unwrap();
    assert_eq!(loaded.files.len(), 2);
    assert_eq!(loaded.frontmatter["name"], "pdf");
    client.close().await;
    // Nothing was read after the refused SKILL.md but the second load's files.
    server.expect_closed().await;
}

#[tokio::test]
async fn a_lost_answer_is_sent_again_with_a_new_id_only_when_safe() {
    use mcpwire_codec::jsonrpc::Message;
    use mcpwire_transport::TransportError;
    let lost = || TransportError::Lost(std::sync::Arc::new(std::io::Error::other("stream broke")));
    let (client, mut server) = common::connected(ClientConfig::new()).await;

    // A list is safe: it goes again, with a new id.
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).await }
    });
    let frame = server.recv_frame().await.unwrap();
    let Ok(Message::Request(first)) = Message::parse(frame.clone()) else {
        panic!("a request")
    };
    server.undeliver(frame, lost()).await;
    let again = server.expect_request("tools/list").await;
    assert_ne!(again.id, first.id);
    server
        .respond(
            &again.id,
            json!({"tools": [
                {"name": "write", "inputSchema": {"type": "object"}}
            ]}),
        )
        .await;
    within(list).await.unwrap().unwrap();

    // A call of a tool not annotated safe does not: its outcome is unknown.
    // (The tool list it needs comes from the cache: the server declared
    // `listChanged`, and nothing changed.)
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("write", &json!({})).await }
    });
    let frame = server.recv_frame().await.unwrap();
    server.undeliver(frame, lost()).await;
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutcomeUnknown);
    client.close().await;
    server.expect_closed().await;
}

#[tokio::test]
async fn a_task_is_polled_its_input_answered_and_its_result_returned() {
    use mcpwire_client::tasks::{TaskStatus, ToolCallOutcome};
    let config = accept(ClientConfig::new()).tasks(true);
    let (client, mut server) = modern(config, json!({"tools": {}})).await;
    let run = tokio::spawn({
        let client = client.clone();
        async move {
            let ToolCallOutcome::Task(task) = client.tasks().call_tool("slow", &json!({})).await?
            else {
                panic!("a task")
            };
            let seen = std::sync::Mutex::new(Vec::new());
            let result = client
                .tasks()
                .wait(task, Duration::from_secs(20), |t| {
                    seen.lock().unwrap().push(t.status.clone())
                })
                .await?;
            Ok::<_, mcpwire_client::Error>((result, seen.into_inner().unwrap()))
        }
    });
    let call = server.expect_request("tools/call").await;
    assert_eq!(
        params(&call)["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}})
    );
    server
        .respond(
            &call.id,
            json!({"resultType": "task", "taskId": "t1", "status": "working", "pollIntervalMs": 50}),
        )
        .await;
    let get = server.expect_request("tasks/get").await;
    assert_eq!(params(&get)["taskId"], "t1");
    server
        .respond(
            &get.id,
            json!({"resultType": "complete", "taskId": "t1", "status": "input_required",
                "pollIntervalMs": 50,
                "inputRequests": {"ok": {"method": "elicitation/create", "params": {
                    "message": "Go?", "requestedSchema": {"type": "object", "properties": {}}}}}}),
        )
        .await;
    let update = server.expect_request("tasks/update").await;
    assert_eq!(params(&update)["inputResponses"]["ok"]["action"], "accept");
    server
        .respond(&update.id, json!({"resultType": "complete"}))
        .await;
    let get = server.expect_request("tasks/get").await;
    server
        .respond(
            &get.id,
            json!({"resultType": "complete", "taskId": "t1", "status": "completed",
                "result": {"content": [{"type": "text", "text": "done"}]}}),
        )
        .await;
    let (result, seen) = within(run).await.unwrap().unwrap();
    assert_eq!(result["content"][0]["text"], "done");
    assert_eq!(
        seen,
        [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed
        ]
    );
    client.close().await;
}

/// The stateless era has no `logging/setLevel`: setting the level sends
/// nothing, and every later request asks for it in its `_meta`.
#[tokio::test]
async fn setting_the_log_level_in_the_stateless_era_stamps_later_requests() {
    let (client, mut server) = modern(ClientConfig::new(), json!({"tools": {}})).await;
    let applied = within(client.set_logging_level(LoggingLevel::Warning))
        .await
        .unwrap();
    assert_eq!(applied, mcpwire_client::LevelApplied::Stamped);
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).await }
    });
    // The first request the server sees is the listing, not a setLevel.
    let req = server.expect_request("tools/list").await;
    assert_eq!(
        params(&req)["_meta"]["io.modelcontextprotocol/logLevel"],
        "warning"
    );
    server
        .respond(&req.id, json!({"resultType": "complete", "tools": []}))
        .await;
    within(list).await.unwrap().unwrap();
    client.close().await;
}

/// The stateless era has no `ping`: the liveness check is a
/// `server/discover`, and the call succeeds when it is answered.
#[tokio::test]
async fn ping_in_the_stateless_era_is_a_server_discover() {
    let (client, mut server) = modern(ClientConfig::new(), json!({"tools": {}})).await;
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let req = server.expect_request("server/discover").await;
    server
        .respond(&req.id, discover_result(json!({"tools": {}})))
        .await;
    within(ping).await.unwrap().unwrap();
    client.close().await;
}

/// The next `tools/call`, and whether the fake server's frame of it was the
/// only hold on its bytes when it arrived.
async fn call_frame(server: &mut FakeServer) -> (bool, Request) {
    loop {
        let frame = server.recv_frame().await.expect("a frame");
        let unique = frame.is_unique();
        if let Ok(mcpwire_codec::jsonrpc::Message::Request(r)) =
            mcpwire_codec::jsonrpc::Message::parse(frame)
            && r.method == "tools/call"
        {
            return (unique, r);
        }
    }
}

#[tokio::test]
async fn a_call_is_held_for_sending_again_only_where_it_may_be_sent_again() {
    // The initialize era, a tool not listed yet (as one without
    // annotations): nothing will send the call again, so once written the
    // client holds no copy of it (a large argument is not in memory while a
    // large answer is read).
    let (client, mut server) = common::connected(ClientConfig::new()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("t", &json!({"x": 1})).await }
    });
    let (unique, req) = call_frame(&mut server).await;
    assert!(unique, "the client still holds the call");
    server.respond(&req.id, json!({"content": []})).await;
    within(call).await.unwrap().unwrap();
    client.close().await;

    // The stateless era keeps it until the answer: an input round sends it
    // again.
    let (client, mut server) = modern(ClientConfig::new(), json!({})).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("t", &json!({"x": 1})).await }
    });
    let (unique, req) = call_frame(&mut server).await;
    assert!(!unique, "kept for an input round");
    server.respond(&req.id, json!({"content": []})).await;
    within(call).await.unwrap().unwrap();
    client.close().await;
}
