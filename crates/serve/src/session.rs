//! One client's session: reads its messages, runs each request on its own
//! task under a bound, relays cancellation, progress and `list_changed`.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use mcpwire_client::CancellationToken;
use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject, Id, Message, Notification, Request};
use mcpwire_manager::Manager;
use mcpwire_transport::{
    Active, CloseReason, FrameSender, Outgoing, Transport, TransportEvent, TransportExt,
};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::complete;
use crate::error::ServeError;
use crate::methods::{self, CallParams, InitializeParams, ProgressToken, SetLevel};
use crate::relay::{self, LogLevel};
use crate::requests::{self, Peer, ServerRequests};
use crate::wire::{self, Outcome};

/// How a [`Server`] serves each client.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServeOptions {
    max_in_flight: usize,
    name: String,
    instructions: Option<String>,
    requests: Option<ServerRequests>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            max_in_flight: 64,
            name: "mcpwire-serve".to_owned(),
            instructions: None,
            requests: None,
        }
    }
}

impl ServeOptions {
    /// The defaults: 64 requests in flight per client, named `mcpwire-serve`.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many of one client's requests may run at once (at least one).
    /// A request over the bound is answered at once with an error rather
    /// than queued, so a client cannot make us hold unbounded work.
    #[must_use]
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// The `serverInfo.name` answered to `initialize` and `server/discover`.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Relays the fleet's server requests (sampling, elicitation, roots)
    /// to the clients served, through `requests`, which must also be
    /// [installed](ServerRequests::install) in the fleet's builder.
    /// Default: none (the fleet's servers are not offered those
    /// capabilities).
    #[must_use]
    pub fn server_requests(mut self, requests: ServerRequests) -> Self {
        self.requests = Some(requests);
        self
    }

    /// The `instructions` answered to `initialize` and `server/discover`.
    #[must_use]
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }
}

/// A fleet offered as one MCP server: serves any number of clients, each
/// over its own [`Transport`], from one [`Manager`].
#[derive(Debug, Clone)]
pub struct Server {
    manager: Manager,
    options: Arc<ServeOptions>,
}

/// How many frames are granted at a time: enough to keep a pipelining
/// client busy, few enough that a paused session holds little.
const WINDOW: NonZeroU32 = NonZeroU32::new(32).expect("non-zero");

impl Server {
    /// Serves `manager`'s fleet with the default options.
    pub fn new(manager: Manager) -> Self {
        Self::with_options(manager, ServeOptions::new())
    }

    /// Serves `manager`'s fleet with `options`.
    pub fn with_options(manager: Manager, options: ServeOptions) -> Self {
        Self {
            manager,
            options: Arc::new(options),
        }
    }

    /// The fleet served.
    pub fn manager(&self) -> &Manager {
        &self.manager
    }

    /// Serves one client over `transport` until it closes. Requests still
    /// running then are cancelled (upstream too). Ends with `Ok` when the
    /// client closed its side; with [`ServeError::Transport`] when the
    /// connection failed.
    pub async fn serve<T: Transport>(&self, mut transport: T) -> Result<(), ServeError> {
        let session = Session::start(self, transport.sender());
        transport.set_active(Active::Many(WINDOW));
        let mut left = WINDOW.get();
        let reason = loop {
            match transport.next_event().await {
                Some(TransportEvent::Frame(frame)) => {
                    left -= 1;
                    if left == 0 {
                        transport.set_active(Active::Many(WINDOW));
                        left = WINDOW.get();
                    }
                    session.on_frame(frame).await;
                }
                Some(TransportEvent::Closed(reason)) => break reason,
                Some(_) => {}
                None => break CloseReason::Local,
            }
        };
        session.end();
        match reason {
            CloseReason::Local | CloseReason::Eof | CloseReason::Exited(_) => Ok(()),
            other => Err(ServeError::Transport(other)),
        }
    }
}

/// One client's state.
pub(crate) struct Session {
    manager: Manager,
    options: Arc<ServeOptions>,
    sender: FrameSender,
    /// The requests running, by id, each with the token that cancels it.
    /// Never holds more than `max_in_flight` entries (each holds a slot).
    running: Mutex<HashMap<Id, CancellationToken>>,
    slots: Arc<Semaphore>,
    /// Cancelled (set) once the client has been answered `initialize`:
    /// notifications wait for it.
    initialized: CancellationToken,
    /// The level the client set with `logging/setLevel`.
    log_level: Arc<LogLevel>,
    /// The relays' tasks, aborted when the session ends.
    relays: Mutex<Vec<tokio::task::AbortHandle>>,
    /// The client as the relay of server requests sees it, if relayed.
    peer: Option<Arc<Peer>>,
}

impl Session {
    /// A session of `server` whose messages to the client go to `sender`,
    /// its relays started (they wait for `initialize`).
    pub(crate) fn start(server: &Server, sender: FrameSender) -> Arc<Self> {
        let peer = server
            .options
            .requests
            .as_ref()
            .map(|r| r.join(sender.clone()));
        let session = Self::new(server, sender, peer);
        let relays = vec![
            tokio::spawn(relay::list_changed(
                session.manager.clone(),
                session.sender.clone(),
                session.initialized.clone(),
            ))
            .abort_handle(),
            tokio::spawn(relay::logs(
                session.manager.clone(),
                session.sender.clone(),
                session.initialized.clone(),
                session.log_level.clone(),
            ))
            .abort_handle(),
        ];
        *session
            .relays
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = relays;
        session
    }

    /// A session without relays, for the requests of the stateless era
    /// over HTTP: each request is a session of its own, and nothing but
    /// its progress and its answer goes to its stream.
    /// It is no peer of the server-request relay: the stateless era has
    /// no requests from server to client outside a request's own input
    /// rounds.
    pub(crate) fn stateless(server: &Server, sender: FrameSender) -> Arc<Self> {
        Self::new(server, sender, None)
    }

    fn new(server: &Server, sender: FrameSender, peer: Option<Arc<Peer>>) -> Arc<Self> {
        Arc::new(Session {
            manager: server.manager.clone(),
            options: server.options.clone(),
            sender,
            running: Mutex::new(HashMap::new()),
            slots: Arc::new(Semaphore::new(server.options.max_in_flight)),
            initialized: CancellationToken::new(),
            log_level: Arc::default(),
            relays: Mutex::new(Vec::new()),
            peer,
        })
    }

    /// Ends the session: stops its relays and cancels every request still
    /// running (upstream too).
    pub(crate) fn end(&self) {
        for relay in self
            .relays
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            relay.abort();
        }
        if let Some(peer) = &self.peer
            && peer.leave()
        {
            requests::roots_changed(&self.manager);
        }
        self.cancel_all();
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<Id, CancellationToken>> {
        // The map is left consistent by every critical section (single
        // inserts and removes), so a poisoned lock is still usable.
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Handles one frame from the client. Waits only to send an immediate
    /// error answer, which pushes back on a client that does not read.
    pub(crate) async fn on_frame(self: &Arc<Self>, frame: Bytes) {
        match Message::parse(frame) {
            Ok(Message::Request(request)) => self.on_request(request).await,
            Ok(Message::Notification(n)) => self.on_notification(&n),
            // An answer to a server request relayed to the client.
            Ok(Message::Response(response)) => {
                if let Some(peer) = &self.peer {
                    peer.answered(response);
                }
            }
            Err(e) => {
                let code = match e {
                    mcpwire_codec::jsonrpc::EnvelopeError::Json(_) => ErrorCode::PARSE_ERROR,
                    _ => ErrorCode::INVALID_REQUEST,
                };
                let error = ErrorObject::new(code, wire::chain(&e));
                self.send(wire::response(None, &Err(error))).await;
            }
        }
    }

    async fn on_request(self: &Arc<Self>, request: Request) {
        let Ok(permit) = self.slots.clone().try_acquire_owned() else {
            let error = ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "too many requests in flight (at most {} per client)",
                    self.options.max_in_flight
                ),
            );
            self.send(wire::response(Some(&request.id), &Err(error)))
                .await;
            return;
        };
        let cancel = CancellationToken::new();
        let fresh = {
            let mut running = self.running();
            let fresh = !running.contains_key(&request.id);
            if fresh {
                running.insert(request.id.clone(), cancel.clone());
            }
            fresh
        };
        if !fresh {
            let error = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("request id {} is already in use", request.id),
            );
            self.send(wire::response(Some(&request.id), &Err(error)))
                .await;
            return;
        }
        tokio::spawn(self.clone().run(request, cancel, permit));
    }

    /// Runs one request on its own task and answers it, unless the client
    /// cancelled it (then no answer is sent, as the spec asks).
    async fn run(
        self: Arc<Self>,
        request: Request,
        cancel: CancellationToken,
        permit: OwnedSemaphorePermit,
    ) {
        let outcome = self.handle(&request, &cancel).await;
        self.running().remove(&request.id);
        drop(permit);
        if let Some(outcome) = outcome
            && !cancel.is_cancelled()
        {
            if request.method == "initialize" && outcome.is_ok() {
                // Answered first, then notifications may follow it.
                self.send(wire::response(Some(&request.id), &outcome)).await;
                self.initialized.cancel();
                return;
            }
            self.send(wire::response(Some(&request.id), &outcome)).await;
        }
    }

    /// The request's outcome; `None` if it was cancelled before it had one.
    /// A request declaring a stateless revision in its `_meta` is served as
    /// that revision says, on its own: no `initialize` needed, its result
    /// completed for the era.
    async fn handle(&self, request: &Request, cancel: &CancellationToken) -> Option<Outcome> {
        let method = request.method.as_str();
        let modern = match methods::era_of(method, request.params.as_ref()) {
            Ok(modern) => modern.is_some(),
            Err(error) => return Some(Err(error)),
        };
        if !methods::is_known(method, modern) {
            return Some(Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )));
        }
        let mut outcome = self.dispatch(request, cancel, modern).await?;
        match &mut outcome {
            Ok(result) if modern || method == "server/discover" => {
                methods::stateless_result(method, &self.options.name, result);
            }
            // The stateless revision says "not found" with invalid params.
            Err(error) if modern && error.code == ErrorCode::RESOURCE_NOT_FOUND => {
                error.code = ErrorCode::INVALID_PARAMS;
            }
            _ => {}
        }
        Some(outcome)
    }

    /// The outcome of a request of a method we know.
    async fn dispatch(
        &self,
        request: &Request,
        cancel: &CancellationToken,
        modern: bool,
    ) -> Option<Outcome> {
        let manager = &self.manager;
        let params = request.params.as_ref();
        let quick = |outcome: Outcome| Some(outcome);
        // Counted as in flight to its server while it runs, so that
        // server's requests can be relayed to this client; not a request of
        // the stateless era, which gets no requests from the server.
        let relay_peer = self.peer.as_ref().filter(|_| !modern);
        let _calling = relay_peer.and_then(|peer| {
            let server = requests::upstream_server(manager, request)?;
            Some(peer.calling(server, &request.id))
        });
        match request.method.as_str() {
            "initialize" => quick(methods::params::<InitializeParams>(params).map(|p| {
                if let Some(peer) = &self.peer {
                    peer.initialize(params);
                }
                let version = methods::negotiate(Some(&p.protocol_version));
                methods::initialize_result(
                    version,
                    &self.options.name,
                    self.options.instructions.as_deref(),
                )
            })),
            "server/discover" => quick(Ok(methods::discover_result(
                &self.options.name,
                self.options.instructions.as_deref(),
            ))),
            "ping" => quick(Ok(json!({}))),
            "logging/setLevel" => quick(methods::params::<SetLevel>(params).map(|p| {
                self.log_level.set(p.level);
                json!({})
            })),
            "tools/list" => quick(methods::list_tools(manager)),
            "prompts/list" => quick(methods::list_prompts(manager)),
            "resources/list" => quick(methods::list_resources(manager)),
            "resources/templates/list" => quick(methods::list_templates(manager)),
            "tools/call" => {
                let call: CallParams = match methods::params(params) {
                    Ok(call) => call,
                    Err(e) => return Some(Err(e)),
                };
                let _calling = relay_peer.map(|peer| {
                    let server = manager.route(&call.name).ok().map(|(server, _)| server);
                    peer.calling(server, &request.id)
                });
                let mut options = methods::call_options(cancel.clone());
                if let Some(token) = call.meta.as_ref().and_then(|m| m.progress_token.clone()) {
                    options = options.on_progress(self.progress_relay(token));
                }
                // The call sees the token itself and tells its server.
                Some(methods::call_tool(manager, call, options).await)
            }
            "prompts/get" => {
                tokio::select! {
                    outcome = methods::get_prompt(manager, params) => Some(outcome),
                    () = cancel.cancelled() => None,
                }
            }
            "completion/complete" => {
                tokio::select! {
                    outcome = complete::complete(manager, params) => Some(outcome),
                    () = cancel.cancelled() => None,
                }
            }
            "resources/read" => {
                tokio::select! {
                    outcome = methods::read_resource(manager, params) => Some(outcome),
                    () = cancel.cancelled() => None,
                }
            }
            other => quick(Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            ))),
        }
    }

    /// A progress callback that passes each upstream progress on to the
    /// client under the client's own token. It runs on the call's task and
    /// must not wait: when the client's queue is full the update is
    /// dropped, as the next one says more (progress only increases).
    fn progress_relay(
        &self,
        token: ProgressToken,
    ) -> impl Fn(&mcpwire_client::types::Progress) + Send + Sync + 'static {
        let sender = self.sender.clone();
        move |progress| {
            let mut params = json!({"progressToken": token, "progress": progress.progress});
            if let Some(total) = progress.total {
                params["total"] = json!(total);
            }
            if let Some(message) = &progress.message {
                params["message"] = json!(message);
            }
            if let Some(frame) = wire::notification("notifications/progress", Some(&params)) {
                let _ = sender.try_send(frame);
            }
        }
    }

    fn on_notification(&self, notification: &Notification) {
        if let Some(peer) = &self.peer
            && requests::changes_roots(peer, &notification.method)
        {
            requests::roots_changed(&self.manager);
        }
        if notification.method != "notifications/cancelled" {
            // Anything else (progress): nothing more to do.
            return;
        }
        #[derive(Deserialize)]
        struct Cancelled {
            #[serde(rename = "requestId")]
            request_id: Id,
        }
        let Some(Ok(cancelled)) = notification
            .params
            .as_ref()
            .map(|p| p.deserialize::<Cancelled>())
        else {
            // A cancellation naming no request we can read: nothing to stop.
            return;
        };
        if let Some(token) = self.running().get(&cancelled.request_id) {
            token.cancel();
        }
    }

    /// Cancels every running request: the client is gone.
    fn cancel_all(&self) {
        for token in self.running().values() {
            token.cancel();
        }
    }

    async fn send(&self, frame: impl Into<Outgoing>) {
        // A closed sender means the client is gone; the read loop learns
        // it from the transport and ends the session.
        let _ = self.sender.send(frame).await;
    }
}
