//! The spans a client opens, as any `tracing` subscriber sees them: one per
//! request, named `{mcp.method.name} {target}` through `otel.name`, with the
//! attributes of the OpenTelemetry semantic conventions for MCP, its
//! outcome (`error.type`, `rpc.response.status_code`, status) and events;
//! one per session, with how it ended. (The same spans through
//! `tracing-opentelemetry`, and the metrics, are in `otel_export.rs`.)

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::within;
use mcpwire_client::{Client, ClientConfig, ErrorKind};
use mcpwire_codec::jsonrpc::Id;
use mcpwire_test_support::{FakeServer, memory_pair};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// One closed span: its `tracing` name, fields and events.
#[derive(Debug, Clone, Default)]
struct Captured {
    name: &'static str,
    fields: BTreeMap<String, String>,
    events: Vec<BTreeMap<String, String>>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// Keeps every span of the client's targets, open and closed.
#[derive(Clone, Default)]
struct Spans {
    open: Arc<Mutex<BTreeMap<u64, Captured>>>,
    closed: Arc<Mutex<Vec<Captured>>>,
}

impl Spans {
    fn closed(&self) -> Vec<Captured> {
        self.closed.lock().unwrap().clone()
    }

    fn named(&self, otel_name: &str) -> Captured {
        let all = self.closed();
        all.iter()
            .find(|s| s.field("otel.name") == Some(otel_name))
            .cloned()
            .unwrap_or_else(|| panic!("no closed span named {otel_name:?} in {all:#?}"))
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_owned(),
            format!("{value:?}").trim_matches('"').to_owned(),
        );
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &tracing::span::Id, _: Context<'_, S>) {
        if !attrs.metadata().target().starts_with("mcpwire::") {
            return;
        }
        let mut captured = Captured {
            name: attrs.metadata().name(),
            ..Captured::default()
        };
        attrs.record(&mut Fields(&mut captured.fields));
        self.open.lock().unwrap().insert(id.into_u64(), captured);
    }

    fn on_record(&self, id: &tracing::span::Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some(c) = self.open.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut c.fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(parent) = event
            .parent()
            .cloned()
            .or_else(|| ctx.current_span().id().cloned())
        else {
            return;
        };
        if let Some(c) = self.open.lock().unwrap().get_mut(&parent.into_u64()) {
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            c.events.push(fields);
        }
    }

    fn on_close(&self, id: tracing::span::Id, _: Context<'_, S>) {
        if let Some(c) = self.open.lock().unwrap().remove(&id.into_u64()) {
            self.closed.lock().unwrap().push(c);
        }
    }
}

/// Captures this thread's spans (the tests run on a current-thread runtime,
/// so the client's tasks are seen too).
fn capture() -> (Spans, tracing::subscriber::DefaultGuard) {
    let spans = Spans::default();
    let guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    (spans, guard)
}

/// A client over an in-memory transport that says it is `kind` to `peer`.
async fn connected_as(
    kind: &'static str,
    peer: &str,
    config: ClientConfig,
) -> (Client, FakeServer) {
    let (transport, server_side) = memory_pair(64);
    let transport = transport.named(kind, peer);
    let mut server = FakeServer::new(server_side);
    let connect = tokio::spawn(Client::connect(transport, config));
    server.handshake().await;
    (within(connect).await.unwrap().unwrap(), server)
}

fn id_text(id: &Id) -> String {
    match id {
        Id::Number(n) => n.to_string(),
        Id::String(s) => s.to_string(),
    }
}

#[tokio::test]
async fn a_tool_call_is_a_client_span_named_for_its_tool_with_the_conventions_attributes() {
    let (spans, _guard) = capture();
    let (client, mut server) = connected_as(
        "streamable-http",
        "http://127.0.0.1:9/mcp",
        ClientConfig::new(),
    )
    .await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("echo", json!({"m": 1})).await });
    let req = server.expect_request("tools/call").await;
    server
        .respond(
            &req.id,
            json!({"content": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    within(call).await.unwrap().unwrap();

    let span = spans.named("tools/call echo");
    assert_eq!(span.name, "mcp request");
    assert_eq!(span.field("otel.kind"), Some("client"));
    assert_eq!(span.field("mcp.method.name"), Some("tools/call"));
    assert_eq!(span.field("gen_ai.tool.name"), Some("echo"));
    assert_eq!(span.field("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(
        span.field("jsonrpc.request.id"),
        Some(id_text(&req.id).as_str())
    );
    assert_eq!(span.field("mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(span.field("network.transport"), Some("tcp"));
    assert_eq!(span.field("network.protocol.name"), Some("http"));
    assert_eq!(span.field("server.address"), Some("127.0.0.1"));
    assert_eq!(span.field("server.port"), Some("9"));
    assert_eq!(span.field("error.type"), None, "{span:?}");
    assert_eq!(span.field("otel.status_code"), None);
    // A subscriber that only observes (no OpenTelemetry layer) changes
    // nothing that is sent: no trace context appears.
    let params: serde_json::Value = req.params.as_ref().unwrap().deserialize().unwrap();
    assert_eq!(params["_meta"].get("traceparent"), None, "{params}");
}

#[tokio::test]
async fn a_result_with_is_error_is_a_tool_error_and_the_span_fails() {
    let (spans, _guard) = capture();
    let (client, mut server) = connected_as("stdio", "srv", ClientConfig::new()).await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("boom", json!({})).await });
    let req = server.expect_request("tools/call").await;
    server
        .respond(&req.id, json!({"content": [], "isError": true}))
        .await;
    within(call).await.unwrap().unwrap();

    let span = spans.named("tools/call boom");
    assert_eq!(span.field("error.type"), Some("tool_error"));
    assert_eq!(span.field("otel.status_code"), Some("ERROR"));
    assert_eq!(span.field("rpc.response.status_code"), None);
    assert_eq!(span.field("network.transport"), Some("pipe"));
    assert_eq!(span.field("server.address"), None, "stdio has no address");
}

#[tokio::test]
async fn a_json_rpc_error_names_its_code_and_a_prompt_names_the_span() {
    let (spans, _guard) = capture();
    let (client, mut server) = connected_as("stdio", "srv", ClientConfig::new()).await;
    let c = client.clone();
    let get = tokio::spawn(async move { c.get_prompt("greet", None).await });
    let req = server.expect_request("prompts/get").await;
    server
        .respond_error(&req.id, -32602, "no such prompt")
        .await;
    let e = within(get).await.unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Server);

    let span = spans.named("prompts/get greet");
    assert_eq!(span.field("gen_ai.prompt.name"), Some("greet"));
    assert_eq!(span.field("gen_ai.tool.name"), None);
    assert_eq!(span.field("error.type"), Some("-32602"));
    assert_eq!(span.field("rpc.response.status_code"), Some("-32602"));
    assert_eq!(span.field("otel.status_code"), Some("ERROR"));
    assert!(
        span.field("otel.status_description")
            .is_some_and(|d| d.contains("no such prompt")),
        "{span:?}"
    );
}

#[tokio::test]
async fn a_timeout_is_the_error_type_of_its_span() {
    let (spans, _guard) = capture();
    let (client, mut server) = connected_as("stdio", "srv", ClientConfig::new()).await;
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.call_tool("slow", json!({}))
            .timeout(Duration::from_millis(50))
            .await
    });
    let _req = server.expect_request("tools/call").await;
    let e = within(call).await.unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(
        spans.named("tools/call slow").field("error.type"),
        Some("timeout")
    );
}

#[tokio::test]
async fn a_resource_read_carries_its_uri_but_is_named_for_its_method_only() {
    let (spans, _guard) = capture();
    let (client, mut server) = connected_as("stdio", "srv", ClientConfig::new()).await;
    let c = client.clone();
    let read = tokio::spawn(async move { c.read_resource("file:///a.txt").await });
    let req = server.expect_request("resources/read").await;
    server.respond(&req.id, json!({"contents": []})).await;
    within(read).await.unwrap().unwrap();

    let span = spans.named("resources/read");
    assert_eq!(span.field("mcp.resource.uri"), Some("file:///a.txt"));
}

#[tokio::test]
async fn progress_is_an_event_on_the_request_span() {
    let (spans, _guard) = capture();
    let (client, mut server) = connected_as("stdio", "srv", ClientConfig::new()).await;
    let c = client.clone();
    let call =
        tokio::spawn(async move { c.call_tool("long", json!({})).on_progress(|_| {}).await });
    let req = server.expect_request("tools/call").await;
    let token = req
        .params
        .as_ref()
        .unwrap()
        .deserialize::<serde_json::Value>()
        .unwrap()["_meta"]["progressToken"]
        .clone();
    server
        .notify(
            "notifications/progress",
            json!({"progressToken": token, "progress": 1, "total": 4}),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    server.respond(&req.id, json!({"content": []})).await;
    within(call).await.unwrap().unwrap();

    let span = spans.named("tools/call long");
    let progress: Vec<_> = span
        .events
        .iter()
        .filter(|e| e.get("message").map(String::as_str) == Some("progress"))
        .collect();
    assert_eq!(progress.len(), 1, "{span:#?}");
    assert_eq!(progress[0].get("progress").map(String::as_str), Some("1"));
    assert_eq!(progress[0].get("total").map(String::as_str), Some("4"));
}

#[tokio::test]
async fn a_session_span_says_its_version_transport_server_and_how_it_ended() {
    let (spans, _guard) = capture();
    let (client, _server) = connected_as("stdio", "srv", ClientConfig::new()).await;
    client.close().await;

    let all = spans.closed();
    let session = all
        .iter()
        .find(|s| s.name == "mcp session")
        .unwrap_or_else(|| panic!("no session span in {all:#?}"));
    assert_eq!(session.field("mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(session.field("network.transport"), Some("pipe"));
    assert_eq!(session.field("mcpwire.session.end"), Some("closed"));
    assert!(
        session.field("mcpwire.server.name").is_some(),
        "{session:?}"
    );
}

#[tokio::test]
async fn a_lost_session_says_so() {
    let (spans, _guard) = capture();
    let (client, server) = connected_as("stdio", "srv", ClientConfig::new()).await;
    server.crash(1, &["gone"]).await;
    within(async {
        while client.state().is_ready() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let all = spans.closed();
    let session = all
        .iter()
        .find(|s| s.name == "mcp session")
        .unwrap_or_else(|| panic!("no session span in {all:#?}"));
    assert_eq!(session.field("mcpwire.session.end"), Some("lost"));
}

#[tokio::test]
async fn a_request_the_server_sends_is_answered_inside_a_server_span() {
    use mcpwire_client::types::{ListRootsResult, Root};
    use mcpwire_client::{HandlerError, RequestContext};
    use mcpwire_codec::jsonrpc::ErrorCode;
    let (spans, _guard) = capture();
    let config = ClientConfig::new()
        .roots(|_cx: RequestContext| async {
            Ok::<_, HandlerError>(ListRootsResult::new(vec![Root::new("file:///w", None)]))
        })
        .sampling(
            |_p: mcpwire_client::types::CreateMessageParams, _cx: RequestContext| async {
                Err::<mcpwire_client::types::CreateMessageResult, _>(HandlerError::new(
                    ErrorCode::INVALID_REQUEST,
                    "no model here",
                ))
            },
        );
    let (_client, mut server) = connected_as("stdio", "srv", config).await;
    server.request(7, "roots/list", json!({})).await;
    server.expect_response(&Id::Number(7)).await;
    server
        .request(
            8,
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 1}),
        )
        .await;
    server.expect_response(&Id::Number(8)).await;
    tokio::time::sleep(Duration::from_millis(20)).await;

    let roots = spans.named("roots/list");
    assert_eq!(roots.name, "mcp server request");
    assert_eq!(roots.field("otel.kind"), Some("server"));
    assert_eq!(roots.field("jsonrpc.request.id"), Some("7"));
    assert_eq!(roots.field("error.type"), None);
    let sampling = spans.named("sampling/createMessage");
    let code = ErrorCode::INVALID_REQUEST.as_i32().to_string();
    assert_eq!(sampling.field("error.type"), Some(code.as_str()));
    assert_eq!(
        sampling.field("otel.status_description"),
        Some("no model here")
    );
}

#[tokio::test]
async fn the_transports_session_is_named_on_every_span_after_the_handshake() {
    let (spans, _guard) = capture();
    let (transport, server_side) = memory_pair(64);
    let transport = transport
        .named("streamable-http", "http://127.0.0.1:9/mcp")
        .with_detail("session-id", "s-77");
    let mut server = FakeServer::new(server_side);
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("echo", json!({})).await });
    let req = server.expect_request("tools/call").await;
    server.respond(&req.id, json!({"content": []})).await;
    within(call).await.unwrap().unwrap();
    assert_eq!(
        spans.named("tools/call echo").field("mcp.session.id"),
        Some("s-77")
    );
    assert_eq!(
        spans.named("initialize").field("mcp.session.id"),
        None,
        "the handshake makes the session"
    );
}

#[tokio::test]
async fn a_tool_error_is_only_a_tool_calls() {
    let (spans, _guard) = capture();
    let (client, mut server) = connected_as("stdio", "srv", ClientConfig::new()).await;
    let c = client.clone();
    let read = tokio::spawn(async move { c.read_resource("file:///a").await });
    let req = server.expect_request("resources/read").await;
    server
        .respond(&req.id, json!({"contents": [], "isError": true}))
        .await;
    within(read).await.unwrap().unwrap();
    assert_eq!(spans.named("resources/read").field("error.type"), None);
}
