//! What the [`Client`](crate::Client) handles and their connection task
//! share: the configuration, the current connection and session, the state,
//! the notification inbox, the wanted subscriptions and the handler
//! dispatcher.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::base::error::Error;
use crate::base::lock::{Mutex, RwLock};
use crate::base::state::ConnectionState;
use crate::base::version::Era;
use crate::cache::view::CacheView;
use crate::config::ClientConfig;
use crate::notify::inbox::Inbox;
use crate::notify::subscription::Wanted;
use crate::observe::metrics::Metrics;
use crate::requests::dispatch::Dispatcher;
use crate::session::lifecycle::Session;
use crate::session::live::LiveConnection;
use crate::types::InitializeResult;

/// The core of one client: what every [`Client`](crate::Client) handle and
/// the connection task hold (through an `Arc`).
pub(crate) struct ClientCore {
    pub(crate) config: ClientConfig,
    /// The ready connection, while there is one.
    conn: RwLock<Option<Arc<LiveConnection>>>,
    /// The server's `initialize` result (or what `server/discover` said,
    /// in the same shape) for the current session.
    session: RwLock<Option<Arc<InitializeResult>>>,
    /// The era the current session speaks.
    era: RwLock<Option<Era>>,
    pub(crate) state: watch::Sender<ConnectionState>,
    /// Sessions started so far: bumped by every successful handshake (the
    /// first, after a reconnection, after an expired session).
    sessions: AtomicU64,
    /// The watch of `sessions`, made when first asked for: few callers
    /// watch it, and a watch channel is an allocation every idle session
    /// would hold.
    sessions_watch: OnceLock<watch::Sender<u64>>,
    pub(crate) inbox: Arc<Inbox>,
    /// The resources the user subscribed to, re-established on every
    /// connection.
    pub(crate) wanted: Wanted,
    pub(crate) dispatcher: Arc<Dispatcher>,
    /// The client's metrics, shared by its connections.
    pub(crate) metrics: Arc<Metrics>,
    /// Set to close the client.
    pub(crate) closing: Closing,
    /// Request ids, unique across reconnections.
    pub(crate) next_id: Arc<AtomicI64>,
    /// The connection task, until `close` waits for it.
    pub(crate) task: Mutex<Option<JoinHandle<()>>>,
}

impl ClientCore {
    pub(crate) fn new(config: ClientConfig) -> Self {
        Self {
            inbox: Arc::new(Inbox::new(
                config.notification_capacity,
                CacheView::new(
                    config.response_cache.clone(),
                    config.response_cache_size,
                    config.credential_id.clone(),
                ),
            )),
            wanted: Wanted::default(),
            dispatcher: Arc::new(Dispatcher::new(&config)),
            metrics: Arc::new(Metrics::of_config(&config)),
            config,
            conn: RwLock::new(None),
            session: RwLock::new(None),
            era: RwLock::new(None),
            state: watch::channel(ConnectionState::Connecting { attempt: 0 }).0,
            sessions: AtomicU64::new(0),
            sessions_watch: OnceLock::new(),
            closing: Closing::default(),
            next_id: Arc::new(AtomicI64::new(0)),
            task: Mutex::new(None),
        }
    }

    /// The ready connection, or why there is none (calls fail at once
    /// rather than queue).
    pub(crate) fn conn(&self) -> Result<Arc<LiveConnection>, Error> {
        match &*self.conn.read() {
            Some(c) => Ok(c.clone()),
            None => Err(match &*self.state.borrow() {
                ConnectionState::Closed(Some(e)) => e.clone(),
                ConnectionState::Backoff { cause, .. } => cause.clone(),
                _ => Error::not_ready(),
            }),
        }
    }

    pub(crate) fn set_conn(&self, conn: Option<Arc<LiveConnection>>) {
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
        self.inbox.tools.invalidate();
        self.inbox.cache.new_session();
        self.sessions.fetch_add(1, Ordering::AcqRel);
        if let Some(tx) = self.sessions_watch.get() {
            self.publish_sessions(tx);
        }
    }

    /// A receiver of the sessions counter, its channel made now if need be.
    pub(crate) fn watch_sessions(&self) -> watch::Receiver<u64> {
        let tx = self
            .sessions_watch
            .get_or_init(|| watch::channel(self.sessions.load(Ordering::Acquire)).0);
        // A session started while the channel was being made is counted
        // here (the value only grows, so the later of two publishers wins).
        self.publish_sessions(tx);
        tx.subscribe()
    }

    fn publish_sessions(&self, tx: &watch::Sender<u64>) {
        let n = self.sessions.load(Ordering::Acquire);
        tx.send_if_modified(|v| {
            let newer = *v < n;
            if newer {
                *v = n;
            }
            newer
        });
    }

    pub(crate) fn era(&self) -> Option<Era> {
        *self.era.read()
    }
}

/// The client's request to close: set once, by `close` or the last handle's
/// drop, and waited for by the connection task. A flag and a `Notify` in
/// the shared state, where a watch channel would be an allocation every
/// session holds.
#[derive(Default)]
pub(crate) struct Closing {
    set: AtomicBool,
    notify: Notify,
}

impl Closing {
    /// Asks the client to close (again: no effect).
    pub(crate) fn set(&self) {
        self.set.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Returns once the client is asked to close.
    pub(crate) async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Registered before the flag is read, so a `set` in between
            // wakes it.
            notified.as_mut().enable();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::Closing;

    #[tokio::test]
    async fn a_close_asked_before_or_while_waiting_ends_every_wait() {
        let closing = Arc::new(Closing::default());
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let c = closing.clone();
                tokio::spawn(async move { c.wait().await })
            })
            .collect();
        tokio::task::yield_now().await;
        assert!(!closing.is_set());
        closing.set();
        for w in waiters {
            tokio::time::timeout(Duration::from_secs(5), w)
                .await
                .expect("the wait ends")
                .unwrap();
        }
        // Asked already: a later wait returns at once, a second ask is harmless.
        closing.set();
        tokio::time::timeout(Duration::from_secs(5), closing.wait())
            .await
            .expect("returns at once");
        assert!(closing.is_set());
    }
}
