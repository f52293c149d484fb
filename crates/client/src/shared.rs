//! What the [`Client`](crate::Client) handles and their connection task
//! share: the configuration, the current connection and session, the state,
//! the notification lanes, the wanted subscriptions and the handler
//! dispatcher.

use std::sync::Arc;
use std::sync::atomic::AtomicI64;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::client_cache::ClientCache;
use crate::config::ClientConfig;
use crate::conn::Conn;
use crate::dispatch::Dispatcher;
use crate::error::Error;
use crate::lifecycle::{self, Lifecycle, Session};
use crate::lock::{Mutex, RwLock};
use crate::notify::Hub;
use crate::state::ConnectionState;
use crate::subscription::Wanted;
use crate::types::InitializeResult;
use crate::version::Era;

pub(crate) struct Shared {
    pub(crate) config: ClientConfig,
    /// The ready connection, while there is one.
    conn: RwLock<Option<Arc<Conn>>>,
    /// The server's `initialize` result (or what `server/discover` said,
    /// in the same shape) for the current session.
    session: RwLock<Option<Arc<InitializeResult>>>,
    /// The era the current session speaks.
    era: RwLock<Option<Era>>,
    pub(crate) state: watch::Sender<ConnectionState>,
    /// Sessions started so far: bumped by every successful handshake (the
    /// first, after a reconnection, after an expired session).
    pub(crate) sessions: watch::Sender<u64>,
    pub(crate) hub: Arc<Hub>,
    /// The resources the user subscribed to, re-established on every
    /// connection.
    pub(crate) wanted: Wanted,
    pub(crate) dispatcher: Arc<Dispatcher>,
    pub(crate) lifecycle: Arc<dyn Lifecycle>,
    /// Set to `true` to close the client.
    pub(crate) closing: watch::Sender<bool>,
    /// Request ids, unique across reconnections.
    pub(crate) next_id: Arc<AtomicI64>,
    /// The connection task, until `close` waits for it.
    pub(crate) task: Mutex<Option<JoinHandle<()>>>,
}

impl Shared {
    pub(crate) fn new(config: ClientConfig, closing: watch::Sender<bool>) -> Self {
        Self {
            hub: Arc::new(Hub::new(
                config.notification_capacity,
                ClientCache::new(
                    config.response_cache.clone(),
                    config.response_cache_size,
                    config.credential_id.clone(),
                ),
            )),
            wanted: Wanted::default(),
            dispatcher: Arc::new(Dispatcher::new(config.clone())),
            lifecycle: lifecycle::for_config(&config),
            config,
            conn: RwLock::new(None),
            session: RwLock::new(None),
            era: RwLock::new(None),
            state: watch::channel(ConnectionState::Connecting { attempt: 0 }).0,
            sessions: watch::channel(0).0,
            closing,
            next_id: Arc::new(AtomicI64::new(0)),
            task: Mutex::new(None),
        }
    }

    /// The ready connection, or why there is none (calls fail at once
    /// rather than queue).
    pub(crate) fn conn(&self) -> Result<Arc<Conn>, Error> {
        match &*self.conn.read() {
            Some(c) => Ok(c.clone()),
            None => Err(match &*self.state.borrow() {
                ConnectionState::Closed(Some(e)) => e.clone(),
                ConnectionState::Backoff { cause, .. } => cause.clone(),
                _ => Error::not_ready(),
            }),
        }
    }

    pub(crate) fn set_conn(&self, conn: Option<Arc<Conn>>) {
        *self.conn.write() = conn;
    }

    pub(crate) fn session(&self) -> Option<Arc<InitializeResult>> {
        self.session.read().clone()
    }

    pub(crate) fn set_session(&self, session: Session) {
        *self.session.write() = Some(Arc::new(session.result));
        *self.era.write() = Some(session.era);
        // A new session may be a new server process: what the old one
        // listed (replay safety, output schemas) no longer holds.
        self.hub.tools.invalidate();
        self.hub.cache.new_session();
        self.sessions.send_modify(|n| *n += 1);
    }

    pub(crate) fn era(&self) -> Option<Era> {
        *self.era.read()
    }
}
