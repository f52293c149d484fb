//! Trace context in `_meta` from the current `tracing` span: with the
//! `otel` feature, a request made inside a span that `tracing-opentelemetry`
//! follows carries the `traceparent` of the request's own span, a child of
//! the caller's; an explicit `TraceContext` wins; without the feature
//! nothing is added.

mod common;

use common::{connected, within};
use mcpwire_client::{Client, ClientConfig};
use mcpwire_test_support::FakeServer;
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::{Value, json};
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// Makes `tracing` spans OpenTelemetry spans on this thread (the tests run
/// on a current-thread runtime, so every task sees it).
#[cfg(not(feature = "otel"))]
fn otel_spans() -> tracing::subscriber::DefaultGuard {
    otel_spans_into(InMemorySpanExporter::default())
}

/// [`otel_spans`], each span exported into `exporter` when it ends.
fn otel_spans_into(exporter: InMemorySpanExporter) -> tracing::subscriber::DefaultGuard {
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter)
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("mcpwire-test"));
    tracing::subscriber::set_default(tracing_subscriber::registry().with(layer))
}

/// Sends `ping` (never answered from the response cache) from inside
/// `span` and returns the `_meta` the server saw.
async fn meta_of_a_call_in(
    client: &Client,
    server: &mut FakeServer,
    span: tracing::Span,
    explicit: Option<mcpwire_client::TraceContext>,
) -> Value {
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            let call = client.ping();
            match explicit {
                Some(t) => call.trace_context(t).await,
                None => call.await,
            }
        }
        .instrument(span)
    });
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    within(call).await.unwrap().unwrap();
    let params: Value = req
        .params
        .map(|p| p.deserialize().unwrap())
        .unwrap_or(Value::Null);
    params["_meta"].clone()
}

#[cfg(feature = "otel")]
#[tokio::test]
async fn a_request_in_a_span_carries_its_traceparent_and_an_explicit_one_wins() {
    let exporter = InMemorySpanExporter::default();
    let _spans = otel_spans_into(exporter.clone());
    let (client, mut server) = connected(ClientConfig::new()).await;
    let span = tracing::info_span!("agent step");
    let sc = span.context().span().span_context().clone();
    assert!(sc.is_valid(), "the test's span has a context");
    let meta = meta_of_a_call_in(&client, &mut server, span.clone(), None).await;
    // The parent named is the request's own span, a child of the caller's.
    let exported = exporter.get_finished_spans().unwrap();
    let ping = exported
        .iter()
        .find(|s| s.name == "ping")
        .unwrap_or_else(|| panic!("no ping span in {exported:#?}"));
    assert_eq!(
        ping.parent_span_id,
        sc.span_id(),
        "a child of the caller's span"
    );
    assert_eq!(ping.span_context.trace_id(), sc.trace_id());
    let want = format!("00-{}-{}-01", sc.trace_id(), ping.span_context.span_id());
    assert_eq!(meta["traceparent"], want.as_str());
    assert_eq!(meta.get("tracestate"), None, "no state: none sent");

    let explicit = mcpwire_client::TraceContext::new(
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    )
    .tracestate("vendor=1");
    let meta = meta_of_a_call_in(&client, &mut server, span, Some(explicit)).await;
    assert_eq!(
        meta["traceparent"],
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    );
    assert_eq!(meta["tracestate"], "vendor=1");

    // Outside any span: the request's span starts a trace of its own.
    let meta = meta_of_a_call_in(&client, &mut server, tracing::Span::none(), None).await;
    let sent = meta["traceparent"].as_str().expect("a traceparent");
    let exported = exporter.get_finished_spans().unwrap();
    let root = exported
        .iter()
        .rfind(|s| s.name == "ping")
        .expect("the second ping's span");
    assert_ne!(root.span_context.trace_id(), sc.trace_id());
    assert_eq!(
        sent,
        format!(
            "00-{}-{}-01",
            root.span_context.trace_id(),
            root.span_context.span_id()
        )
    );
}

#[cfg(not(feature = "otel"))]
#[tokio::test]
async fn without_the_feature_a_span_adds_no_traceparent() {
    let _spans = otel_spans();
    let (client, mut server) = connected(ClientConfig::new()).await;
    let span = tracing::info_span!("agent step");
    assert!(span.context().span().span_context().is_valid());
    let meta = meta_of_a_call_in(&client, &mut server, span, None).await;
    assert_eq!(meta.get("traceparent"), None, "{meta}");
}
