//! The request engine of one connection: ids, encoding, sending, and
//! completing the caller. The pending table and its timer are
//! [`crate::requests::pending`]'s; the options [`crate::base::options`]'.
//!
//! Callers encode their request into a `Bytes` and push it into the
//! transport's [`FrameSender`] on their own task: there is no client task on
//! the way out and no task per request. The driver task completes the caller
//! directly through a oneshot found in the pending table.
//!
//! The engine knows nothing of the handshake: a lifecycle (see
//! [`crate::session::lifecycle`]) runs over it like any other caller. Every request
//! is encoded by [`encode`], the one place a lifecycle that puts `_meta` on
//! every request (the stateless 2026 revision) would add it.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mcpwire_codec::SpareBuffer;
use mcpwire_codec::jsonrpc::{Id, Payload, encode_notification, encode_request_vec};
use mcpwire_transport::{FrameMeta, FrameSender, Outgoing, SendError};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::base::error::Error;
use crate::base::lock::RwLock;
use crate::base::options::{Replay, RequestOptions, TraceContext};
use crate::base::signal::{DriverSignal, SIGNAL_REARM};
use crate::base::stamp::{Route, Stamp};
use crate::observe::labels::Peer;
use crate::observe::metrics::Metrics;
use crate::observe::telemetry::RequestTrace;
use crate::observe::trace;
use crate::requests::pending::{Cancel, Pending, PendingTable, Timer};
use crate::types::Progress;

/// Counters for one connection.
#[derive(Debug, Default)]
pub(crate) struct EngineStats {
    pub(crate) malformed: AtomicU64,
    pub(crate) late_responses: AtomicU64,
}

/// One connection's request state.
pub(crate) struct Engine {
    sender: FrameSender,
    next_id: Arc<AtomicI64>,
    default_timeout: Duration,
    pending: PendingTable,
    /// What the era adds to every request (set by the lifecycle).
    stamp: RwLock<Arc<Stamp>>,
    /// The driver's mailbox (close, re-arm).
    pub(crate) signal: DriverSignal,
    pub(crate) stats: EngineStats,
    /// What the connection's spans and metrics say of its transport.
    peer: Arc<Peer>,
    metrics: Arc<Metrics>,
}

impl Engine {
    pub(crate) fn new(
        sender: FrameSender,
        next_id: Arc<AtomicI64>,
        default_timeout: Duration,
        peer: Arc<Peer>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            sender,
            next_id,
            default_timeout,
            pending: PendingTable::new(),
            stamp: RwLock::new(Stamp::none()),
            signal: DriverSignal::default(),
            stats: EngineStats::default(),
            peer,
            metrics,
        }
    }

    /// What this connection's spans and metrics say of its transport.
    pub(crate) fn peer(&self) -> &Peer {
        &self.peer
    }

    pub(crate) fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    pub(crate) fn sender(&self) -> &FrameSender {
        &self.sender
    }

    /// What every request gets from now on.
    pub(crate) fn set_stamp(&self, stamp: Arc<Stamp>) {
        // The version every request now declares is the one its span names
        // (none in the `initialize` era until the handshake settles it).
        self.peer.declare_version(stamp.version());
        *self.stamp.write() = stamp;
    }

    pub(crate) fn stamp(&self) -> Arc<Stamp> {
        self.stamp.read().clone()
    }

    /// Sends a request and waits for its outcome, as a raw payload.
    /// `replay` is what the method allows by itself; `cancel` whether the
    /// server is told when the caller gives up.
    ///
    /// Cancellation safety: dropping the future removes the pending entry
    /// and, if the request was already queued, cancels it (`send_cancel`:
    /// its answer stream closed, or `notifications/cancelled` queued
    /// without waiting).
    /// The server may still act on the request; its late response is ignored.
    pub(crate) async fn call<P: Serialize + ?Sized>(
        &self,
        method: Cow<'static, str>,
        params: Option<&P>,
        opts: &RequestOptions,
        replay: Replay,
        cancel: Cancel,
    ) -> Result<Payload, Error> {
        let request = self.encode_request(&method, params, opts, None)?;
        self.call_encoded(request, method, opts, replay, cancel)
            .await
    }

    /// Encodes a request with the next id, without sending it. The caller
    /// may then drop its parameters before [`call_encoded`](Self::call_encoded)
    /// waits for the answer: for a large argument that halves the memory
    /// held while the answer arrives.
    ///
    /// The connection's [`Stamp`] is applied here, the one place every
    /// request passes: its `_meta` members join the params, and its header
    /// fields (with `route`'s name and parameters) go beside the frame.
    pub(crate) fn encode_request<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
        opts: &RequestOptions,
        route: Option<&Route>,
    ) -> Result<EncodedRequest, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let stamp = self.stamp();
        let request_trace = RequestTrace::start(method, route, id, &self.peer, &self.metrics);
        // An explicit trace context wins; else the request's span's (the
        // `otel` feature), a child of the caller's.
        let from_span = match &opts.trace {
            Some(_) => None,
            None => request_trace.span.in_scope(trace::from_current_span),
        };
        let extra = Extra {
            progress: opts.wants_progress(),
            stamp: stamp.meta(),
            trace: opts.trace.as_ref().or(from_span.as_ref()),
        };
        let frame = encode(&REQUEST_FRAMES, id, method, params, &extra)?;
        let meta = if self.sender.wants_meta() {
            stamp.frame_meta(method, route)
        } else {
            None
        };
        Ok(EncodedRequest {
            id,
            frame,
            meta,
            trace: request_trace,
        })
    }

    /// Sends a request made by [`encode_request`](Self::encode_request) with
    /// the same `opts`, and waits for its outcome, as [`call`](Self::call)
    /// does, inside the request's span.
    pub(crate) async fn call_encoded(
        &self,
        request: EncodedRequest,
        method: Cow<'static, str>,
        opts: &RequestOptions,
        replay: Replay,
        cancel: Cancel,
    ) -> Result<Payload, Error> {
        let EncodedRequest {
            id,
            frame,
            meta,
            trace,
        } = request;
        let span = trace.span.clone();
        let outcome = self
            .send_and_wait(id, frame, meta, &trace, method, opts, replay, cancel)
            .instrument(span)
            .await;
        trace.finish(&outcome, &self.peer, &self.metrics);
        outcome
    }

    /// [`call_encoded`](Self::call_encoded) without its span.
    #[allow(clippy::too_many_arguments)]
    async fn send_and_wait(
        &self,
        id: i64,
        frame: Bytes,
        meta: Option<Arc<FrameMeta>>,
        trace: &RequestTrace,
        method: Cow<'static, str>,
        opts: &RequestOptions,
        replay: Replay,
        cancel: Cancel,
    ) -> Result<Payload, Error> {
        self.metrics.bytes(true, frame.len(), &self.peer);
        // What the transport is told the frame is (HTTP then need not read
        // it). A full queue hands the whole message back for the second try.
        let out = Outgoing::request(frame, Id::Number(id), method.clone()).with_meta(meta);
        let (tx, mut rx) = oneshot::channel();
        let (progress_tx, mut progress_rx) = if opts.wants_progress() {
            let (t, r) = watch::channel(None);
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        self.pending.insert(
            id,
            Pending {
                tx,
                progress: progress_tx,
                method,
                replayable: replay == Replay::Allow || opts.replay == Replay::Allow,
                timer: None,
            },
        )?;
        let mut guard = PendingGuard {
            engine: self,
            id,
            armed: true,
            sent: false,
            cancel,
        };
        match self.sender.try_send(out) {
            Ok(()) => {}
            Err(SendError::Busy(out)) => self.sender.send(out).await.map_err(Error::send)?,
            Err(e) => return Err(Error::send(e)),
        }
        guard.sent = true;
        self.start_timer(id, opts, cancel);

        let outcome = if opts.cancel.is_none() && progress_rx.is_none() {
            // The common case needs no select: the answer, the timeout and
            // the close all arrive through the oneshot.
            (&mut rx).await
        } else {
            loop {
                tokio::select! {
                    biased;
                    outcome = &mut rx => break outcome,
                    () = cancelled(&opts.cancel) => {
                        guard.cancel("cancelled by the caller");
                        return Err(Error::cancelled("request cancelled by the caller"));
                    }
                    Some(()) = progress_changed(&mut progress_rx) => {
                        report_progress(&mut progress_rx, opts, trace);
                    }
                }
            }
        };
        // Progress that came with the answer (read in the same batch, or
        // while this task was busy) is reported before the result.
        if progress_rx
            .as_ref()
            .is_some_and(|r| r.borrow().has_changed())
        {
            report_progress(&mut progress_rx, opts, trace);
        }
        // Answered, timed out by the driver's sweep (which told the server),
        // or failed by the close: the entry is gone either way.
        guard.armed = false;
        outcome.unwrap_or_else(|_| Err(Error::closed(None, None, Vec::new())))
    }

    /// Starts the timeout of the sent request `id`, and wakes the driver if
    /// its timer must fire earlier than it is armed for.
    fn start_timer(&self, id: i64, opts: &RequestOptions, cancel: Cancel) {
        let timeout = opts.timeout.unwrap_or(self.default_timeout);
        let timer = Timer::start(
            Instant::now(),
            timeout,
            opts.max_total,
            opts.deadline,
            cancel,
        );
        if self.pending.start_timer(id, timer) {
            self.signal.raise(SIGNAL_REARM);
        }
    }

    /// When the driver's timer should fire next, if at all.
    pub(crate) fn armed(&self) -> Option<Instant> {
        self.pending.armed()
    }

    /// Fails every request whose deadline has passed with a timeout error
    /// and tells the server; returns when the timer should fire next.
    pub(crate) fn sweep(&self) -> Option<Instant> {
        let (expired, next) = self.pending.sweep(Instant::now());
        for e in expired {
            let _ = e.tx.send(Err(Error::timeout(e.after)));
            if e.cancel == Cancel::Notify {
                self.send_cancel(e.id, "timeout");
            }
        }
        next
    }

    /// Sends a notification, waiting for room in the queue.
    pub(crate) async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        let mut buf = BytesMut::new();
        encode_notification(&mut buf, method, params)
            .map_err(|e| Error::decode("notification params", e))?;
        let out = Outgoing::notification(buf.freeze(), method.to_owned());
        self.sender.send(out).await.map_err(Error::send)
    }

    /// Completes the caller waiting for `id`. False if nobody waits (a late
    /// response to a request that timed out or was cancelled).
    pub(crate) fn complete(&self, id: i64, outcome: Result<Payload, Error>) -> bool {
        match self.pending.remove(id) {
            Some(p) => {
                let _ = p.tx.send(outcome);
                true
            }
            None => {
                self.stats.late_responses.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Routes progress to the request whose token it carries.
    pub(crate) fn progress(&self, progress: Progress) {
        if let Some(token) = progress.progress_token.as_i64() {
            self.pending.progress(token, progress);
        }
    }

    /// Whether the pending request `id` may be sent again, and its method.
    pub(crate) fn replay_info(&self, id: i64) -> Option<(bool, Cow<'static, str>)> {
        self.pending.replay_info(id)
    }

    /// Fails every pending request with `error`; later calls fail at once.
    pub(crate) fn close_all(&self, error: Error) {
        for p in self.pending.close(error.clone()) {
            let _ = p.tx.send(Err(error.clone()));
        }
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.pending.len()
    }

    fn forget(&self, id: i64) -> bool {
        self.pending.remove(id).is_some()
    }

    /// Tells the server the request `id` is given up: in the stateless era
    /// over Streamable HTTP by closing its answer stream (the transport's
    /// [`FrameSender::abort`]), otherwise with `notifications/cancelled`
    /// (stdio, and every transport of the `initialize` era).
    fn send_cancel(&self, id: i64, reason: &str) {
        if self.stamp().version().is_some() && self.sender.abort(&Id::Number(id)) {
            tracing::debug!(id, reason, "request cancelled: its answer stream is closed");
            return;
        }
        const CANCELLED: &str = "notifications/cancelled";
        let params = serde_json::json!({"requestId": id, "reason": reason});
        let mut buf = BytesMut::new();
        if encode_notification(&mut buf, CANCELLED, Some(&params)).is_err() {
            return;
        }
        let out = Outgoing::notification(buf.freeze(), CANCELLED);
        if let Err(SendError::Busy(out)) = self.sender.try_send(out) {
            // The queue is full: hand the notice to a task rather than block
            // a drop. Without a runtime it is simply not sent.
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                let sender = self.sender.clone();
                rt.spawn(async move {
                    let _ = sender.send(out).await;
                });
            }
        }
    }
}

async fn cancelled(token: &Option<CancellationToken>) {
    match token {
        Some(t) => t.cancelled().await,
        None => std::future::pending().await,
    }
}

/// Gives the latest progress, not yet seen, to the caller's callback, and
/// notes it on the request's span.
fn report_progress(
    rx: &mut Option<watch::Receiver<Option<Progress>>>,
    opts: &RequestOptions,
    trace: &RequestTrace,
) {
    let latest = rx.as_mut().and_then(|r| r.borrow_and_update().clone());
    if let Some(p) = &latest {
        trace.progress(p.progress, p.total);
    }
    if let (Some(p), Some(cb)) = (&latest, &opts.on_progress) {
        cb(p);
    }
}

async fn progress_changed(rx: &mut Option<watch::Receiver<Option<Progress>>>) -> Option<()> {
    match rx {
        Some(r) => r.changed().await.ok(),
        None => std::future::pending().await,
    }
}

/// Frees the pending entry if the caller gives up (timeout or drop) and tells
/// the server.
struct PendingGuard<'a> {
    engine: &'a Engine,
    id: i64,
    armed: bool,
    sent: bool,
    cancel: Cancel,
}

impl PendingGuard<'_> {
    fn cancel(&mut self, reason: &str) {
        if !self.armed {
            return;
        }
        self.armed = false;
        let was_pending = self.engine.forget(self.id);
        if was_pending && self.sent && self.cancel == Cancel::Notify {
            self.engine.send_cancel(self.id, reason);
        }
    }
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.cancel("cancelled by the client");
    }
}

/// A request encoded with its id, not yet sent, and the header fields that
/// go beside it.
pub(crate) struct EncodedRequest {
    id: i64,
    frame: Bytes,
    meta: Option<Arc<FrameMeta>>,
    trace: RequestTrace,
}

impl EncodedRequest {
    /// The frame as it will be sent.
    pub(crate) fn frame(&self) -> &Bytes {
        &self.frame
    }

    /// The request's span and what its metrics need.
    pub(crate) fn trace(&self) -> &RequestTrace {
        &self.trace
    }
}

/// What `encode` adds to `params._meta`.
struct Extra<'a> {
    /// A progress token (the request id).
    progress: bool,
    /// The era's members (the caller's own members of the same name win).
    stamp: &'a Map<String, Value>,
    trace: Option<&'a TraceContext>,
}

impl Extra<'_> {
    fn is_empty(&self) -> bool {
        !self.progress && self.stamp.is_empty() && self.trace.is_none()
    }
}

impl EncodedRequest {
    /// The request's id.
    pub(crate) fn id(&self) -> i64 {
        self.id
    }
}

/// Where a large request frame's buffer waits, once the frame is sent, for
/// the next large request of any client in the process (see
/// [`SpareBuffer`]). Only up to 4 MiB: larger requests are rare, and with
/// every request's buffer kept a process of 10 MiB stdio echoes no longer
/// met its memory target (`lean_w4` in `docs/benchmarks.md`).
static REQUEST_FRAMES: SpareBuffer = SpareBuffer::new(MAX_KEPT_REQUEST);

/// The longest request whose buffer [`REQUEST_FRAMES`] keeps.
const MAX_KEPT_REQUEST: usize = 4 << 20;

/// The frame of request `id`, built in `frames`' kept buffer if it holds one.
fn encode<P: Serialize + ?Sized>(
    frames: &'static SpareBuffer,
    id: i64,
    method: &str,
    params: Option<&P>,
    extra: &Extra<'_>,
) -> Result<Bytes, Error> {
    // After a large request, its buffer (resident already); else room for a
    // small call without growing. A large one grows the way the codec grows
    // frame buffers (see `mcpwire_codec::grow_frame_buffer`).
    let mut buf = frames.take().unwrap_or_else(|| Vec::with_capacity(256));
    let bad = |e| Error::decode("request params", e);
    if extra.is_empty() {
        // The common path of the `initialize` era: params serialized
        // straight into the frame, no value tree.
        encode_request_vec(&mut buf, &Id::Number(id), method, params).map_err(bad)?;
        return Ok(frames.lend(buf));
    }
    let mut value = match params {
        Some(p) => serde_json::to_value(p).map_err(bad)?,
        None => Value::Object(Default::default()),
    };
    let Some(obj) = value.as_object_mut() else {
        return Err(Error::protocol("request _meta needs object params"));
    };
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(meta) = meta.as_object_mut() {
        for (k, v) in extra.stamp {
            meta.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if let Some(trace) = extra.trace {
            meta.insert("traceparent".into(), Value::from(trace.traceparent.clone()));
            if let Some(state) = &trace.tracestate {
                meta.insert("tracestate".into(), Value::from(state.clone()));
            }
        }
        if extra.progress {
            // The token is the request id, so progress routes through the
            // pending map with no second table.
            meta.insert("progressToken".into(), Value::from(id));
        }
    }
    encode_request_vec(&mut buf, &Id::Number(id), method, Some(&value)).map_err(bad)?;
    Ok(frames.lend(buf))
}

#[cfg(test)]
mod encode_tests {
    use mcpwire_codec::LARGE_FRAME_LEN;
    use serde_json::json;

    use super::*;

    /// The small frames' tests' own place for a kept buffer (they keep none).
    static TEST_FRAMES: SpareBuffer = SpareBuffer::new(MAX_KEPT_REQUEST);

    fn extra<'a>(
        progress: bool,
        stamp: &'a Map<String, Value>,
        trace: Option<&'a TraceContext>,
    ) -> Extra<'a> {
        Extra {
            progress,
            stamp,
            trace,
        }
    }

    #[test]
    fn progress_adds_the_token_to_the_params() {
        let none = Map::new();
        let frame = encode(
            &TEST_FRAMES,
            7,
            "tools/call",
            Some(&json!({"name": "a"})),
            &extra(true, &none, None),
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(v["params"]["_meta"]["progressToken"], json!(7));
        assert_eq!(v["params"]["name"], json!("a"));
    }

    #[test]
    fn the_stamp_and_trace_join_the_callers_meta_without_replacing_it() {
        let stamp = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "k": "era"});
        let stamp = stamp.as_object().unwrap();
        let trace = TraceContext::new("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
            .tracestate("vendor=1");
        let params = json!({"name": "a", "_meta": {"k": "caller"}});
        let frame = encode(
            &TEST_FRAMES,
            1,
            "tools/call",
            Some(&params),
            &extra(false, stamp, Some(&trace)),
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&frame).unwrap();
        let meta = &v["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(meta["k"], "caller");
        assert_eq!(meta["traceparent"], trace.traceparent.as_str());
        assert_eq!(meta["tracestate"], "vendor=1");
        // No params at all still get the stamp.
        let frame = encode::<Value>(
            &TEST_FRAMES,
            2,
            "server/discover",
            None,
            &extra(false, stamp, None),
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(v["params"]["_meta"]["k"], "era");
    }

    #[test]
    fn a_large_request_is_built_in_the_last_large_requests_buffer() {
        static FRAMES: SpareBuffer = SpareBuffer::new(MAX_KEPT_REQUEST);
        let none = Map::new();
        let text = "x".repeat(LARGE_FRAME_LEN);
        let args = json!({"name": "echo", "arguments": {"message": text}});
        let first = encode(
            &FRAMES,
            1,
            "tools/call",
            Some(&args),
            &extra(false, &none, None),
        );
        let first = first.unwrap();
        let at = first.as_ptr();
        drop(first);
        let second = encode(
            &FRAMES,
            2,
            "tools/call",
            Some(&args),
            &extra(true, &none, None),
        );
        let second = second.unwrap();
        assert_eq!(second.as_ptr(), at, "the kept buffer");
        let v: Value = serde_json::from_slice(&second).unwrap();
        assert_eq!(v["id"], 2);
        assert_eq!(v["params"]["_meta"]["progressToken"], 2);
        assert_eq!(v["params"]["arguments"]["message"], text.as_str());
        drop(second);
        // A small request ends the run: it is sent in a buffer of its own
        // and the large one goes.
        let small = encode::<Value>(&FRAMES, 3, "ping", None, &extra(false, &none, None));
        let small = small.unwrap();
        assert_ne!(small.as_ptr(), at);
        assert_eq!(&small[..], br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
        assert!(FRAMES.take().is_none());
    }
}
