//! The server's connection: reads requests, runs each on its own task,
//! sends its own requests (sampling, elicitation) and matches their answers.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use mcpwire_codec::jsonrpc::{
    ErrorCode, ErrorObject, Id, Message, Request, encode_error_response, encode_notification,
    encode_request, encode_result,
};
use mcpwire_transport::{Active, FrameSender, Transport, TransportEvent, TransportExt};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use crate::catalog::{self, Outcome, Peer};

/// The versions this server speaks, newest first.
const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// One connection's state.
#[derive(Default)]
pub(crate) struct Server {
    sender: Mutex<Option<FrameSender>>,
    next_id: AtomicI64,
    waiting: Mutex<HashMap<i64, oneshot::Sender<Outcome>>>,
    running: Mutex<HashMap<Id, AbortHandle>>,
    client_caps: Mutex<Value>,
}

impl Server {
    /// A server whose messages to the client go to `sender` (one HTTP
    /// request's answer stream).
    pub(crate) fn with_sender(sender: FrameSender) -> Self {
        let server = Self::default();
        *server.sender.lock().expect("lock") = Some(sender);
        server
    }

    pub(crate) async fn serve<T: Transport>(self: Arc<Self>, mut transport: T) {
        *self.sender.lock().expect("lock") = Some(transport.sender());
        let window = NonZeroU32::new(32).expect("non-zero");
        transport.set_active(Active::Many(window));
        let mut left = window.get();
        while let Some(event) = transport.next_event().await {
            match event {
                TransportEvent::Frame(frame) => {
                    left -= 1;
                    if left == 0 {
                        transport.set_active(Active::Many(window));
                        left = window.get();
                    }
                    self.on_frame(frame);
                }
                TransportEvent::Closed(_) => break,
                _ => {}
            }
        }
    }

    fn sender(&self) -> FrameSender {
        self.sender.lock().expect("lock").clone().expect("serving")
    }

    /// Handles one message from the client; a request runs on its own task.
    pub(crate) fn on_frame(self: &Arc<Self>, frame: Bytes) {
        match Message::parse(frame) {
            Ok(Message::Request(req)) => {
                let id = req.id.clone();
                let this = self.clone();
                let task = tokio::spawn(async move {
                    let id = req.id.clone();
                    let outcome = this.handle(req).await;
                    this.running.lock().expect("lock").remove(&id);
                    this.answer(&id, outcome).await;
                });
                self.running
                    .lock()
                    .expect("lock")
                    .insert(id, task.abort_handle());
            }
            Ok(Message::Notification(n)) => {
                if n.method == "notifications/cancelled" {
                    let id = n
                        .params
                        .and_then(|p| p.deserialize::<Value>().ok())
                        .and_then(|v| serde_json::from_value::<Id>(v["requestId"].clone()).ok());
                    if let Some(h) =
                        id.and_then(|id| self.running.lock().expect("lock").remove(&id))
                    {
                        h.abort();
                    }
                }
            }
            Ok(Message::Response(resp)) => {
                if let Some(Id::Number(n)) = resp.id {
                    let waiter = self.waiting.lock().expect("lock").remove(&n);
                    if let Some(tx) = waiter {
                        let outcome = resp.outcome.and_then(|p| {
                            p.deserialize::<Value>().map_err(|e| {
                                ErrorObject::new(ErrorCode::PARSE_ERROR, e.to_string())
                            })
                        });
                        let _ = tx.send(outcome);
                    }
                }
            }
            Err(e) => {
                let err = ErrorObject::new(ErrorCode::PARSE_ERROR, e.to_string());
                let mut buf = BytesMut::new();
                if encode_error_response(&mut buf, None, &err).is_ok() {
                    let _ = self.sender().try_send(buf.freeze());
                }
            }
        }
    }

    async fn answer(&self, id: &Id, outcome: Outcome) {
        let mut buf = BytesMut::new();
        let encoded = match &outcome {
            Ok(v) => encode_result(&mut buf, id, v),
            Err(e) => encode_error_response(&mut buf, Some(id), e),
        };
        if encoded.is_ok() {
            let _ = self.sender().send(buf.freeze()).await;
        }
    }

    async fn handle(self: &Arc<Self>, req: Request) -> Outcome {
        let params: Value = match &req.params {
            Some(p) => p
                .deserialize()
                .map_err(|e| ErrorObject::new(ErrorCode::INVALID_PARAMS, e.to_string()))?,
            None => json!({}),
        };
        match req.method.as_str() {
            "initialize" => {
                *self.client_caps.lock().expect("lock") = params["capabilities"].clone();
                let asked = params["protocolVersion"].as_str().unwrap_or_default();
                let version = if VERSIONS.contains(&asked) {
                    asked
                } else {
                    VERSIONS[0]
                };
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": {
                        "tools": {"listChanged": false},
                        "resources": {"subscribe": false, "listChanged": false},
                        "prompts": {"listChanged": false},
                        "completions": {},
                        "logging": {}
                    },
                    "serverInfo": {"name": "mcpwire-demo-server", "title": "mcpwire demo server", "version": env!("CARGO_PKG_VERSION")},
                    "instructions": "A demo server: try the echo and add tools."
                }))
            }
            "ping" | "logging/setLevel" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": catalog::tools() })),
            "tools/call" => catalog::call_tool(&**self, &params).await,
            "resources/list" => Ok(json!({ "resources": catalog::resources() })),
            "resources/templates/list" => {
                Ok(json!({ "resourceTemplates": catalog::resource_templates() }))
            }
            "resources/read" => catalog::read_resource(&params),
            "prompts/list" => Ok(json!({ "prompts": catalog::prompts() })),
            "prompts/get" => catalog::get_prompt(&params),
            "completion/complete" => Ok(catalog::complete(&params)),
            other => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        }
    }
}

impl Peer for Server {
    /// Sends a notification to the client.
    async fn notify(&self, method: &str, params: Value) {
        let mut buf = BytesMut::new();
        if encode_notification(&mut buf, method, Some(&params)).is_ok() {
            let _ = self.sender().send(buf.freeze()).await;
        }
    }

    /// Sends a request to the client and waits for its answer.
    async fn ask(&self, method: &str, params: Value) -> Outcome {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().expect("lock").insert(id, tx);
        let mut buf = BytesMut::new();
        encode_request(&mut buf, &Id::Number(id), method, Some(&params))
            .map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))?;
        let _ = self.sender().send(buf.freeze()).await;
        rx.await
            .unwrap_or_else(|_| Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "no answer")))
    }

    /// True if the client declared `capability` in `initialize`.
    fn client_offers(&self, capability: &str) -> bool {
        self.client_caps
            .lock()
            .expect("lock")
            .get(capability)
            .is_some()
    }
}
