//! The request engine: ids, the pending map, timeouts, cancellation, progress.
//!
//! One engine serves one transport session. Callers encode their request
//! into a `Bytes` and push it into the transport's [`FrameSender`] on their
//! own task: there is no client task on the way out and no task per request.
//! The driver task completes the caller directly through a oneshot found in
//! the pending map (a std mutex held only for the insert or the remove).
//!
//! Timeouts cost no timer per request. Each pending entry carries its
//! deadline, and the driver keeps one timer, armed for the earliest deadline
//! it has been told about. A caller wakes the driver only when its deadline
//! is earlier than the armed one, which with the usual single timeout never
//! happens while requests flow: deadlines then only grow. The timer is lazy:
//! when it fires it sweeps the table, fails what expired (and tells the
//! server), and re-arms for the earliest deadline left. Registering and
//! removing a tokio timer per call locked the runtime's timer wheel twice per
//! call; this costs one comparison under the lock the call takes anyway.
//!
//! The engine knows nothing of the handshake: a lifecycle (see
//! [`crate::lifecycle`]) runs over it like any other caller.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicI64, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mcpwire_codec::jsonrpc::{Id, Payload, encode_notification, encode_request_vec};
use mcpwire_transport::{FrameSender, SendError, TransportError};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{Notify, oneshot, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::types::Progress;

/// How many stderr lines are kept for error messages.
const STDERR_TAIL: usize = 20;

/// A progress callback.
pub type ProgressCallback = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Per-request options: timeout, progress, replay.
#[derive(Clone, Default)]
#[must_use]
pub struct RequestOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_total: Option<Duration>,
    pub(crate) reset_on_progress: bool,
    pub(crate) on_progress: Option<ProgressCallback>,
    pub(crate) replay_safe: bool,
    pub(crate) cancel: Option<CancellationToken>,
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("max_total", &self.max_total)
            .field("reset_on_progress", &self.reset_on_progress)
            .field("on_progress", &self.on_progress.is_some())
            .field("replay_safe", &self.replay_safe)
            .field("cancel", &self.cancel.is_some())
            .finish()
    }
}

impl RequestOptions {
    /// The defaults: the client's timeout, no progress, no replay opt-in.
    pub fn new() -> Self {
        Self::default()
    }

    /// This request's timeout (instead of the client's, 60 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Restart the timeout whenever progress arrives; a progress token is
    /// attached. Bounded by [`max_total`](Self::max_total) when set.
    pub fn reset_on_progress(mut self, yes: bool) -> Self {
        self.reset_on_progress = yes;
        self
    }

    /// The longest the request may take in total, progress or not.
    pub fn max_total(mut self, max: Duration) -> Self {
        self.max_total = Some(max);
        self
    }

    /// Call `f` with each progress notification (a progress token is
    /// attached). It runs on the caller's task, never on the reader; progress
    /// that arrives faster than the caller polls is coalesced to the latest.
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Allow sending this request again if its delivery failed because the
    /// session expired (`tools/call` is replayed only for tools annotated
    /// read-only or idempotent otherwise).
    pub fn replay_safe(mut self, yes: bool) -> Self {
        self.replay_safe = yes;
        self
    }

    /// Cancel the request when `token` is cancelled: the call returns an
    /// [`ErrorKind::Cancelled`](crate::ErrorKind) error and the server gets
    /// `notifications/cancelled`.
    pub fn cancel_token(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    fn wants_progress(&self) -> bool {
        self.reset_on_progress || self.on_progress.is_some()
    }
}

pub(crate) struct Pending {
    tx: oneshot::Sender<Result<Payload, Error>>,
    progress: Option<watch::Sender<Option<Progress>>>,
    method: Cow<'static, str>,
    replay: bool,
    /// Set once the request is on its way: the timeout runs from then on.
    timer: Option<Timer>,
}

/// When a sent request times out, and how its deadline moves.
struct Timer {
    deadline: Instant,
    timeout: Duration,
    /// `max_total`: the deadline never moves past `start + max_total`.
    hard: Option<(Instant, Duration)>,
    reset_on_progress: bool,
    /// Whether the server is told (`notifications/cancelled`) on timeout.
    cancellable: bool,
}

impl Timer {
    fn cap(&self, t: Instant) -> Instant {
        self.hard.map_or(t, |(h, _)| t.min(h))
    }

    /// What the timeout error reports: `max_total` once it is the bound
    /// that was hit, the timeout otherwise.
    fn after(&self, now: Instant) -> Duration {
        match self.hard {
            Some((h, max)) if now >= h => max,
            _ => self.timeout,
        }
    }
}

/// Hashes request ids (sequential integers) with one multiplication, which
/// spreads them over the whole word as the table's probing wants. SipHash,
/// the default, guards against chosen keys; our keys are our own ids.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap<V> = HashMap<i64, V, BuildHasherDefault<IdHasher>>;

struct PendingTable {
    map: IdMap<Pending>,
    /// Set once the connection ended: later callers fail at once.
    closed: Option<Error>,
    /// The instant the driver's timer is armed for (or asked to be); `None`
    /// when it is not armed. Never later than the earliest deadline.
    armed: Option<Instant>,
}

/// A request that timed out, taken out of the table by a sweep.
struct Expired {
    id: i64,
    tx: oneshot::Sender<Result<Payload, Error>>,
    after: Duration,
    cancellable: bool,
}

/// What the driver is asked to do, besides reading: close, or re-arm its
/// timeout timer. A flag word plus the driver's waker: cheaper to poll on
/// every event than a channel or a `watch`.
#[derive(Default)]
pub(crate) struct DriverSignal {
    flags: AtomicU8,
    waker: Mutex<Option<Waker>>,
}

/// The driver should close the transport.
pub(crate) const SIGNAL_CLOSE: u8 = 1;
/// The driver should re-arm its timer for [`Engine::armed`].
pub(crate) const SIGNAL_REARM: u8 = 2;

impl DriverSignal {
    fn raise(&self, flag: u8) {
        self.flags.fetch_or(flag, Ordering::AcqRel);
        let waker = self.waker.lock().expect("signal lock").take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Registers the driver's waker, then takes the raised flags. Flags
    /// raised after this wake the registered waker.
    pub(crate) fn poll_take(&self, cx: &Context<'_>) -> u8 {
        {
            let mut slot = self.waker.lock().expect("signal lock");
            if !slot.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *slot = Some(cx.waker().clone());
            }
        }
        self.flags.swap(0, Ordering::AcqRel)
    }
}

/// Counters for one connection.
#[derive(Debug, Default)]
pub(crate) struct EngineStats {
    pub(crate) malformed: AtomicU64,
    pub(crate) late_responses: AtomicU64,
}

/// One transport session's request state.
pub(crate) struct Engine {
    sender: FrameSender,
    next_id: Arc<AtomicI64>,
    default_timeout: Duration,
    pending: Mutex<PendingTable>,
    pub(crate) handlers: Mutex<HashMap<Id, AbortHandle>>,
    stderr_tail: Mutex<VecDeque<String>>,
    /// Why the driver was asked to close the transport (the first reason).
    close_reason: Mutex<Option<String>>,
    pub(crate) signal: DriverSignal,
    /// Frames whose delivery failed with an expired session, waiting for the
    /// session to be re-initialized; `Some` while that is under way.
    pub(crate) expired: Mutex<Option<Vec<(Bytes, TransportError)>>>,
    pub(crate) reinit: Notify,
    pub(crate) stats: EngineStats,
}

impl Engine {
    pub(crate) fn new(
        sender: FrameSender,
        next_id: Arc<AtomicI64>,
        default_timeout: Duration,
    ) -> Self {
        Self {
            sender,
            next_id,
            default_timeout,
            pending: Mutex::new(PendingTable {
                map: IdMap::default(),
                closed: None,
                armed: None,
            }),
            handlers: Mutex::new(HashMap::new()),
            stderr_tail: Mutex::new(VecDeque::new()),
            close_reason: Mutex::new(None),
            signal: DriverSignal::default(),
            expired: Mutex::new(None),
            reinit: Notify::new(),
            stats: EngineStats::default(),
        }
    }

    pub(crate) fn sender(&self) -> &FrameSender {
        &self.sender
    }

    /// Sends a request and waits for its outcome, as a raw payload.
    ///
    /// Cancellation safety: dropping the future removes the pending entry
    /// and, if the request was already queued, sends
    /// `notifications/cancelled` (best effort: it is queued without waiting).
    /// The server may still act on the request; its late response is ignored.
    pub(crate) async fn call<P: Serialize + ?Sized>(
        &self,
        method: Cow<'static, str>,
        params: Option<&P>,
        opts: &RequestOptions,
        replay: bool,
    ) -> Result<Payload, Error> {
        self.call_inner(method, params, opts, replay, true).await
    }

    /// Like [`call`](Self::call), but never sends `notifications/cancelled`
    /// (for `initialize`, which must not be cancelled).
    pub(crate) async fn call_uncancellable<P: Serialize + ?Sized>(
        &self,
        method: Cow<'static, str>,
        params: Option<&P>,
        opts: &RequestOptions,
    ) -> Result<Payload, Error> {
        self.call_inner(method, params, opts, false, false).await
    }

    async fn call_inner<P: Serialize + ?Sized>(
        &self,
        method: Cow<'static, str>,
        params: Option<&P>,
        opts: &RequestOptions,
        replay: bool,
        cancellable: bool,
    ) -> Result<Payload, Error> {
        let request = self.encode_request(&method, params, opts)?;
        self.call_encoded(request, method, opts, replay, cancellable)
            .await
    }

    /// Encodes a request with the next id, without sending it. The caller
    /// may then drop its parameters before [`call_encoded`](Self::call_encoded)
    /// waits for the answer: for a large argument that halves the memory
    /// held while the answer arrives.
    pub(crate) fn encode_request<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
        opts: &RequestOptions,
    ) -> Result<EncodedRequest, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = encode(id, method, params, opts.wants_progress())?;
        Ok(EncodedRequest { id, frame })
    }

    /// Sends a request made by [`encode_request`](Self::encode_request) with
    /// the same `opts`, and waits for its outcome, as [`call`](Self::call)
    /// does.
    pub(crate) async fn call_encoded(
        &self,
        request: EncodedRequest,
        method: Cow<'static, str>,
        opts: &RequestOptions,
        replay: bool,
        cancellable: bool,
    ) -> Result<Payload, Error> {
        let EncodedRequest { id, frame } = request;
        let (tx, mut rx) = oneshot::channel();
        let (progress_tx, mut progress_rx) = if opts.wants_progress() {
            let (t, r) = watch::channel(None);
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        {
            let mut table = self.pending.lock().expect("pending lock");
            if let Some(e) = &table.closed {
                return Err(e.clone());
            }
            table.map.insert(
                id,
                Pending {
                    tx,
                    progress: progress_tx,
                    method,
                    replay: replay || opts.replay_safe,
                    timer: None,
                },
            );
        }
        let mut guard = PendingGuard {
            engine: self,
            id,
            armed: true,
            sent: false,
            cancellable,
        };
        match self.sender.try_send(frame) {
            Ok(()) => {}
            Err(SendError::Busy(frame)) => self.sender.send(frame).await.map_err(Error::send)?,
            Err(e) => return Err(Error::send(e)),
        }
        guard.sent = true;
        self.start_timer(id, opts, cancellable);

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
                        let latest = progress_rx
                            .as_mut()
                            .and_then(|r| r.borrow_and_update().clone());
                        if let (Some(p), Some(cb)) = (&latest, &opts.on_progress) {
                            cb(p);
                        }
                    }
                }
            }
        };
        // Answered, timed out by the driver's sweep (which told the server),
        // or failed by the close: the entry is gone either way.
        guard.armed = false;
        outcome.unwrap_or_else(|_| Err(Error::closed("connection closed", None, Vec::new())))
    }

    /// Starts the timeout of the sent request `id`, and wakes the driver if
    /// its timer must fire earlier than it is armed for.
    fn start_timer(&self, id: i64, opts: &RequestOptions, cancellable: bool) {
        let timeout = opts.timeout.unwrap_or(self.default_timeout);
        let now = Instant::now();
        let hard = opts.max_total.map(|m| (after(now, m), m));
        let timer = Timer {
            deadline: now,
            timeout,
            hard,
            reset_on_progress: opts.reset_on_progress,
            cancellable,
        };
        let timer = Timer {
            deadline: timer.cap(after(now, timeout)),
            ..timer
        };
        let deadline = timer.deadline;
        let rearm = {
            let mut table = self.pending.lock().expect("pending lock");
            // Already answered (or failed): nothing to time.
            let Some(entry) = table.map.get_mut(&id) else {
                return;
            };
            entry.timer = Some(timer);
            let earlier = table.armed.is_none_or(|a| deadline < a);
            if earlier {
                table.armed = Some(deadline);
            }
            earlier
        };
        if rearm {
            self.signal.raise(SIGNAL_REARM);
        }
    }

    /// When the driver's timer should fire next, if at all.
    pub(crate) fn armed(&self) -> Option<Instant> {
        self.pending.lock().expect("pending lock").armed
    }

    /// Fails every request whose deadline has passed with a timeout error
    /// and tells the server; returns when the timer should fire next.
    pub(crate) fn sweep(&self) -> Option<Instant> {
        let now = Instant::now();
        let mut expired = Vec::new();
        let next = {
            let mut table = self.pending.lock().expect("pending lock");
            let mut ids = Vec::new();
            let mut next: Option<Instant> = None;
            for (id, p) in &table.map {
                if let Some(t) = &p.timer {
                    if t.deadline <= now {
                        ids.push(*id);
                    } else if next.is_none_or(|n| t.deadline < n) {
                        next = Some(t.deadline);
                    }
                }
            }
            for id in ids {
                if let Some(p) = table.map.remove(&id) {
                    let t = p.timer.expect("only timed entries expire");
                    expired.push(Expired {
                        id,
                        tx: p.tx,
                        after: t.after(now),
                        cancellable: t.cancellable,
                    });
                }
            }
            table.armed = next;
            next
        };
        for e in expired {
            let _ = e.tx.send(Err(Error::timeout(e.after)));
            if e.cancellable {
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
        self.sender.send(buf.freeze()).await.map_err(Error::send)
    }

    /// Completes the caller waiting for `id`. False if nobody waits (a late
    /// response to a request that timed out or was cancelled).
    pub(crate) fn complete(&self, id: i64, outcome: Result<Payload, Error>) -> bool {
        let entry = self.pending.lock().expect("pending lock").map.remove(&id);
        match entry {
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
        let Some(token) = progress.progress_token.as_i64() else {
            return;
        };
        let mut table = self.pending.lock().expect("pending lock");
        let Some(entry) = table.map.get_mut(&token) else {
            return;
        };
        // The deadline only moves later, so the driver's timer (armed no
        // later than the old one) needs no re-arming: it fires, finds
        // nothing due, and re-arms for the new deadline.
        if let Some(t) = entry.timer.as_mut().filter(|t| t.reset_on_progress) {
            t.deadline = t.cap(after(Instant::now(), t.timeout));
        }
        if let Some(tx) = &entry.progress {
            // `send_replace` never blocks: progress for one token coalesces.
            tx.send_replace(Some(progress));
        }
    }

    /// Whether the pending request `id` may be sent again, and its method.
    pub(crate) fn replay_info(&self, id: i64) -> Option<(bool, Cow<'static, str>)> {
        let table = self.pending.lock().expect("pending lock");
        table.map.get(&id).map(|p| (p.replay, p.method.clone()))
    }

    /// Fails every pending request with `error`; later calls fail at once.
    pub(crate) fn close_all(&self, error: Error) {
        let drained: Vec<Pending> = {
            let mut table = self.pending.lock().expect("pending lock");
            table.closed = Some(error.clone());
            table.armed = None;
            table.map.drain().map(|(_, p)| p).collect()
        };
        for p in drained {
            let _ = p.tx.send(Err(error.clone()));
        }
        for (_, h) in self.handlers.lock().expect("handlers lock").drain() {
            h.abort();
        }
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.pending.lock().expect("pending lock").map.len()
    }

    pub(crate) fn push_stderr(&self, line: String) {
        let mut tail = self.stderr_tail.lock().expect("stderr lock");
        if tail.len() == STDERR_TAIL {
            tail.pop_front();
        }
        tail.push_back(line);
    }

    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail
            .lock()
            .expect("stderr lock")
            .iter()
            .cloned()
            .collect()
    }

    /// Asks the driver to close the transport, saying why (the first reason
    /// given is kept).
    pub(crate) fn request_close(&self, why: impl Into<String>) {
        {
            let mut reason = self.close_reason.lock().expect("close lock");
            if reason.is_some() {
                return;
            }
            *reason = Some(why.into());
        }
        self.signal.raise(SIGNAL_CLOSE);
    }

    pub(crate) fn close_reason_requested(&self) -> Option<String> {
        self.close_reason.lock().expect("close lock").clone()
    }

    fn forget(&self, id: i64) -> bool {
        self.pending
            .lock()
            .expect("pending lock")
            .map
            .remove(&id)
            .is_some()
    }

    fn send_cancel(&self, id: i64, reason: &str) {
        let params = serde_json::json!({"requestId": id, "reason": reason});
        let mut buf = BytesMut::new();
        if encode_notification(&mut buf, "notifications/cancelled", Some(&params)).is_err() {
            return;
        }
        if let Err(SendError::Busy(frame)) = self.sender.try_send(buf.freeze()) {
            // The queue is full: hand the notice to a task rather than block
            // a drop. Without a runtime it is simply not sent.
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                let sender = self.sender.clone();
                rt.spawn(async move {
                    let _ = sender.send(frame).await;
                });
            }
        }
    }
}

/// `t + d`, or about thirty years from `t` when that overflows (a timeout
/// of `Duration::MAX` means "never").
fn after(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .unwrap_or_else(|| t + Duration::from_secs(86_400 * 365 * 30))
}

async fn cancelled(token: &Option<CancellationToken>) {
    match token {
        Some(t) => t.cancelled().await,
        None => std::future::pending().await,
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
    cancellable: bool,
}

impl PendingGuard<'_> {
    fn cancel(&mut self, reason: &str) {
        if !self.armed {
            return;
        }
        self.armed = false;
        let was_pending = self.engine.forget(self.id);
        if was_pending && self.sent && self.cancellable {
            self.engine.send_cancel(self.id, reason);
        }
    }
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.cancel("cancelled by the client");
    }
}

/// A request encoded with its id, not yet sent.
pub(crate) struct EncodedRequest {
    id: i64,
    frame: Bytes,
}

impl EncodedRequest {
    /// The request's id.
    pub(crate) fn id(&self) -> i64 {
        self.id
    }
}

fn encode<P: Serialize + ?Sized>(
    id: i64,
    method: &str,
    params: Option<&P>,
    progress: bool,
) -> Result<Bytes, Error> {
    // Room for a small call without growing; a large one grows the way the
    // codec grows frame buffers (see `mcpwire_codec::grow_frame_vec`).
    let mut buf = Vec::with_capacity(256);
    let bad = |e| Error::decode("request params", e);
    if progress {
        // The token is the request id, so progress routes through the
        // pending map with no second table.
        let mut value = match params {
            Some(p) => serde_json::to_value(p).map_err(bad)?,
            None => Value::Object(Default::default()),
        };
        let Some(obj) = value.as_object_mut() else {
            return Err(Error::protocol("progress needs object params", None));
        };
        let meta = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert("progressToken".into(), Value::from(id));
        }
        encode_request_vec(&mut buf, &Id::Number(id), method, Some(&value)).map_err(bad)?;
    } else {
        encode_request_vec(&mut buf, &Id::Number(id), method, params).map_err(bad)?;
    }
    Ok(Bytes::from(buf))
}

#[cfg(test)]
mod encode_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_endless_timeout_does_not_overflow() {
        let now = Instant::now();
        assert!(after(now, Duration::MAX) > now + Duration::from_secs(86_400 * 365));
        assert_eq!(
            after(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
    }

    #[test]
    fn progress_adds_the_token_to_the_params() {
        let frame = encode(7, "tools/call", Some(&json!({"name": "a"})), true).unwrap();
        let v: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(v["params"]["_meta"]["progressToken"], json!(7));
        assert_eq!(v["params"]["name"], json!("a"));
    }
}
