//! Runs server requests (sampling, roots, elicitation) on their own tasks,
//! up to a bound, and answers them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::{Bytes, BytesMut};
use mcpwire_codec::jsonrpc::{
    ErrorCode, ErrorObject, Id, Payload, Request, encode_error_response, encode_result,
};
use mcpwire_transport::{FrameSender, SendError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{Semaphore, oneshot};

use crate::config::ClientConfig;
use crate::engine::Engine;
use crate::handler::{HandlerError, RequestContext};
use crate::types::ElicitParams;

pub(crate) struct Dispatcher {
    config: ClientConfig,
    slots: Arc<Semaphore>,
    queued: AtomicUsize,
}

impl Dispatcher {
    pub(crate) fn new(config: ClientConfig) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(config.max_concurrent_handlers)),
            queued: AtomicUsize::new(0),
            config,
        }
    }

    /// Handles one server request. Called on the reader task: it never waits.
    pub(crate) fn dispatch(self: &Arc<Self>, engine: &Arc<Engine>, req: Request) {
        let sender = engine.sender().clone();
        if req.method == "ping" {
            reply(&sender, &req.id, Ok(Bytes::from_static(b"{}")));
            return;
        }
        let known = match req.method.as_str() {
            "sampling/createMessage" => self.config.sampling.is_some(),
            "roots/list" => self.config.roots.is_some(),
            "elicitation/create" => self.config.elicitation.is_some(),
            _ => false,
        };
        if !known {
            let err = ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", req.method),
            );
            reply(&sender, &req.id, Err(err));
            return;
        }
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) => {
                if self.queued.fetch_add(1, Ordering::AcqRel) >= self.config.max_queued_handlers {
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
        let eng = engine.clone();
        let id = req.id.clone();
        // Counts this request as queued until it gets a slot, even if it is
        // aborted while waiting.
        let waiting = permit.is_none().then(|| Queued(self.clone()));
        let task = tokio::spawn(async move {
            let _ = gate_rx.await;
            let _permit = match permit {
                Some(p) => p,
                None => {
                    let p = this.slots.clone().acquire_owned().await;
                    drop(waiting);
                    match p {
                        Ok(p) => p,
                        Err(_) => return,
                    }
                }
            };
            let outcome = this.run(&req).await;
            // Remove ourselves first: once answered, a late cancellation
            // must not find (and abort) us.
            eng.handlers.lock().expect("handlers lock").remove(&req.id);
            let frame = encode_reply(&req.id, outcome);
            if let Some(frame) = frame {
                let _ = sender.send(frame).await;
            }
        });
        engine
            .handlers
            .lock()
            .expect("handlers lock")
            .insert(id, task.abort_handle());
        let _ = gate_tx.send(());
    }

    async fn run(&self, req: &Request) -> Result<Bytes, ErrorObject> {
        let cx = RequestContext {
            id: req.id.clone(),
            method: req.method.clone(),
        };
        match req.method.as_str() {
            "sampling/createMessage" => {
                let h = self.config.sampling.clone().expect("checked on dispatch");
                let params = params(&req.params)?;
                serialize(h.create_message(params, cx).await)
            }
            "roots/list" => {
                let h = self.config.roots.clone().expect("checked on dispatch");
                serialize(h.list_roots(cx).await)
            }
            _ => {
                let h = self
                    .config
                    .elicitation
                    .clone()
                    .expect("checked on dispatch");
                let params: ElicitParams = params(&req.params)?;
                let schema = match (self.config.elicitation_defaults, params.is_url_mode()) {
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

/// Aborts the handler of server request `id`, if it is still running. The
/// request then gets no answer, as the specification asks.
pub(crate) fn cancel(engine: &Engine, id: &Id) -> bool {
    let handle = engine.handlers.lock().expect("handlers lock").remove(id);
    match handle {
        Some(h) => {
            h.abort();
            true
        }
        None => false,
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
    if let Err(SendError::Busy(frame)) = sender.try_send(frame) {
        let sender = sender.clone();
        tokio::spawn(async move {
            let _ = sender.send(frame).await;
        });
    }
}
