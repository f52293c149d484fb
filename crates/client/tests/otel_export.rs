//! The client's spans and metrics as an OpenTelemetry exporter receives
//! them (the `otel` feature): span names, kinds, statuses and attributes as
//! the semantic conventions for MCP spell them, and the
//! `mcp.client.operation.duration` and `mcp.client.session.duration`
//! histograms with the conventions' buckets.
#![cfg(feature = "otel")]

mod common;

use std::collections::BTreeMap;

use common::within;
use mcpwire_client::{Client, ClientConfig};
use mcpwire_test_support::{FakeServer, memory_pair};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;

/// The buckets the conventions give for both duration histograms.
const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

struct Exporters {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meter_provider: SdkMeterProvider,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Exporters {
    fn new() -> Self {
        let spans = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
        let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
        let metrics = InMemoryMetricExporter::default();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();
        Self {
            spans,
            metrics,
            meter_provider,
            _guard: guard,
        }
    }

    fn config(&self) -> ClientConfig {
        ClientConfig::new().meter(self.meter_provider.meter("mcpwire"))
    }

    fn span(&self, name: &str) -> SpanData {
        let all = self.spans.get_finished_spans().unwrap();
        all.iter()
            .find(|s| s.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no span {name:?} in {all:#?}"))
    }

    /// Every histogram point of `name`: its attributes, count and bounds.
    fn histogram(&self, name: &str) -> Vec<(BTreeMap<String, String>, u64, Vec<f64>)> {
        self.meter_provider.force_flush().unwrap();
        let mut points = Vec::new();
        for rm in self.metrics.get_finished_metrics().unwrap() {
            for sm in rm.scope_metrics() {
                for m in sm.metrics().filter(|m| m.name() == name) {
                    let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() else {
                        panic!("{name} is not an f64 histogram");
                    };
                    for p in h.data_points() {
                        points.push((attrs(p.attributes()), p.count(), p.bounds().collect()));
                    }
                }
            }
        }
        points
    }

    /// The last value of the sum `name` with the attributes `with`.
    fn sum_i64(&self, name: &str) -> Vec<i64> {
        self.meter_provider.force_flush().unwrap();
        let mut values = Vec::new();
        for rm in self.metrics.get_finished_metrics().unwrap() {
            for sm in rm.scope_metrics() {
                for m in sm.metrics().filter(|m| m.name() == name) {
                    if let AggregatedMetrics::I64(MetricData::Sum(s)) = m.data() {
                        values.extend(s.data_points().map(|p| p.value()));
                    }
                }
            }
        }
        values
    }
}

fn attrs<'a>(kvs: impl Iterator<Item = &'a KeyValue>) -> BTreeMap<String, String> {
    kvs.map(|kv| (kv.key.to_string(), kv.value.to_string()))
        .collect()
}

fn attribute(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
}

async fn connected(config: ClientConfig) -> (Client, FakeServer) {
    let (transport, peer) = memory_pair(64);
    let transport = transport.named("streamable-http", "https://mcp.example.com/mcp");
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, config));
    server.handshake().await;
    (within(connect).await.unwrap().unwrap(), server)
}

#[tokio::test]
async fn a_tool_call_exports_a_client_span_and_an_operation_duration() {
    let otel = Exporters::new();
    let (client, mut server) = connected(otel.config().server_label("search")).await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("lookup", json!({"q": "x"})).await });
    let req = server.expect_request("tools/call").await;
    server
        .respond(&req.id, json!({"content": [], "isError": true}))
        .await;
    within(call).await.unwrap().unwrap();

    let span = otel.span("tools/call lookup");
    assert_eq!(span.span_kind, SpanKind::Client);
    assert!(
        matches!(span.status, Status::Error { .. }),
        "{:?}",
        span.status
    );
    assert_eq!(
        attribute(&span, "mcp.method.name"),
        Some("tools/call".into())
    );
    assert_eq!(attribute(&span, "gen_ai.tool.name"), Some("lookup".into()));
    assert_eq!(attribute(&span, "error.type"), Some("tool_error".into()));
    assert_eq!(
        attribute(&span, "server.address"),
        Some("mcp.example.com".into())
    );
    assert_eq!(attribute(&span, "server.port"), Some(Value::I64(443)));
    assert_eq!(attribute(&span, "network.transport"), Some("tcp".into()));
    assert_eq!(
        attribute(&span, "mcp.protocol.version"),
        Some("2025-11-25".into())
    );

    let points = otel.histogram("mcp.client.operation.duration");
    let call = points
        .iter()
        .find(|(a, ..)| a.get("mcp.method.name").map(String::as_str) == Some("tools/call"))
        .unwrap_or_else(|| panic!("no tools/call point in {points:#?}"));
    assert_eq!(call.1, 1, "one call recorded");
    assert_eq!(call.2, BUCKETS.to_vec());
    assert_eq!(
        call.0.get("gen_ai.tool.name").map(String::as_str),
        Some("lookup")
    );
    assert_eq!(
        call.0.get("error.type").map(String::as_str),
        Some("tool_error")
    );
    assert_eq!(
        call.0.get("server.address").map(String::as_str),
        Some("mcp.example.com")
    );
    assert!(
        !call.0.contains_key("jsonrpc.request.id"),
        "no unbounded label"
    );
    assert_eq!(
        call.0.get("mcpwire.server.name").map(String::as_str),
        Some("search")
    );
    assert_eq!(
        attribute(&span, "mcpwire.server.name"),
        Some("search".into())
    );
    assert_eq!(
        otel.sum_i64("mcpwire.client.active_requests")
            .iter()
            .sum::<i64>(),
        0,
        "nothing in flight once answered"
    );
}

#[tokio::test]
async fn a_closed_session_records_its_duration() {
    let otel = Exporters::new();
    let (client, _server) = connected(otel.config()).await;
    client.close().await;
    let points = otel.histogram("mcp.client.session.duration");
    assert_eq!(points.len(), 1, "{points:#?}");
    let (attrs, count, bounds) = &points[0];
    assert_eq!(*count, 1);
    assert_eq!(bounds, &BUCKETS.to_vec());
    assert_eq!(
        attrs.get("mcp.protocol.version").map(String::as_str),
        Some("2025-11-25")
    );
    assert_eq!(
        attrs.get("error.type"),
        None,
        "closed by the user: no error"
    );
    let session = otel.span("mcp session");
    assert_eq!(
        attribute(&session, "mcpwire.session.end"),
        Some("closed".into())
    );
}

impl Exporters {
    /// The total of the counter `name`.
    fn count(&self, name: &str) -> u64 {
        self.meter_provider.force_flush().unwrap();
        let mut total = 0;
        // Cumulative: the last export holds the running total.
        if let Some(rm) = self.metrics.get_finished_metrics().unwrap().last() {
            for sm in rm.scope_metrics() {
                for m in sm.metrics().filter(|m| m.name() == name) {
                    if let AggregatedMetrics::U64(MetricData::Sum(s)) = m.data() {
                        total += s.data_points().map(|p| p.value()).sum::<u64>();
                    }
                }
            }
        }
        total
    }
}

#[tokio::test]
async fn a_lost_answer_sent_again_is_counted_and_marked_on_the_new_request() {
    use mcpwire_transport::TransportError;
    let otel = Exporters::new();
    let (client, mut server) = connected(otel.config()).await;
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).await }
    });
    let frame = server.recv_frame().await.unwrap();
    let lost = TransportError::Lost(std::sync::Arc::new(std::io::Error::other("stream broke")));
    server.undeliver(frame, lost).await;
    let again = server.expect_request("tools/list").await;
    server.respond(&again.id, json!({"tools": []})).await;
    within(list).await.unwrap().unwrap();

    assert_eq!(otel.count("mcpwire.client.reissues"), 1);
    assert!(otel.count("mcpwire.client.sent") > 0, "bytes sent counted");
    assert!(
        otel.count("mcpwire.client.received") > 0,
        "bytes received counted"
    );
    let spans = otel.spans.get_finished_spans().unwrap();
    let lists: Vec<_> = spans.iter().filter(|s| s.name == "tools/list").collect();
    assert_eq!(lists.len(), 2, "one span per request sent: {lists:#?}");
    assert_eq!(
        attribute(lists[0], "error.type"),
        Some("outcome_unknown".into()),
        "the first lost its answer"
    );
    assert!(
        lists[1].events.iter().any(|e| e.name == "sent again"),
        "{:#?}",
        lists[1].events
    );
}

#[tokio::test]
async fn a_reconnection_is_counted_and_the_lost_session_timed_with_its_error() {
    let otel = Exporters::new();
    let (f, mut peers) = common::factory();
    let config = otel.config().reconnect(
        mcpwire_client::Reconnect::new()
            .initial_delay(std::time::Duration::from_millis(1))
            .max_attempts(3),
    );
    let connect = tokio::spawn(Client::connect_with(f, config));
    let mut server = FakeServer::new(within(peers.recv()).await.unwrap());
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    server.crash(1, &["bye"]).await;
    let mut server = FakeServer::new(within(peers.recv()).await.unwrap());
    server.handshake().await;
    within(async {
        while !client.state().is_ready() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await;

    assert_eq!(otel.count("mcpwire.client.reconnects"), 1);
    let sessions = otel.histogram("mcp.client.session.duration");
    assert!(
        sessions
            .iter()
            .any(|(a, n, _)| *n == 1 && a.get("error.type").map(String::as_str) == Some("closed")),
        "{sessions:#?}"
    );
    client.close().await;
}

#[tokio::test]
async fn a_stateless_session_names_its_version_on_every_request() {
    let otel = Exporters::new();
    let (transport, peer) = memory_pair(64);
    let transport = transport.named("streamable-http", "http://127.0.0.1:7/mcp");
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(Client::connect(transport, otel.config()));
    let probe = server.expect_request("server/discover").await;
    server
        .respond(
            &probe.id,
            json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
            }),
        )
        .await;
    let client = within(connect).await.unwrap().unwrap();
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("t", json!({})).await });
    // A client of this era knows the tool before calling it.
    let list = server.expect_request("tools/list").await;
    server
        .respond(
            &list.id,
            json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
        )
        .await;
    let req = server.expect_request("tools/call").await;
    server.respond(&req.id, json!({"content": []})).await;
    within(call).await.unwrap().unwrap();

    let span = otel.span("tools/call t");
    assert_eq!(
        attribute(&span, "mcp.protocol.version"),
        Some("2026-07-28".into())
    );
    assert_eq!(attribute(&span, "error.type"), None);
    assert_eq!(span.status, Status::Unset);
    let points = otel.histogram("mcp.client.operation.duration");
    assert!(
        points.iter().any(|(a, ..)| {
            a.get("mcp.method.name").map(String::as_str) == Some("server/discover")
        }),
        "the probe is an operation too: {points:#?}"
    );
}

#[tokio::test]
async fn a_malformed_message_is_counted_as_refused() {
    let otel = Exporters::new();
    let (client, server) = connected(otel.config()).await;
    server
        .send_raw(&b"{\"jsonrpc\": \"2.0\", \"no\": \"method\"}"[..])
        .await;
    server.send_raw(&b"not json at all"[..]).await;
    // A ping after them: answered once the driver has read both.
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let mut server = server;
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
    assert_eq!(otel.count("mcpwire.client.refused"), 2);
}

#[tokio::test]
async fn metrics_name_the_tool_without_any_tracing_subscriber() {
    let metrics = InMemoryMetricExporter::default();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let config = ClientConfig::new().meter(meter_provider.meter("mcpwire"));
    let (client, mut server) = connected(config).await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("lookup", json!({})).await });
    let req = server.expect_request("tools/call").await;
    server.respond(&req.id, json!({"content": []})).await;
    within(call).await.unwrap().unwrap();
    meter_provider.force_flush().unwrap();
    let mut tools = Vec::new();
    for rm in metrics.get_finished_metrics().unwrap() {
        for sm in rm.scope_metrics() {
            for m in sm
                .metrics()
                .filter(|m| m.name() == "mcp.client.operation.duration")
            {
                if let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() {
                    for p in h.data_points() {
                        tools.extend(attrs(p.attributes()).remove("gen_ai.tool.name"));
                    }
                }
            }
        }
    }
    assert_eq!(tools, ["lookup"]);
}

#[tokio::test]
async fn a_timeout_is_exported_as_the_spans_error_and_the_durations_label() {
    let otel = Exporters::new();
    let (client, mut server) = connected(otel.config()).await;
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.call_tool("slow", json!({}))
            .timeout(std::time::Duration::from_millis(50))
            .await
    });
    let _unanswered = server.expect_request("tools/call").await;
    let e = within(call).await.unwrap().unwrap_err();
    assert_eq!(e.kind(), mcpwire_client::ErrorKind::Timeout);

    let span = otel.span("tools/call slow");
    assert_eq!(attribute(&span, "error.type"), Some("timeout".into()));
    assert!(
        matches!(span.status, Status::Error { .. }),
        "{:?}",
        span.status
    );
    let points = otel.histogram("mcp.client.operation.duration");
    assert!(
        points.iter().any(|(a, n, _)| *n == 1
            && a.get("gen_ai.tool.name").map(String::as_str) == Some("slow")
            && a.get("error.type").map(String::as_str) == Some("timeout")),
        "{points:#?}"
    );
}
