//! The requests the fleet's servers send their client
//! (`sampling/createMessage`, `elicitation/create`, `roots/list`), relayed
//! to the downstream client that caused them.
//!
//! [`ServerRequests`] is installed twice: into the
//! [`ManagerBuilder`] (each server's client then declares `sampling`,
//! `elicitation` and `roots` and hands what it is asked to us with the
//! server's name), and into the [`ServeOptions`](crate::ServeOptions)
//! (each session joins it as a [`Peer`]: the client's capabilities, its
//! calls in flight and the requests it has yet to answer).
//!
//! Which client caused a server's request: neither the upstream transport
//! nor the request says which call it belongs to (a stdio server's
//! requests carry no link to its calls), so the rule is one that cannot
//! pick the wrong client. The candidates are the clients with a call in
//! flight to that server (or, when none has, every initialized client);
//! with exactly one candidate the request goes to it, with several it is
//! refused. A client that did not declare the capability gets no request:
//! the server is answered `-32601` (method not found), as a client without
//! the handler answers. `roots/list` with no single candidate is answered
//! with the union of the roots of every client that declared `roots`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use bytes::BytesMut;
use mcpwire_client::types::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ListRootsResult,
};
use mcpwire_client::{ClientConfig, ElicitationDefaults, HandlerError};
use mcpwire_codec::jsonrpc::{
    ErrorCode, ErrorObject, Id, Payload, Request, Response, encode_notification, encode_request,
};
use mcpwire_manager::{Manager, ManagerBuilder};
use mcpwire_transport::{FrameMeta, FrameSender, Outgoing};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// The field of an outgoing request's [`FrameMeta`] that names, as JSON
/// text, the client's request it belongs to: the HTTP endpoint sends it
/// on that request's stream. Never leaves the process.
pub(crate) const RELATED: &str = "x-mcpwire-related-request";

/// The client's request an outgoing request belongs to, as [`RELATED`]
/// says.
pub(crate) fn related(meta: Option<&FrameMeta>) -> Option<Id> {
    serde_json::from_str(meta?.get(RELATED)?).ok()
}

/// How long a client may take to answer by default: long enough for a
/// person to read and approve a sampling or elicitation request.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// The relay of the fleet's server requests to the serving sessions'
/// clients. Cheap to clone; clones share the sessions.
///
/// ```no_run
/// # fn demo(builder: mcpwire_manager::ManagerBuilder) -> Result<(), mcpwire_manager::Error> {
/// use mcpwire_serve::{ServeOptions, Server, ServerRequests};
///
/// let requests = ServerRequests::new();
/// let manager = requests.install(builder).build()?;
/// let server = Server::with_options(manager, ServeOptions::new().server_requests(requests));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ServerRequests {
    hub: Arc<Hub>,
}

impl std::fmt::Debug for ServerRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerRequests")
            .field("clients", &self.hub.live().len())
            .field("entries", &self.hub.peers().len())
            .field("timeout", &self.hub.timeout)
            .finish()
    }
}

impl Default for ServerRequests {
    fn default() -> Self {
        Self::new()
    }
}

impl ServerRequests {
    /// A relay whose clients have 5 minutes to answer each request.
    pub fn new() -> Self {
        Self::with_timeout(DEFAULT_TIMEOUT)
    }

    /// A relay whose clients have `timeout` to answer each request; the
    /// server is then answered with an error and the client's request is
    /// cancelled.
    pub fn with_timeout(timeout: Duration) -> Self {
        Self {
            hub: Arc::new(Hub {
                peers: Mutex::new(Vec::new()),
                timeout,
            }),
        }
    }

    /// Makes every server's client of `builder`'s fleet declare `sampling`,
    /// `elicitation` (form and URL modes) and `roots` (with
    /// `listChanged`), and relay what it is asked to the clients of the
    /// sessions served with this relay. An answer goes upstream as the
    /// client gave it (an elicitation form's defaults are not filled in on
    /// the way).
    pub fn install(&self, builder: ManagerBuilder) -> ManagerBuilder {
        let hub = self.hub.clone();
        builder.configure_client(move |server: &str, config: ClientConfig| {
            let server: Arc<str> = Arc::from(server);
            let (sampling, sampling_server) = (hub.clone(), server.clone());
            let (elicit, elicit_server) = (hub.clone(), server.clone());
            let (roots, roots_server) = (hub.clone(), server);
            config
                .sampling(move |params: CreateMessageParams, _| {
                    let (hub, server) = (sampling.clone(), sampling_server.clone());
                    async move {
                        hub.relay::<_, CreateMessageResult>(
                            &server,
                            "sampling/createMessage",
                            &params,
                            |c| c.sampling,
                        )
                        .await
                    }
                })
                .elicitation(move |params: ElicitParams, _| {
                    let (hub, server) = (elicit.clone(), elicit_server.clone());
                    async move {
                        let url = params.is_url_mode();
                        hub.relay::<_, ElicitResult>(&server, "elicitation/create", &params, |c| {
                            if url { c.elicit_url } else { c.elicit_form }
                        })
                        .await
                    }
                })
                .elicitation_url(true)
                // The client answering fills a form's defaults if it
                // does; its answer goes upstream as it came.
                .elicitation_defaults(ElicitationDefaults::Leave)
                .roots(move |_| {
                    let (hub, server) = (roots.clone(), roots_server.clone());
                    async move { hub.roots(&server).await }
                })
                .roots_list_changed(true)
        })
    }

    /// A session's client joins: its requests may be relayed once it has
    /// said its capabilities ([`Peer::initialize`]).
    pub(crate) fn join(&self, sender: FrameSender) -> Arc<Peer> {
        let peer = Arc::new(Peer {
            hub: Arc::downgrade(&self.hub),
            sender,
            declared: Mutex::new(Caps::default()),
            caps: Mutex::new(None),
            calls: Mutex::new(Vec::new()),
            pending: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        });
        self.hub.peers().push(Arc::downgrade(&peer));
        peer
    }
}

/// What a client declared it can answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Caps {
    sampling: bool,
    elicit_form: bool,
    elicit_url: bool,
    roots: bool,
}

impl Caps {
    /// The capabilities of an `initialize` request's params.
    fn of(params: &Value) -> Caps {
        let caps = &params["capabilities"];
        let present = |name: &str| caps.get(name).is_some_and(Value::is_object);
        let elicitation = &caps["elicitation"];
        // An empty `elicitation` object is form mode, as before modes.
        let modes = elicitation.get("form").is_some() || elicitation.get("url").is_some();
        Caps {
            sampling: present("sampling"),
            elicit_form: present("elicitation") && (!modes || elicitation.get("form").is_some()),
            elicit_url: present("elicitation") && elicitation.get("url").is_some(),
            roots: present("roots"),
        }
    }
}

/// The sessions' clients.
struct Hub {
    /// The sessions' clients, held weakly: a session dropped without
    /// ending (its future dropped) is no candidate for anything.
    peers: Mutex<Vec<Weak<Peer>>>,
    timeout: Duration,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves its data whole (single pushes and
    // removes), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where a server's request goes.
enum Pick {
    /// To this client, on the stream of this request of its, if known.
    One(Arc<Peer>, Option<Id>),
    /// No client is connected.
    Nobody,
    /// This many clients could have caused it.
    Several(usize),
}

impl Hub {
    fn peers(&self) -> MutexGuard<'_, Vec<Weak<Peer>>> {
        lock(&self.peers)
    }

    /// The sessions' clients still there; a session dropped without
    /// ending left a dead entry, forgotten here.
    fn live(&self) -> Vec<Arc<Peer>> {
        let mut peers = self.peers();
        peers.retain(|p| p.strong_count() > 0);
        peers.iter().filter_map(Weak::upgrade).collect()
    }

    /// The initialized clients, with their capabilities.
    fn initialized(&self) -> Vec<(Arc<Peer>, Caps)> {
        self.live()
            .into_iter()
            .filter_map(|p| p.caps().map(|c| (p, c)))
            .collect()
    }

    /// The client that caused server `server`'s request: the one client
    /// with calls in flight to it or, when none has, the one client.
    fn pick(&self, server: &str) -> (Pick, Caps) {
        let all = self.initialized();
        let calling: Vec<_> = all
            .iter()
            .filter(|(p, _)| p.related(server).is_some())
            .cloned()
            .collect();
        let mut candidates = if calling.is_empty() { all } else { calling };
        match candidates.len() {
            0 => (Pick::Nobody, Caps::default()),
            1 => {
                let (peer, caps) = candidates.remove(0);
                let related = peer.related(server).flatten();
                (Pick::One(peer, related), caps)
            }
            n => (Pick::Several(n), Caps::default()),
        }
    }

    /// Relays server `server`'s request `method` to the client that caused
    /// it, if that client declared what `can` reads off its capabilities.
    async fn relay<P: Serialize, R: DeserializeOwned>(
        &self,
        server: &str,
        method: &'static str,
        params: &P,
        can: impl Fn(Caps) -> bool,
    ) -> Result<R, HandlerError> {
        let (peer, related) = match self.pick(server) {
            (Pick::One(peer, related), caps) if can(caps) => (peer, related),
            (Pick::One(..), _) => {
                return Err(HandlerError::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("the client that called server {server} does not support {method}"),
                ));
            }
            (Pick::Nobody, _) => {
                return Err(HandlerError::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("no client is connected to answer {method}"),
                ));
            }
            (Pick::Several(n), _) => {
                return Err(HandlerError::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "{n} clients have calls in flight to server {server}: \
                         cannot tell which one {method} is for"
                    ),
                ));
            }
        };
        let result = peer.ask(method, params, related, self.timeout).await?;
        result.deserialize().map_err(|e| {
            HandlerError::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the client's answer to {method} is not valid: {e}"),
            )
        })
    }

    /// Answers server `server`'s `roots/list`: the roots of the client that
    /// caused it, or else the union of every client's roots (those that
    /// fail to answer in time are left out).
    async fn roots(&self, server: &str) -> Result<ListRootsResult, HandlerError> {
        if let (Pick::One(..), _) = self.pick(server) {
            return self
                .relay(server, "roots/list", &json!({}), |c| c.roots)
                .await;
        }
        let mut asking = JoinSet::new();
        for (peer, caps) in self.initialized() {
            if caps.roots {
                let timeout = self.timeout;
                asking
                    .spawn(async move { peer.ask("roots/list", &json!({}), None, timeout).await });
            }
        }
        let mut seen = HashSet::new();
        let mut roots = Vec::new();
        while let Some(joined) = asking.join_next().await {
            let Ok(Ok(answer)) = joined else { continue };
            let Ok(listed) = answer.deserialize::<ListRootsResult>() else {
                continue;
            };
            for root in listed.roots {
                if seen.insert(root.uri.clone()) {
                    roots.push(root);
                }
            }
        }
        Ok(ListRootsResult::new(roots))
    }
}

/// One session's client, as the relay sees it.
pub(crate) struct Peer {
    hub: Weak<Hub>,
    sender: FrameSender,
    /// What the client declared in `initialize`.
    declared: Mutex<Caps>,
    /// `None` until the client said it is initialized: no request goes
    /// to it before.
    caps: Mutex<Option<Caps>>,
    /// The client's requests in flight upstream: each with its server
    /// (`None` when it cannot be told, which counts for every server).
    calls: Mutex<Vec<(u64, Option<String>, Id)>>,
    /// Our requests the client has yet to answer.
    pending: Mutex<HashMap<Id, oneshot::Sender<Result<Payload, ErrorObject>>>>,
    next: AtomicU64,
}

impl Peer {
    fn caps(&self) -> Option<Caps> {
        *lock(&self.caps)
    }

    /// The client's `initialize` params: its capabilities.
    pub(crate) fn initialize(&self, params: Option<&Payload>) {
        let params: Value = params
            .and_then(|p| p.deserialize().ok())
            .unwrap_or(Value::Null);
        *lock(&self.declared) = Caps::of(&params);
    }

    /// The client said it is initialized: requests may go to it now. True
    /// if it declared `roots`.
    fn initialized(&self) -> bool {
        let declared = *lock(&self.declared);
        *lock(&self.caps) = Some(declared);
        declared.roots
    }

    /// Leaves the relay: the requests it has yet to answer fail at once.
    /// True if it had declared `roots`.
    pub(crate) fn leave(self: &Arc<Self>) -> bool {
        if let Some(hub) = self.hub.upgrade() {
            hub.peers()
                .retain(|p| !std::ptr::eq(p.as_ptr(), Arc::as_ptr(self)));
        }
        lock(&self.pending).clear();
        self.caps().is_some_and(|c| c.roots)
    }

    /// Whether the client has a call in flight to `server`: `Some` with
    /// the oldest such call's id (`None` inside when only a call whose
    /// server is unknown is).
    fn related(&self, server: &str) -> Option<Option<Id>> {
        let calls = lock(&self.calls);
        let mut unknown = false;
        for (_, to, id) in calls.iter() {
            match to {
                Some(to) if to == server => return Some(Some(id.clone())),
                Some(_) => {}
                None => unknown = true,
            }
        }
        unknown.then_some(None)
    }

    /// Counts `request` as in flight to `server` until the guard is dropped.
    pub(crate) fn calling(self: &Arc<Self>, server: Option<String>, request: &Id) -> Calling {
        let serial = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.calls).push((serial, server, request.clone()));
        Calling {
            peer: self.clone(),
            serial,
        }
    }

    /// The client's answer to one of our requests.
    pub(crate) fn answered(&self, response: Response) {
        let waiter = response
            .id
            .as_ref()
            .and_then(|id| lock(&self.pending).remove(id));
        if let Some(waiter) = waiter {
            let _ = waiter.send(response.outcome);
        }
    }

    /// Sends the client request `method` (on request `related`'s stream
    /// over HTTP) and waits at most `timeout` for its answer.
    async fn ask<P: Serialize>(
        &self,
        method: &'static str,
        params: &P,
        related: Option<Id>,
        timeout: Duration,
    ) -> Result<Payload, HandlerError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = Id::from(format!("mcpwire-{n}"));
        let mut buf = BytesMut::new();
        encode_request(&mut buf, &id, method, Some(params)).map_err(|e| {
            HandlerError::new(
                ErrorCode::INTERNAL_ERROR,
                format!("cannot encode {method}: {e}"),
            )
        })?;
        let mut outgoing = Outgoing::request(buf.freeze(), id.clone(), method);
        if let Some(related) = related.and_then(|r| serde_json::to_string(&r).ok()) {
            let meta = FrameMeta::new().header(RELATED, related);
            outgoing = outgoing.with_meta(Some(Arc::new(meta)));
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        // From here on, giving up (a timeout, the server cancelling)
        // withdraws the request from the client.
        let waiting = Waiting { peer: self, id };
        let gone = || HandlerError::new(ErrorCode::INTERNAL_ERROR, "the client went away");
        let sent = tokio::time::timeout(timeout, self.sender.send(outgoing)).await;
        if !matches!(sent, Ok(Ok(()))) {
            return Err(gone());
        }
        let outcome = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => return Err(gone()),
            Err(_) => {
                return Err(HandlerError::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("the client did not answer {method} within {timeout:?}"),
                ));
            }
        };
        // Answered: nothing left to withdraw.
        drop(waiting);
        outcome.map_err(|e| {
            let mut error = HandlerError::new(e.code, e.message);
            error.data = e.data.and_then(|d| d.deserialize().ok());
            error
        })
    }
}

/// A request of ours the client has not answered: dropped, it is
/// withdrawn (`notifications/cancelled` to the client).
struct Waiting<'a> {
    peer: &'a Peer,
    id: Id,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if lock(&self.peer.pending).remove(&self.id).is_none() {
            // Already answered or the client left: nothing to withdraw.
            return;
        }
        let params = json!({"requestId": self.id, "reason": "the server stopped waiting"});
        let mut buf = BytesMut::new();
        if encode_notification(&mut buf, "notifications/cancelled", Some(&params)).is_ok() {
            let withdrawn = Outgoing::notification(buf.freeze(), "notifications/cancelled");
            let _ = self.peer.sender.try_send(withdrawn);
        }
    }
}

/// A client's request in flight upstream, counted while this lives.
pub(crate) struct Calling {
    peer: Arc<Peer>,
    serial: u64,
}

impl Drop for Calling {
    fn drop(&mut self) {
        lock(&self.peer.calls).retain(|(serial, ..)| *serial != self.serial);
    }
}

/// The server a client's `prompts/get` or `resources/read` goes to: `None`
/// for another request, `Some(None)` when its server cannot be told (it
/// then counts for every server). A `tools/call` is tied to its server
/// where its params are read for the call, so its arguments are read once.
pub(crate) fn upstream_server(manager: &Manager, request: &Request) -> Option<Option<String>> {
    /// What names the target; the arguments, however large, are skipped
    /// by the parser, not built into a tree on every call.
    #[derive(serde::Deserialize)]
    struct Target {
        name: Option<String>,
        uri: Option<String>,
    }
    let target = || {
        request
            .params
            .as_ref()
            .and_then(|p| p.deserialize::<Target>().ok())
    };
    let server = match request.method.as_str() {
        "prompts/get" => target()
            .and_then(|t| t.name)
            .and_then(|n| manager.route_prompt(&n).ok().map(|(s, _)| s)),
        "resources/read" => target()
            .and_then(|t| t.uri)
            .and_then(|uri| manager.route_resource(&uri).ok()),
        _ => return None,
    };
    Some(server)
}

/// Whether the client's notification `method` changes the roots the fleet
/// sees: the client's own change, or its joining with roots.
pub(crate) fn changes_roots(peer: &Peer, method: &str) -> bool {
    match method {
        "notifications/initialized" => peer.initialized(),
        "notifications/roots/list_changed" => true,
        _ => false,
    }
}

/// Tells every server of the fleet that the roots changed: it will ask
/// again. Runs on its own task; a server that cannot be told is skipped.
pub(crate) fn roots_changed(manager: &Manager) {
    let clients: Vec<_> = manager
        .servers()
        .iter()
        .filter_map(|name| manager.client(name))
        .collect();
    if clients.is_empty() {
        return;
    }
    tokio::spawn(async move {
        for client in clients {
            let _ = client.roots_list_changed().await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_are_read_as_declared_and_empty_elicitation_is_form_mode() {
        let caps = Caps::of(&json!({"capabilities": {"sampling": {}, "elicitation": {}}}));
        assert_eq!(
            caps,
            Caps {
                sampling: true,
                elicit_form: true,
                elicit_url: false,
                roots: false
            }
        );
        let caps = Caps::of(&json!({"capabilities": {"elicitation": {"url": {}}, "roots": {}}}));
        assert_eq!(
            caps,
            Caps {
                sampling: false,
                elicit_form: false,
                elicit_url: true,
                roots: true
            }
        );
        let caps = Caps::of(&json!({"capabilities": {"elicitation": {"form": {}, "url": {}}}}));
        assert!(caps.elicit_form && caps.elicit_url);
        assert_eq!(Caps::of(&Value::Null), Caps::default());
    }
}
