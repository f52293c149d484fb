//! Handler dispatch: runs server requests (sampling, roots, elicitation) on
//! their own tasks, up to a bound, and answers them. Each request is
//! resolved once to its [`Handler`]; `ping` is answered inline, an unknown
//! method at once with `-32601`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::{Bytes, BytesMut};
use mcpwire_codec::jsonrpc::{
    ErrorCode, ErrorObject, Id, Payload, Request, encode_error_response, encode_result,
};
use mcpwire_transport::{FrameSender, Outgoing, SendError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{Semaphore, oneshot};
use tokio::task::AbortHandle;
use tracing::Instrument as _;

use crate::base::handler::{
    ElicitationHandler, HandlerError, RequestContext, RootsHandler, SamplingHandler,
};
use crate::base::lock::Mutex;
use crate::config::{ClientConfig, ElicitationDefaults};
use crate::observe::telemetry;
use crate::types::ElicitParams;

/// The handler a server request goes to, found once when it arrives.
enum Handler {
    Sampling(Arc<dyn SamplingHandler>),
    Roots(Arc<dyn RootsHandler>),
    Elicitation(Arc<dyn ElicitationHandler>),
}

/// The server requests of one connection whose handlers run, so a
/// `notifications/cancelled` can abort them and a close stops them all.
#[derive(Default)]
pub(crate) struct Running(Mutex<HashMap<Id, AbortHandle>>);

impl Running {
    /// Aborts the handler of server request `id`, if it is still running.
    /// The request then gets no answer, as the specification asks.
    pub(crate) fn cancel(&self, id: &Id) -> bool {
        let handle = self.0.lock().remove(id);
        match handle {
            Some(h) => {
                h.abort();
                true
            }
            None => false,
        }
    }

    /// Aborts every handler (the connection is gone).
    pub(crate) fn abort_all(&self) {
        let handles: Vec<AbortHandle> = self.0.lock().drain().map(|(_, h)| h).collect();
        for h in handles {
            h.abort();
        }
    }
}

/// Runs the server requests of one client. It keeps of the configuration
/// only what it uses (the handlers and the bounds, not a copy of the whole
/// `ClientConfig`), and makes its handler slots on the first request that
/// needs one: most sessions never get a server request.
pub(crate) struct Dispatcher {
    sampling: Option<Arc<dyn SamplingHandler>>,
    roots: Option<Arc<dyn RootsHandler>>,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    fill_defaults: bool,
    max_concurrent: usize,
    max_queued: usize,
    slots: OnceLock<Arc<Semaphore>>,
    queued: AtomicUsize,
}

impl Dispatcher {
    pub(crate) fn new(config: &ClientConfig) -> Self {
        Self {
            sampling: config.sampling.clone(),
            roots: config.roots.clone(),
            elicitation: config.elicitation.clone(),
            fill_defaults: config.elicitation_defaults == ElicitationDefaults::Fill,
            max_concurrent: config.max_concurrent_handlers,
            max_queued: config.max_queued_handlers,
            slots: OnceLock::new(),
            queued: AtomicUsize::new(0),
        }
    }

    /// The handler slots, made on first use.
    fn slots(&self) -> &Arc<Semaphore> {
        self.slots
            .get_or_init(|| Arc::new(Semaphore::new(self.max_concurrent)))
    }

    /// The handler for `method`, if one is configured.
    fn resolve(&self, method: &str) -> Option<Handler> {
        match method {
            "sampling/createMessage" => self.sampling.clone().map(Handler::Sampling),
            "roots/list" => self.roots.clone().map(Handler::Roots),
            "elicitation/create" => self.elicitation.clone().map(Handler::Elicitation),
            _ => None,
        }
    }

    /// Handles one server request. Called on the reader task: it never waits.
    pub(crate) fn dispatch(
        self: &Arc<Self>,
        sender: &FrameSender,
        running: &Arc<Running>,
        req: Request,
    ) {
        let sender = sender.clone();
        if req.method == "ping" {
            reply(&sender, &req.id, Ok(Bytes::from_static(b"{}")));
            return;
        }
        let Some(handler) = self.resolve(&req.method) else {
            let err = ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", req.method),
            );
            reply(&sender, &req.id, Err(err));
            return;
        };
        let permit = match self.slots().clone().try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) => {
                if self.queued.fetch_add(1, Ordering::AcqRel) >= self.max_queued {
                    self.queued.fetch_sub(1, Ordering::AcqRel);
                    let err = ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        "client is busy: too many server requests in progress",
                    );
                    reply(&sender, &req.id, Err(err));
                    return;
                }
                None
            }
        };
        // The task waits for this gate, so its abort handle is in the map
        // before it can finish and remove itself.
        let (gate_tx, gate_rx) = oneshot::channel::<()>();
        let this = self.clone();
        let run = running.clone();
        let id = req.id.clone();
        // Counts this request as queued until it gets a slot, even if it is
        // aborted while waiting.
        let waiting = permit.is_none().then(|| Queued(self.clone()));
        let task = tokio::spawn(async move {
            let _ = gate_rx.await;
            let _permit = match permit {
                Some(p) => p,
                None => {
                    let p = this.slots().clone().acquire_owned().await;
                    drop(waiting);
                    match p {
                        Ok(p) => p,
                        Err(_) => return,
                    }
                }
            };
            let outcome = this.run(handler, &req).await;
            // Remove ourselves first: once answered, a late cancellation
            // must not find (and abort) us.
            run.0.lock().remove(&req.id);
            let frame = encode_reply(&req.id, outcome);
            if let Some(frame) = frame {
                let _ = sender.send(Outgoing::response(frame, req.id.clone())).await;
            }
        });
        running.0.lock().insert(id, task.abort_handle());
        let _ = gate_tx.send(());
    }

    /// Answers one input request of a multi round-trip request (the
    /// stateless era's way of asking for sampling, roots or elicitation) on
    /// the caller's task, with the same handlers as a server request.
    /// `None` if no handler is configured for `method`.
    pub(crate) async fn fulfil(
        &self,
        key: &str,
        method: &str,
        params: Option<Payload>,
    ) -> Option<Result<Bytes, ErrorObject>> {
        let handler = self.resolve(method)?;
        let req = Request {
            id: Id::from(key),
            method: method.to_owned(),
            params,
        };
        Some(self.run(handler, &req).await)
    }

    /// Runs `handler` on `req` inside the request's span.
    async fn run(&self, handler: Handler, req: &Request) -> Result<Bytes, ErrorObject> {
        let span = telemetry::answer_span(&req.method, &req.id);
        let outcome = self.answer(handler, req).instrument(span.clone()).await;
        telemetry::answered(&span, &outcome);
        outcome
    }

    async fn answer(&self, handler: Handler, req: &Request) -> Result<Bytes, ErrorObject> {
        let cx = RequestContext {
            id: req.id.clone(),
            method: req.method.clone(),
        };
        match handler {
            Handler::Sampling(h) => {
                let params = params(&req.params)?;
                serialize(h.create_message(params, cx).await)
            }
            Handler::Roots(h) => serialize(h.list_roots(cx).await),
            Handler::Elicitation(h) => {
                let params: ElicitParams = params(&req.params)?;
                let fill = self.fill_defaults;
                let schema = match (fill, params.is_url_mode()) {
                    (true, false) => params.requested_schema.clone(),
                    _ => None,
                };
                let mut outcome = h.elicit(params, cx).await;
                if let (Ok(result), Some(schema)) = (&mut outcome, &schema) {
                    result.fill_defaults(schema);
                }
                serialize(outcome)
            }
        }
    }
}

/// One server request waiting for a handler slot.
struct Queued(Arc<Dispatcher>);

impl Drop for Queued {
    fn drop(&mut self) {
        self.0.queued.fetch_sub(1, Ordering::AcqRel);
    }
}

fn params<T: DeserializeOwned>(params: &Option<Payload>) -> Result<T, ErrorObject> {
    let bad = |e: String| ErrorObject::new(ErrorCode::INVALID_PARAMS, e);
    match params {
        Some(p) => p.deserialize().map_err(|e| bad(e.to_string())),
        None => Err(bad("missing params".into())),
    }
}

fn serialize<T: Serialize>(r: Result<T, HandlerError>) -> Result<Bytes, ErrorObject> {
    match r {
        Ok(v) => serde_json::to_vec(&v).map(Bytes::from).map_err(|e| {
            ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("unserializable: {e}"))
        }),
        Err(e) => {
            let mut obj = ErrorObject::new(e.code, e.message);
            obj.data = e.data.and_then(|d| Payload::from_value(&d).ok());
            Err(obj)
        }
    }
}

fn encode_reply(id: &Id, outcome: Result<Bytes, ErrorObject>) -> Option<Bytes> {
    let mut buf = BytesMut::new();
    let done = match outcome {
        Ok(result) => {
            let payload = Payload::from_json(result).ok()?;
            encode_result(&mut buf, id, &payload)
        }
        Err(e) => encode_error_response(&mut buf, Some(id), &e),
    };
    done.ok().map(|()| buf.freeze())
}

/// Answers from the reader task without waiting: if the queue is full the
/// answer goes to a task that waits for room.
fn reply(sender: &FrameSender, id: &Id, outcome: Result<Bytes, ErrorObject>) {
    let Some(frame) = encode_reply(id, outcome) else {
        return;
    };
    if let Err(SendError::Busy(out)) = sender.try_send(Outgoing::response(frame, id.clone())) {
        let sender = sender.clone();
        tokio::spawn(async move {
            let _ = sender.send(out).await;
        });
    }
}
