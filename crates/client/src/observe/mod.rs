//! What the client tells an observer: the labels of a request and of the
//! connection under it, in the terms of the OpenTelemetry semantic
//! conventions for MCP (`labels`); the current span's trace context for a
//! request's `_meta` (`trace`); the client's metrics (`metrics`); and the
//! `tracing` spans of requests and sessions (`telemetry`).
//!
//! It uses `base`, `config` (where the meter comes from) and the wire
//! types. Observers change nothing: no layer decides what to do from what is
//! here.

pub(crate) mod labels;
pub(crate) mod trace;
pub(crate) mod metrics;
pub(crate) mod telemetry;
