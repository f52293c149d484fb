//! Trace context from the current `tracing` span (the `otel` feature): the
//! span's OpenTelemetry context, as `tracing-opentelemetry` keeps it, written
//! as W3C `traceparent` and `tracestate` for a request's `_meta` (SEP-414).
//! Without the feature, or outside a span with a valid context, there is
//! none, and only an explicit [`TraceContext`] is carried.

use crate::base::options::TraceContext;

/// The current span's trace context, if it has a valid one.
#[cfg(feature = "otel")]
pub(crate) fn from_current_span() -> Option<TraceContext> {
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    let context = tracing::Span::current().context();
    let span = context.span();
    let sc = span.span_context();
    if !sc.is_valid() {
        return None;
    }
    // Version 00: trace id (32 hex digits), parent id (16), flags (2).
    let traceparent = format!(
        "00-{}-{}-{:02x}",
        sc.trace_id(),
        sc.span_id(),
        sc.trace_flags().to_u8()
    );
    let state = sc.trace_state().header();
    let context = TraceContext::new(traceparent);
    Some(if state.is_empty() {
        context
    } else {
        context.tracestate(state)
    })
}

/// Without the `otel` feature there is no span context to read.
#[cfg(not(feature = "otel"))]
pub(crate) fn from_current_span() -> Option<TraceContext> {
    None
}
