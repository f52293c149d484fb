//! The client's metrics, through the OpenTelemetry metrics API (the `otel`
//! feature): the two histograms of the semantic conventions for MCP,
//! `mcp.client.operation.duration` and `mcp.client.session.duration`, and
//! the counts operators ask for next (requests in flight, requests sent
//! again, reconnections, expired sessions, bytes). Nothing is exported unless
//! the user installs a meter provider (or gives the client a
//! [`Meter`](opentelemetry::metrics::Meter)); without the feature every
//! method here is empty and the type has no size.
//!
//! Labels are bounded: a method, a tool or prompt name, an error type, the
//! transport and the server's address; never arguments or ids.

#[cfg(feature = "otel")]
use opentelemetry::KeyValue;
#[cfg(feature = "otel")]
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};

use std::sync::Arc;

use crate::observe::labels::{Peer, Subject};

/// How one request ended, for its duration histogram.
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) struct Outcome<'a> {
    pub(crate) method: &'a Arc<str>,
    pub(crate) subject: &'a Subject,
    pub(crate) error: Option<std::borrow::Cow<'static, str>>,
    pub(crate) seconds: f64,
}

/// Something that happened to a request or a session, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    /// A request whose answer was lost, sent again because it is safe.
    Reissue,
    /// A request sent again on a new session after the old one expired.
    Replay,
    /// A new connection after one was lost.
    Reconnect,
    /// A session the server expired, initialized again.
    SessionExpired,
    /// A message from the server that was not valid JSON-RPC, dropped.
    Malformed,
    /// An error the transport reported while staying open (a frame over
    /// the size limit, a broken stream it recovered from).
    TransportError,
}

/// No metrics without the `otel` feature.
#[cfg(not(feature = "otel"))]
#[derive(Debug, Default)]
pub(crate) struct Metrics;

#[cfg(not(feature = "otel"))]
impl Metrics {
    pub(crate) fn of_config(_config: &crate::config::ClientConfig) -> Self {
        Self
    }

    pub(crate) fn enabled(&self) -> bool {
        false
    }
    pub(crate) fn request_started(&self, _method: &Arc<str>, _peer: &Peer) {}
    pub(crate) fn request_ended(&self, _outcome: Outcome<'_>, _peer: &Peer) {}
    pub(crate) fn count(&self, _what: Count, _peer: &Peer) {}
    pub(crate) fn bytes(&self, _sent: bool, _n: usize, _peer: &Peer) {}
    pub(crate) fn session_ended(&self, _seconds: f64, _error: Option<&str>, _peer: &Peer) {}
}

#[cfg(feature = "otel")]
/// The bucket boundaries the conventions give for both durations, in
/// seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

#[cfg(feature = "otel")]
/// The instruments of one client, made from its meter when it connects.
#[derive(Debug)]
pub(crate) struct Metrics {
    operation: Histogram<f64>,
    session: Histogram<f64>,
    active: UpDownCounter<i64>,
    reissues: Counter<u64>,
    replays: Counter<u64>,
    reconnects: Counter<u64>,
    expiries: Counter<u64>,
    sent: Counter<u64>,
    received: Counter<u64>,
    refused: Counter<u64>,
}

#[cfg(feature = "otel")]
impl Default for Metrics {
    /// The instruments of the global meter provider as it is now.
    fn default() -> Self {
        Self::new(&opentelemetry::global::meter("mcpwire"))
    }
}

#[cfg(feature = "otel")]
impl Metrics {
    /// The instruments of the config's meter, else of the global
    /// provider's.
    pub(crate) fn of_config(config: &crate::config::ClientConfig) -> Self {
        match &config.meter {
            Some(meter) => Self::new(meter),
            None => Self::default(),
        }
    }

    pub(crate) fn new(meter: &Meter) -> Self {
        let duration = |name: &'static str, what: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(what)
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build()
        };
        let counter = |name: &'static str, unit: &'static str, what: &'static str| {
            meter
                .u64_counter(name)
                .with_unit(unit)
                .with_description(what)
                .build()
        };
        Self {
            operation: duration(
                "mcp.client.operation.duration",
                "The duration of an MCP request as the client saw it, from sending to its answer.",
            ),
            session: duration(
                "mcp.client.session.duration",
                "The duration of an MCP session as the client saw it.",
            ),
            active: meter
                .i64_up_down_counter("mcpwire.client.active_requests")
                .with_unit("{request}")
                .with_description("Requests sent and not yet answered.")
                .build(),
            reissues: counter(
                "mcpwire.client.reissues",
                "{request}",
                "Requests sent again because their answer was lost and they are safe to repeat.",
            ),
            replays: counter(
                "mcpwire.client.replays",
                "{request}",
                "Requests sent again on a new session after the server expired the old one.",
            ),
            reconnects: counter(
                "mcpwire.client.reconnects",
                "{connection}",
                "New connections made after one was lost.",
            ),
            expiries: counter(
                "mcpwire.client.session.expiries",
                "{session}",
                "Sessions the server expired, initialized again.",
            ),
            sent: counter(
                "mcpwire.client.sent",
                "By",
                "Bytes of the messages the client sent.",
            ),
            received: counter(
                "mcpwire.client.received",
                "By",
                "Bytes of the messages the client received.",
            ),
            refused: counter(
                "mcpwire.client.refused",
                "{message}",
                "Messages from the server dropped as malformed, and errors the transport recovered from (an oversized frame).",
            ),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        true
    }

    pub(crate) fn request_started(&self, method: &Arc<str>, peer: &Peer) {
        let mut attrs = peer_attributes(peer);
        attrs.push(KeyValue::new("mcp.method.name", shared(method)));
        self.active.add(1, &attrs);
    }

    pub(crate) fn request_ended(&self, outcome: Outcome<'_>, peer: &Peer) {
        let mut attrs = peer_attributes(peer);
        attrs.push(KeyValue::new("mcp.method.name", shared(outcome.method)));
        self.active.add(-1, &attrs);
        match outcome.subject {
            Subject::Tool(name) => {
                attrs.push(KeyValue::new("gen_ai.tool.name", shared(name)));
                attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }
            Subject::Prompt(name) => {
                attrs.push(KeyValue::new("gen_ai.prompt.name", shared(name)));
            }
            Subject::Resource | Subject::None => {}
        }
        if let Some(version) = peer.version() {
            attrs.push(KeyValue::new("mcp.protocol.version", shared(&version)));
        }
        if let Some(error) = outcome.error {
            attrs.push(KeyValue::new("error.type", error));
        }
        self.operation.record(outcome.seconds, &attrs);
    }

    pub(crate) fn count(&self, what: Count, peer: &Peer) {
        let attrs = peer_attributes(peer);
        let counter = match what {
            Count::Reissue => &self.reissues,
            Count::Replay => &self.replays,
            Count::Reconnect => &self.reconnects,
            Count::SessionExpired => &self.expiries,
            Count::Malformed | Count::TransportError => {
                let mut attrs = attrs;
                let why = if what == Count::Malformed {
                    "malformed"
                } else {
                    "transport"
                };
                attrs.push(KeyValue::new("error.type", why));
                self.refused.add(1, &attrs);
                return;
            }
        };
        counter.add(1, &attrs);
    }

    pub(crate) fn bytes(&self, sent: bool, n: usize, peer: &Peer) {
        let attrs = peer_attributes(peer);
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        if sent {
            self.sent.add(n, &attrs);
        } else {
            self.received.add(n, &attrs);
        }
    }

    pub(crate) fn session_ended(&self, seconds: f64, error: Option<&str>, peer: &Peer) {
        let mut attrs = peer_attributes(peer);
        if let Some(version) = peer.version() {
            attrs.push(KeyValue::new("mcp.protocol.version", shared(&version)));
        }
        if let Some(error) = error {
            attrs.push(KeyValue::new("error.type", error.to_owned()));
        }
        self.session.record(seconds, &attrs);
    }
}

#[cfg(feature = "otel")]
/// The transport's labels: `network.transport`, `network.protocol.name`,
/// `server.address`, `server.port`.
fn peer_attributes(peer: &Peer) -> Vec<KeyValue> {
    let mut attrs = Vec::with_capacity(8);
    if let Some(label) = &peer.label {
        attrs.push(KeyValue::new("mcpwire.server.name", shared(label)));
    }
    if let Some(t) = peer.transport {
        attrs.push(KeyValue::new("network.transport", t));
    }
    if let Some(p) = peer.protocol {
        attrs.push(KeyValue::new("network.protocol.name", p));
    }
    if let Some((host, port)) = &peer.address {
        attrs.push(KeyValue::new("server.address", shared(host)));
        attrs.push(KeyValue::new("server.port", i64::from(*port)));
    }
    attrs
}

/// An attribute value that shares `text` rather than copying it.
#[cfg(feature = "otel")]
fn shared(text: &Arc<str>) -> opentelemetry::Value {
    opentelemetry::Value::String(opentelemetry::StringValue::from(text.clone()))
}
