//! Starting a server (its client, the handshake, the first listing, within
//! its start-up timeout), watching it afterwards (health from the client's
//! state; `list_changed` and new sessions, debounced, refresh that server's
//! lists only), and finding the client a call goes to.

use std::sync::{Arc, Weak};
use std::time::Duration;

use mcpwire_client::{Client, ConnectionState, Error as ClientError, ListKind};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::Error;
use crate::fleet::Fleet;
use crate::health::Health;
use crate::saved::ServerCatalogue;
use crate::slot::{Entered, Slot, Source, lock};
use crate::spec::ConnectPolicy;

/// Whether a start may try a server that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Yes: the caller asked (`connect_all`, `connect`, `retry_failed`, a
    /// call with `.retry_failed()`).
    Failed,
    /// No: a failed server stays failed, and says so.
    No,
}

/// Which lists to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Kinds {
    tools: bool,
    prompts: bool,
    resources: bool,
}

impl Kinds {
    const ALL: Kinds = Kinds {
        tools: true,
        prompts: true,
        resources: true,
    };

    fn any(self) -> bool {
        self.tools || self.prompts || self.resources
    }
}

/// The client's change counters, subscribed before the first listing so a
/// change during it is not lost.
struct Watches {
    state: watch::Receiver<ConnectionState>,
    sessions: watch::Receiver<u64>,
    tools: watch::Receiver<u64>,
    prompts: watch::Receiver<u64>,
    resources: watch::Receiver<u64>,
}

impl Watches {
    fn new(client: &Client) -> Watches {
        let mut w = Watches {
            state: client.watch_state(),
            sessions: client.sessions(),
            tools: client.list_changed(ListKind::Tools),
            prompts: client.list_changed(ListKind::Prompts),
            resources: client.list_changed(ListKind::Resources),
        };
        w.state.borrow_and_update();
        w.sessions.borrow_and_update();
        w.tools.borrow_and_update();
        w.prompts.borrow_and_update();
        w.resources.borrow_and_update();
        w
    }
}

/// Starts `slot` unless it has a client already; returns the client. One
/// start at a time per server: a second caller waits for the first and
/// gets its client (or, for a failed start and `Retry::No`, its error).
pub(crate) async fn start(
    fleet: &Arc<Fleet>,
    slot: &Arc<Slot>,
    retry: Retry,
) -> Result<Client, Error> {
    let _one = slot.starting.lock().await;
    if fleet.is_closed() {
        return Err(Error::Closed);
    }
    if slot.is_removed() {
        return Err(removed(slot));
    }
    if let Some(client) = slot.client() {
        return Ok(client);
    }
    let health = slot.health();
    if let (Retry::No, Some(e)) = (retry, health.error().filter(|_| health.is_failed())) {
        return Err(failed(slot, e.clone()));
    }
    fleet.set_health(slot, Health::Connecting);
    match start_client(fleet, slot).await {
        Ok((client, lists, watches)) => {
            slot.set_client(Some(client.clone()));
            fleet.set_lists(slot, lists, Source::Live);
            let task = tokio::spawn(monitor(
                Arc::downgrade(fleet),
                slot.clone(),
                client.clone(),
                watches,
                fleet.shutdown.subscribe(),
                fleet.options.debounce,
            ));
            if let Some(old) = lock(&slot.monitor).replace(task.abort_handle()) {
                old.abort();
            }
            fleet.set_health(slot, Health::Ready);
            Ok(client)
        }
        Err(e) => {
            fleet.drop_lists(slot);
            fleet.set_health(slot, Health::failure(e.clone()));
            Err(e)
        }
    }
}

/// The error of a call to a server that left the fleet.
fn removed(slot: &Slot) -> Error {
    Error::Removed {
        server: slot.name().to_owned(),
    }
}

/// The error of a call to a server that failed.
fn failed(slot: &Slot, cause: Error) -> Error {
    Error::ServerFailed {
        server: slot.name().to_owned(),
        cause: Arc::new(cause),
    }
}

async fn start_client(
    fleet: &Fleet,
    slot: &Slot,
) -> Result<(Client, ServerCatalogue, Watches), Error> {
    let server = slot.name().to_owned();
    let factory = (slot.spec.connector)().map_err(|source| Error::Connect {
        server: server.clone(),
        source,
    })?;
    let mut config = slot.client_config(&fleet.options.client_config);
    if let Some(configure) = &fleet.options.configure_client {
        config = configure(&server, config);
    }
    let client = Client::start(factory, config);
    let timeout = slot
        .spec
        .policy
        .startup_timeout
        .unwrap_or(fleet.options.startup_timeout);
    let started = tokio::time::timeout(timeout, async {
        ready(&client, &server).await?;
        let watches = Watches::new(&client);
        let lists = list(&client, Kinds::ALL, ServerCatalogue::default())
            .await
            .map_err(|source| Error::Request {
                server: server.clone(),
                source,
            })?;
        Ok((lists, watches))
    })
    .await;
    let outcome = match started {
        Ok(Ok((lists, watches))) => return Ok((client, lists, watches)),
        Ok(Err(e)) => e,
        Err(_) => Error::StartupTimeout { server, timeout },
    };
    // Closing waits for the server process to exit: not on the caller's
    // time. The client stops reconnecting at once.
    tokio::spawn(async move { client.close().await });
    Err(outcome)
}

/// Waits for the first connection to be ready. Its first failure is the
/// start's failure, even with a reconnect policy: reconnecting is for a
/// server that was up once.
async fn ready(client: &Client, server: &str) -> Result<(), Error> {
    let mut states = client.watch_state();
    let state = states
        .wait_for(|s| {
            matches!(
                s,
                ConnectionState::Ready
                    | ConnectionState::Closed(_)
                    | ConnectionState::Backoff { .. }
            )
        })
        .await
        .map(|s| s.clone());
    match state {
        Ok(ConnectionState::Ready) => Ok(()),
        Ok(
            ConnectionState::Closed(Some(source)) | ConnectionState::Backoff { cause: source, .. },
        ) => Err(Error::Connect {
            server: server.to_owned(),
            source,
        }),
        _ => Err(Error::Closed),
    }
}

/// Reads the lists of `kinds` the server has the capability for into
/// `lists` (the others are kept).
async fn list(
    client: &Client,
    kinds: Kinds,
    mut lists: ServerCatalogue,
) -> Result<ServerCatalogue, ClientError> {
    let caps = client.server_capabilities().unwrap_or_default();
    if kinds.tools {
        lists.tools = match caps.tools {
            Some(_) => client.list_all_tools().await?,
            None => Vec::new(),
        };
    }
    if kinds.prompts {
        lists.prompts = match caps.prompts {
            Some(_) => client.list_all_prompts().await?,
            None => Vec::new(),
        };
    }
    if kinds.resources {
        (lists.resources, lists.resource_templates) = match caps.resources {
            Some(_) => {
                let resources = client.list_all_resources().await?;
                // Templates are optional even for a server with resources.
                let templates = match client.list_all_resource_templates().await {
                    Err(e) if e.code().is_some_and(|c| c.0 == METHOD_NOT_FOUND) => Vec::new(),
                    other => other?,
                };
                (resources, templates)
            }
            None => (Vec::new(), Vec::new()),
        };
    }
    Ok(lists)
}

/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i32 = -32601;

/// Watches one server's client until it closes or the fleet does: health
/// from its state; after a `list_changed` or a new session (a
/// reconnection, a re-initialized expired session), and once ready, the
/// changed lists are read again after `debounce` (every change within it
/// coalesces into one refresh and one event).
async fn monitor(
    fleet: Weak<Fleet>,
    slot: Arc<Slot>,
    client: Client,
    mut w: Watches,
    mut shutdown: watch::Receiver<bool>,
    debounce: Duration,
) {
    let mut pending = Kinds::default();
    let mut due: Option<Instant> = None;
    let mut ready = w.state.borrow().is_ready();
    loop {
        let refresh_at = due.filter(|_| ready && pending.any());
        let mut changed = Kinds::default();
        tokio::select! {
            r = shutdown.changed() => {
                if r.is_err() || *shutdown.borrow() {
                    return;
                }
            }
            r = w.state.changed() => {
                if r.is_err() {
                    return;
                }
                let state = w.state.borrow_and_update().clone();
                ready = state.is_ready();
                let Some(fleet) = fleet.upgrade() else { return };
                if state.is_closed() {
                    lost(&fleet, &slot, &state);
                    return;
                }
                if let Some(health) = Health::from_state(slot.name(), &state) {
                    fleet.set_health(&slot, health);
                }
            }
            r = w.sessions.changed() => {
                if r.is_err() {
                    return;
                }
                w.sessions.borrow_and_update();
                changed = Kinds::ALL;
            }
            r = w.tools.changed() => {
                if r.is_err() {
                    return;
                }
                w.tools.borrow_and_update();
                changed.tools = true;
            }
            r = w.prompts.changed() => {
                if r.is_err() {
                    return;
                }
                w.prompts.borrow_and_update();
                changed.prompts = true;
            }
            r = w.resources.changed() => {
                if r.is_err() {
                    return;
                }
                w.resources.borrow_and_update();
                changed.resources = true;
            }
            () = sleep_until(refresh_at) => {
                due = None;
                let kinds = std::mem::take(&mut pending);
                let Some(fleet) = fleet.upgrade() else { return };
                refresh(&fleet, &slot, &client, kinds).await;
            }
        }
        if changed.any() {
            pending.tools |= changed.tools;
            pending.prompts |= changed.prompts;
            pending.resources |= changed.resources;
            due.get_or_insert_with(|| Instant::now() + debounce);
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Reads `kinds` of `slot`'s lists again.
async fn refresh(fleet: &Fleet, slot: &Slot, client: &Client, kinds: Kinds) {
    let current = lock(&slot.lists).lists.clone();
    match list(client, kinds, current).await {
        Ok(lists) => {
            fleet.set_lists(slot, lists, Source::Live);
            if matches!(slot.health(), Health::Degraded(_)) && client.state().is_ready() {
                fleet.set_health(slot, Health::Ready);
            }
        }
        // A lost connection shows in the state; the next session refreshes.
        Err(e) if e.is_closed() => {}
        Err(source) => {
            tracing::warn!(server = slot.name(), error = %source, "reading the lists again failed");
            let error = Error::Request {
                server: slot.name().to_owned(),
                source,
            };
            fleet.set_health(slot, Health::Degraded(error));
        }
    }
}

/// The client closed for good: forget it and its lists.
fn lost(fleet: &Fleet, slot: &Slot, state: &ConnectionState) {
    slot.set_client(None);
    fleet.drop_lists(slot);
    if let Some(health) = Health::from_state(slot.name(), state) {
        fleet.set_health(slot, health);
    }
}

/// The client a call to `slot` goes to: its client, or a start for a lazy
/// server (or an eager one not started yet), or the failure of a failed
/// one (a start again with `Retry::Failed`); with the call counted as under
/// way on `slot` until the guard is dropped. A server that left the fleet
/// takes no call ([`Error::Removed`]), even one routed by a catalogue read
/// just before it left.
pub(crate) async fn client_for_call(
    fleet: &Arc<Fleet>,
    slot: &Arc<Slot>,
    retry: Retry,
) -> Result<(Client, Entered), Error> {
    let entered = slot.enter().ok_or_else(|| removed(slot))?;
    let client = client_or_start(fleet, slot, retry).await?;
    Ok((client, entered))
}

async fn client_or_start(
    fleet: &Arc<Fleet>,
    slot: &Arc<Slot>,
    retry: Retry,
) -> Result<Client, Error> {
    if let Some(client) = slot.client() {
        return Ok(client);
    }
    let health = slot.health();
    if slot.spec.connect == ConnectPolicy::Manual && !(health.is_failed() && retry == Retry::Failed)
    {
        return Err(match health.error() {
            Some(e) if health.is_failed() => failed(slot, e.clone()),
            _ => Error::NotConnected {
                server: slot.name().to_owned(),
            },
        });
    }
    start(fleet, slot, retry).await
}

/// Whether `slot` offers its live lists (rather than saved ones or none).
pub(crate) fn is_live(slot: &Slot) -> bool {
    lock(&slot.lists).source == Source::Live
}
