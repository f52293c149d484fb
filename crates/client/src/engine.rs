//! The request engine: ids, the pending map, timeouts, cancellation, progress.
//!
//! One engine serves one transport session. Callers encode their request
//! into a `Bytes` and push it into the transport's [`FrameSender`] on their
//! own task: there is no client task on the way out and no task per request.
//! The driver task completes the caller directly through a oneshot found in
//! the pending map (a std mutex held only for the insert or the remove).
//!
//! The engine knows nothing of the handshake: a lifecycle (see
//! [`crate::lifecycle`]) runs over it like any other caller.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mcpwire_codec::jsonrpc::{Id, Payload, encode_notification, encode_request};
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
}

struct PendingTable {
    map: HashMap<i64, Pending>,
    /// Set once the connection ended: later callers fail at once.
    closed: Option<Error>,
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
    /// Set to a reason to make the driver close the transport.
    close_tx: watch::Sender<Option<String>>,
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
                map: HashMap::new(),
                closed: None,
            }),
            handlers: Mutex::new(HashMap::new()),
            stderr_tail: Mutex::new(VecDeque::new()),
            close_tx: watch::channel(None).0,
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

        let timeout = opts.timeout.unwrap_or(self.default_timeout);
        let start = Instant::now();
        let hard = opts.max_total.map(|m| start + m);
        let cap = |t: Instant| hard.map_or(t, |h| t.min(h));
        let sleep = tokio::time::sleep_until(cap(start + timeout));
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                biased;
                outcome = &mut rx => {
                    guard.armed = false;
                    return outcome.unwrap_or_else(|_| {
                        Err(Error::closed("connection closed", None, Vec::new()))
                    });
                }
                () = cancelled(&opts.cancel) => {
                    guard.cancel("cancelled by the caller");
                    return Err(Error::cancelled("request cancelled by the caller"));
                }
                () = &mut sleep => {
                    let after = if hard.is_some_and(|h| Instant::now() >= h) {
                        opts.max_total.unwrap_or(timeout)
                    } else {
                        timeout
                    };
                    guard.cancel("timeout");
                    return Err(Error::timeout(after));
                }
                Some(()) = progress_changed(&mut progress_rx) => {
                    let latest = progress_rx
                        .as_mut()
                        .and_then(|r| r.borrow_and_update().clone());
                    if let (Some(p), Some(cb)) = (&latest, &opts.on_progress) {
                        cb(p);
                    }
                    if opts.reset_on_progress {
                        sleep.as_mut().reset(cap(Instant::now() + timeout));
                    }
                }
            }
        }
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
        let table = self.pending.lock().expect("pending lock");
        if let Some(tx) = table.map.get(&token).and_then(|p| p.progress.as_ref()) {
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

    /// Asks the driver to close the transport, saying why.
    pub(crate) fn request_close(&self, why: impl Into<String>) {
        let why = why.into();
        self.close_tx.send_if_modified(|cur| {
            if cur.is_none() {
                *cur = Some(why);
                true
            } else {
                false
            }
        });
    }

    pub(crate) fn close_requested(&self) -> watch::Receiver<Option<String>> {
        self.close_tx.subscribe()
    }

    pub(crate) fn close_reason_requested(&self) -> Option<String> {
        self.close_tx.borrow().clone()
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

fn encode<P: Serialize + ?Sized>(
    id: i64,
    method: &str,
    params: Option<&P>,
    progress: bool,
) -> Result<Bytes, Error> {
    let mut buf = BytesMut::with_capacity(128);
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
        encode_request(&mut buf, &Id::Number(id), method, Some(&value)).map_err(bad)?;
    } else {
        encode_request(&mut buf, &Id::Number(id), method, params).map_err(bad)?;
    }
    Ok(buf.freeze())
}

#[cfg(test)]
mod encode_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn progress_adds_the_token_to_the_params() {
        let frame = encode(7, "tools/call", Some(&json!({"name": "a"})), true).unwrap();
        let v: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(v["params"]["_meta"]["progressToken"], json!(7));
        assert_eq!(v["params"]["name"], json!("a"));
    }
}
