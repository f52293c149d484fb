//! What the client tells an observer: a `tracing` span for every request it
//! sends and for every session, named and attributed as the OpenTelemetry
//! semantic conventions for MCP say (`docs/gen-ai/mcp.md` of
//! open-telemetry/semantic-conventions-genai, status Development), and the
//! same facts as metrics ([`crate::observe::metrics`], the `otel` feature).
//!
//! `tracing-opentelemetry` reads the `otel.*` fields as the span's name,
//! kind and status. With no subscriber interested in the target
//! [`REQUEST_TARGET`] a span is disabled at its callsite and nothing here is
//! computed beyond that check.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use mcpwire_codec::jsonrpc::{ErrorObject, Id, Payload};
use tracing::Span;
use tracing::field::Empty;

use crate::base::error::{Error, ErrorKind};
use crate::base::stamp::Route;
use crate::observe::labels::{Peer, Subject};
use crate::observe::metrics::{Metrics, Outcome};

/// The `tracing` target of request spans: filter on it to keep or drop them.
pub const REQUEST_TARGET: &str = "mcpwire::request";
/// The `tracing` target of session spans.
pub const SESSION_TARGET: &str = "mcpwire::session";

/// The `error.type` of a tool call whose result says `isError`.
const TOOL_ERROR: &str = "tool_error";

/// One request's span and the facts its metrics need when it ends.
#[derive(Debug)]
pub(crate) struct RequestTrace {
    pub(crate) span: Span,
    subject: Subject,
    /// Only while metrics are recorded: without them a request pays for
    /// neither the copy of its method nor a clock read.
    measure: Option<Measure>,
}

/// What a request's duration is recorded with.
#[derive(Debug)]
struct Measure {
    method: Arc<str>,
    started: Instant,
}

impl RequestTrace {
    /// Opens the span of the request `id` (kind CLIENT, named
    /// `{mcp.method.name} {target}`).
    pub(crate) fn start(
        method: &str,
        route: Option<&Route>,
        id: i64,
        peer: &Peer,
        metrics: &Metrics,
    ) -> Self {
        let span = tracing::info_span!(
            target: REQUEST_TARGET,
            "mcp request",
            otel.name = Empty,
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = method,
            jsonrpc.request.id = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            gen_ai.operation.name = Empty,
            mcp.resource.uri = Empty,
            mcp.protocol.version = Empty,
            mcp.session.id = Empty,
            network.transport = Empty,
            network.protocol.name = Empty,
            server.address = Empty,
            server.port = Empty,
            mcpwire.server.name = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        let subject = if span.is_disabled() && !metrics.enabled() {
            Subject::None
        } else {
            Subject::of(method, route)
        };
        if !span.is_disabled() {
            describe(&span, method, route, id, &subject, peer);
        }
        let measure = metrics.enabled().then(|| {
            let method: Arc<str> = Arc::from(method);
            metrics.request_started(&method, peer);
            Measure {
                method,
                started: Instant::now(),
            }
        });
        Self {
            span,
            subject,
            measure,
        }
    }

    /// Records how the request ended, on the span and in the metrics.
    pub(crate) fn finish(&self, outcome: &Result<Payload, Error>, peer: &Peer, metrics: &Metrics) {
        let error = match outcome {
            Ok(payload) if matches!(self.subject, Subject::Tool(_)) && is_tool_error(payload) => {
                Some(ErrorType::Tool)
            }
            Ok(_) => None,
            Err(e) => Some(ErrorType::of(e)),
        };
        if !self.span.is_disabled()
            && let Some(error) = &error
        {
            self.span.record("error.type", error.name().as_ref());
            if let Some(code) = error.code() {
                self.span.record("rpc.response.status_code", code.as_str());
            }
            self.span.record("otel.status_code", "ERROR");
            if let Err(e) = outcome {
                self.span
                    .record("otel.status_description", tracing::field::display(e));
            }
        }
        if let Some(measure) = &self.measure {
            metrics.request_ended(
                Outcome {
                    method: &measure.method,
                    subject: &self.subject,
                    error: error.as_ref().map(|e| e.name()),
                    seconds: measure.started.elapsed().as_secs_f64(),
                },
                peer,
            );
        }
    }

    /// Notes a progress report on the span.
    pub(crate) fn progress(&self, progress: f64, total: Option<f64>) {
        if !self.span.is_disabled() {
            tracing::info!(target: REQUEST_TARGET, parent: &self.span, progress, total, "progress");
        }
    }

    /// Notes on the span that the request is sent again, and why.
    pub(crate) fn sent_again(&self, why: &'static str) {
        if !self.span.is_disabled() {
            tracing::info!(target: REQUEST_TARGET, parent: &self.span, reason = why, "sent again");
        }
    }
}

/// The span of a request the server sent the client (sampling,
/// elicitation, roots), answered by one of its handlers: kind SERVER,
/// named for its method.
pub(crate) fn answer_span(method: &str, id: &Id) -> Span {
    let span = tracing::info_span!(
        target: REQUEST_TARGET,
        "mcp server request",
        otel.name = method,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if !span.is_disabled() {
        span.record("jsonrpc.request.id", tracing::field::display(id));
    }
    span
}

/// Records on `span` the error a handler answered with, if any.
pub(crate) fn answered(span: &Span, outcome: &Result<Bytes, ErrorObject>) {
    if span.is_disabled() {
        return;
    }
    if let Err(e) = outcome {
        let code = e.code.as_i32().to_string();
        span.record("error.type", code.as_str());
        span.record("rpc.response.status_code", code.as_str());
        span.record("otel.status_code", "ERROR");
        span.record("otel.status_description", e.message.as_str());
    }
}

/// Writes the request's attributes on its span.
fn describe(
    span: &Span,
    method: &str,
    route: Option<&Route>,
    id: i64,
    subject: &Subject,
    peer: &Peer,
) {
    span.record("jsonrpc.request.id", tracing::field::display(id));
    match subject {
        Subject::Tool(name) => {
            span.record("otel.name", format!("{method} {name}").as_str());
            span.record("gen_ai.tool.name", &**name);
            span.record("gen_ai.operation.name", "execute_tool");
        }
        Subject::Prompt(name) => {
            span.record("otel.name", format!("{method} {name}").as_str());
            span.record("gen_ai.prompt.name", &**name);
        }
        Subject::Resource | Subject::None => {
            span.record("otel.name", method);
        }
    }
    if *subject == Subject::Resource
        && let Some(uri) = route.and_then(|r| r.name.as_deref())
    {
        span.record("mcp.resource.uri", uri);
    }
    if let Some(v) = peer.version() {
        span.record("mcp.protocol.version", &*v);
    }
    if let Some(t) = peer.transport {
        span.record("network.transport", t);
    }
    if let Some(p) = peer.protocol {
        span.record("network.protocol.name", p);
    }
    if let Some(session) = peer.session() {
        span.record("mcp.session.id", &*session);
    }
    if let Some(label) = &peer.label {
        span.record("mcpwire.server.name", &**label);
    }
    if let Some((host, port)) = &peer.address {
        span.record("server.address", &**host);
        span.record("server.port", i64::from(*port));
    }
}

/// Whether a `tools/call` result says `isError: true` (parsed only when
/// its bytes name the member). The search is `memmem`'s, not a byte-by-byte
/// window compare: it runs on every result while metrics are recorded (the
/// `otel` feature), on the caller's task after the answer is in, and a
/// window compare over large answers showed in profiles (the figure is in
/// `docs/benchmarks.md`, "HTTP large answers and client memory").
fn is_tool_error(payload: &Payload) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    // Only a member `"isError"` whose value is `true` can make it one: a name
    // inside a string has its quotes escaped (`\"isError\"`), so it never
    // matches. A large answer is parsed only when one does.
    let json = payload.as_bytes();
    let says_true = memchr::memmem::find_iter(json, b"\"isError\"").any(|at| {
        json[at + b"\"isError\"".len()..]
            .trim_ascii_start()
            .strip_prefix(b":")
            .is_some_and(|value| value.trim_ascii_start().starts_with(b"true"))
    });
    says_true && payload.deserialize::<Flag>().is_ok_and(|f| f.is_error)
}

/// The `error.type` of a failed request: the JSON-RPC error code when the
/// server answered with one, else what kind of failure it was.
#[derive(Debug)]
enum ErrorType {
    Tool,
    Code(i64),
    Kind(&'static str),
}

impl ErrorType {
    fn of(e: &Error) -> Self {
        if let Some(code) = e.server_error().map(|s| s.code) {
            return Self::Code(i64::from(code.as_i32()));
        }
        Self::Kind(kind_name(e.kind()))
    }

    fn name(&self) -> std::borrow::Cow<'static, str> {
        match self {
            Self::Tool => TOOL_ERROR.into(),
            Self::Code(c) => c.to_string().into(),
            Self::Kind(k) => (*k).into(),
        }
    }

    fn code(&self) -> Option<String> {
        match self {
            Self::Code(c) => Some(c.to_string()),
            _ => None,
        }
    }
}

/// A low-cardinality name for each kind of failure.
fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Connect => "connect",
        ErrorKind::Transport => "transport",
        ErrorKind::Authorization => "authorization",
        ErrorKind::Protocol => "protocol",
        ErrorKind::Server => "server",
        ErrorKind::Timeout => "timeout",
        ErrorKind::Cancelled => "cancelled",
        ErrorKind::Closed => "closed",
        ErrorKind::SchemaValidation => "schema_validation",
        ErrorKind::UnsupportedVersion => "unsupported_version",
        ErrorKind::OutcomeUnknown => "outcome_unknown",
        ErrorKind::InputRequired => "input_required",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `error.type` names are an interface: dashboards and alerts
    /// match on them (`docs/observability.md`).
    #[test]
    fn each_kind_of_failure_has_its_own_documented_name() {
        let named = [
            (ErrorKind::Connect, "connect"),
            (ErrorKind::Transport, "transport"),
            (ErrorKind::Authorization, "authorization"),
            (ErrorKind::Protocol, "protocol"),
            (ErrorKind::Server, "server"),
            (ErrorKind::Timeout, "timeout"),
            (ErrorKind::Cancelled, "cancelled"),
            (ErrorKind::Closed, "closed"),
            (ErrorKind::SchemaValidation, "schema_validation"),
            (ErrorKind::UnsupportedVersion, "unsupported_version"),
            (ErrorKind::OutcomeUnknown, "outcome_unknown"),
            (ErrorKind::InputRequired, "input_required"),
        ];
        for (kind, name) in named {
            assert_eq!(kind_name(kind), name, "{kind:?}");
        }
    }

    #[test]
    fn only_a_result_that_says_is_error_true_is_a_tool_error() {
        let payload =
            |json: &str| Payload::from_json(Bytes::copy_from_slice(json.as_bytes())).unwrap();
        assert!(is_tool_error(&payload(r#"{"content":[],"isError":true}"#)));
        assert!(!is_tool_error(&payload(
            r#"{"content":[],"isError":false}"#
        )));
        assert!(!is_tool_error(&payload(r#"{"content":[]}"#)));
        // The words in a text are not the member.
        assert!(!is_tool_error(&payload(
            r#"{"content":[{"type":"text","text":"\"isError\": true"}]}"#
        )));
        // Spaces around the colon; a nested member is not the result's.
        assert!(is_tool_error(&payload(
            r#"{"content":[],"isError" :  true }"#
        )));
        assert!(!is_tool_error(&payload(
            r#"{"structuredContent":{"isError":true},"content":[],"isError":false}"#
        )));
        assert!(is_tool_error(&payload(
            r#"{"structuredContent":{"isError":false},"isError":true}"#
        )));
    }
}
