//! Spans and metrics over real transports, as OpenTelemetry exporters
//! receive them (the `otel` feature): the demo server over stdio and over
//! Streamable HTTP (the `initialize` era), and a scripted server of the
//! stateless 2026-07-28 era over Streamable HTTP.
#![cfg(feature = "otel")]

use std::process::Stdio;
use std::time::Duration;

use mcpwire::http::{HttpConfig, Proxy};
use mcpwire::{ClientConfig, EraChoice, Server};
use mcpwire_test_support::demo_server;
use mcpwire_test_support::http::{Reply, Seen, Server as HttpServer};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};
use tracing_subscriber::layer::SubscriberExt as _;

const WAIT: Duration = Duration::from_secs(25);

struct Exporters {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meters: SdkMeterProvider,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Exporters {
    fn new() -> Self {
        let spans = InMemorySpanExporter::default();
        let tracer = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build()
            .tracer("test");
        let guard = tracing::subscriber::set_default(
            tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer)),
        );
        let metrics = InMemoryMetricExporter::default();
        let meters = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();
        Self {
            spans,
            metrics,
            meters,
            _guard: guard,
        }
    }

    fn config(&self) -> ClientConfig {
        ClientConfig::new().meter(self.meters.meter("mcpwire"))
    }

    fn span(&self, name: &str) -> SpanData {
        let all = self.spans.get_finished_spans().unwrap();
        all.iter()
            .find(|s| s.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no span {name:?} among {:?}", names(&all)))
    }

    /// The labels of each `mcp.client.operation.duration` point.
    fn operations(&self) -> Vec<Vec<KeyValue>> {
        self.meters.force_flush().unwrap();
        let mut points = Vec::new();
        for rm in self.metrics.get_finished_metrics().unwrap() {
            for sm in rm.scope_metrics() {
                for m in sm
                    .metrics()
                    .filter(|m| m.name() == "mcp.client.operation.duration")
                {
                    if let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() {
                        points.extend(h.data_points().map(|p| p.attributes().cloned().collect()));
                    }
                }
            }
        }
        points
    }
}

fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|s| s.name.to_string()).collect()
}

fn attribute(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
}

fn label<'a>(point: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    point
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

async fn demo_http() -> (Child, String) {
    let mut child = Command::new(demo_server())
        .arg("--http")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the demo server starts");
    let stdout = child.stdout.take().unwrap();
    let url = tokio::time::timeout(WAIT, BufReader::new(stdout).lines().next_line())
        .await
        .expect("a URL in time")
        .unwrap()
        .expect("a URL");
    (child, url)
}

/// Calls `echo` and then `add` with a bad argument (a tool error), and
/// checks both spans and their durations.
async fn echo_and_a_tool_error(otel: &Exporters, client: &mcpwire::Client) {
    tokio::time::timeout(WAIT, client.call_tool("echo", &json!({"message": "hi"})))
        .await
        .unwrap()
        .unwrap();
    let failed = tokio::time::timeout(WAIT, client.call_tool("add", &json!({"a": "x", "b": 1})))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.is_error, Some(true), "the demo refuses a non-number");

    let echo = otel.span("tools/call echo");
    assert_eq!(echo.span_kind, SpanKind::Client);
    assert_eq!(echo.status, Status::Unset);
    assert_eq!(attribute(&echo, "gen_ai.tool.name"), Some("echo".into()));
    let add = otel.span("tools/call add");
    assert_eq!(attribute(&add, "error.type"), Some("tool_error".into()));
    assert!(matches!(add.status, Status::Error { .. }));
    let points = otel.operations();
    let add_point = points
        .iter()
        .find(|p| label(p, "gen_ai.tool.name") == Some(&"add".into()))
        .expect("a duration for add");
    assert_eq!(label(add_point, "error.type"), Some(&"tool_error".into()));
}

#[tokio::test]
async fn over_stdio_the_demo_servers_calls_are_pipe_spans() {
    let otel = Exporters::new();
    let client = tokio::time::timeout(
        WAIT,
        mcpwire::connect(
            Server::command(demo_server(), Vec::<String>::new()),
            otel.config(),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    echo_and_a_tool_error(&otel, &client).await;
    let echo = otel.span("tools/call echo");
    assert_eq!(attribute(&echo, "network.transport"), Some("pipe".into()));
    assert_eq!(attribute(&echo, "server.address"), None);
    client.close().await;
}

#[tokio::test]
async fn over_streamable_http_the_demo_servers_calls_name_its_address() {
    let (_demo, url) = demo_http().await;
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse::<i64>()
        .unwrap();
    let otel = Exporters::new();
    let http = Server::http(url).config(HttpConfig::new().proxy(Proxy::none()));
    let client = tokio::time::timeout(WAIT, mcpwire::connect(http, otel.config()))
        .await
        .unwrap()
        .unwrap();
    echo_and_a_tool_error(&otel, &client).await;
    let echo = otel.span("tools/call echo");
    assert_eq!(attribute(&echo, "network.transport"), Some("tcp".into()));
    assert_eq!(
        attribute(&echo, "network.protocol.name"),
        Some("http".into())
    );
    assert_eq!(attribute(&echo, "server.address"), Some("127.0.0.1".into()));
    assert_eq!(attribute(&echo, "server.port"), Some(Value::I64(port)));
    let version = client.protocol_version().expect("a session");
    assert_eq!(
        attribute(&echo, "mcp.protocol.version"),
        Some(version.into())
    );
    // The demo keeps no session: none is named.
    assert_eq!(attribute(&echo, "mcp.session.id"), None);
    client.close().await;
}

fn body(seen: &Seen) -> serde_json::Value {
    serde_json::from_str(seen.body_str()).unwrap_or(serde_json::Value::Null)
}

fn answer(seen: &Seen, result: serde_json::Value) -> Reply {
    Reply::json(&json!({"jsonrpc": "2.0", "id": body(seen)["id"], "result": result}).to_string())
}

#[tokio::test]
async fn over_streamable_http_in_the_stateless_era_every_span_names_2026_07_28() {
    let server = HttpServer::start(|seen| async move {
        match body(&seen)["method"].as_str() {
            Some("server/discover") => answer(
                &seen,
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}),
            ),
            Some("tools/list") => answer(
                &seen,
                json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
            ),
            Some("tools/call") => answer(&seen, json!({"content": []})),
            _ => Reply::new(202),
        }
    })
    .await;
    let otel = Exporters::new();
    let http = Server::http(server.url("/mcp")).config(HttpConfig::new().proxy(Proxy::none()));
    let config = otel.config().era(EraChoice::Modern);
    let client = tokio::time::timeout(WAIT, mcpwire::connect(http, config))
        .await
        .unwrap()
        .unwrap();
    tokio::time::timeout(WAIT, client.call_tool("t", &json!({})))
        .await
        .unwrap()
        .unwrap();
    for name in ["server/discover", "tools/list", "tools/call t"] {
        let span = otel.span(name);
        assert_eq!(
            attribute(&span, "mcp.protocol.version"),
            Some("2026-07-28".into()),
            "{name}: every request declares it, the probe included"
        );
        assert_eq!(attribute(&span, "network.transport"), Some("tcp".into()));
        assert_eq!(
            attribute(&span, "mcp.session.id"),
            None,
            "no session in this era"
        );
    }
    client.close().await;
}

#[tokio::test]
async fn a_session_the_server_made_at_initialize_is_named_on_every_later_span() {
    let server = HttpServer::start(|seen| async move {
        match body(&seen)["method"].as_str() {
            Some("initialize") => answer(
                &seen,
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"}}),
            )
            .header("mcp-session-id", "sess-42"),
            Some("tools/call") => answer(&seen, json!({"content": []})),
            Some("server/discover") => Reply::new(404),
            _ => Reply::new(202),
        }
    })
    .await;
    let otel = Exporters::new();
    let http = Server::http(server.url("/mcp")).config(HttpConfig::new().proxy(Proxy::none()));
    let client = tokio::time::timeout(WAIT, mcpwire::connect(http, otel.config()))
        .await
        .unwrap()
        .unwrap();
    tokio::time::timeout(WAIT, client.call_tool("t", &json!({})))
        .await
        .unwrap()
        .unwrap();
    let call = otel.span("tools/call t");
    assert_eq!(attribute(&call, "mcp.session.id"), Some("sess-42".into()));
    assert_eq!(
        attribute(&otel.span("initialize"), "mcp.session.id"),
        None,
        "made by it"
    );
    client.close().await;
}
