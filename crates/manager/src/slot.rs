//! [`Slot`]: one server's place in the fleet: its spec, its client while it
//! has one, its health, its last lists, its call slots.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mcpwire_client::{Client, ClientConfig};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::AbortHandle;

use crate::health::Health;
use crate::saved::ServerCatalogue;
use crate::spec::ServerSpec;

/// Where a server's lists came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// Nothing listed yet.
    None,
    /// A saved catalogue (a lazy server not started yet).
    Saved,
    /// The server itself, in its current session.
    Live,
}

pub(crate) struct Lists {
    pub(crate) lists: ServerCatalogue,
    pub(crate) source: Source,
}

/// Whether a slot still takes calls, and how many it has under way.
#[derive(Debug, Clone, Copy, Default)]
struct Drain {
    /// Out of the fleet: no call enters any more.
    removed: bool,
    in_flight: usize,
}

/// One server of the fleet.
pub(crate) struct Slot {
    pub(crate) spec: ServerSpec,
    pub(crate) health: watch::Sender<Health>,
    /// The client, from a successful start until it failed for good or was
    /// closed.
    client: Mutex<Option<Client>>,
    /// Held while starting, so one start runs at a time (a lazy call and
    /// `connect_all` racing share one).
    pub(crate) starting: tokio::sync::Mutex<()>,
    pub(crate) lists: Mutex<Lists>,
    permits: Option<std::sync::Arc<Semaphore>>,
    /// The task that watches the client (state, `list_changed`, sessions).
    pub(crate) monitor: Mutex<Option<AbortHandle>>,
    /// The calls under way, and whether the slot left the fleet: one
    /// `watch` so that entering a call and removing the slot are ordered
    /// (a call either enters before the removal, and is waited for, or
    /// sees it and fails).
    drain: watch::Sender<Drain>,
}

/// A call under way on a slot; the slot's removal waits for it (within
/// the drain timeout) before closing the client.
pub(crate) struct Entered(Arc<Slot>);

impl Drop for Entered {
    fn drop(&mut self) {
        self.0.drain.send_modify(|d| d.in_flight -= 1);
    }
}

/// Locks, taking the data of a poisoned lock as it is: every value kept
/// under these locks is replaced whole, never left half-written.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Slot {
    pub(crate) fn new(spec: ServerSpec, saved: Option<ServerCatalogue>) -> Slot {
        let permits = spec
            .max_concurrent
            .map(|n| std::sync::Arc::new(Semaphore::new(n)));
        let lists = match saved {
            Some(lists) => Lists {
                lists,
                source: Source::Saved,
            },
            None => Lists {
                lists: ServerCatalogue::default(),
                source: Source::None,
            },
        };
        Slot {
            spec,
            health: watch::channel(Health::Disconnected).0,
            client: Mutex::new(None),
            starting: tokio::sync::Mutex::new(()),
            lists: Mutex::new(lists),
            permits,
            monitor: Mutex::new(None),
            drain: watch::channel(Drain::default()).0,
        }
    }

    /// Counts a call under way, unless the slot left the fleet.
    pub(crate) fn enter(self: &Arc<Self>) -> Option<Entered> {
        let entered = self.drain.send_if_modified(|d| {
            if d.removed {
                return false;
            }
            d.in_flight += 1;
            true
        });
        entered.then(|| Entered(self.clone()))
    }

    /// Takes the slot out of the fleet: no call enters any more.
    pub(crate) fn retire(&self) {
        self.drain.send_modify(|d| d.removed = true);
    }

    /// Whether the slot left the fleet.
    pub(crate) fn is_removed(&self) -> bool {
        self.drain.borrow().removed
    }

    /// Waits until no call is under way, at most `timeout`; false if some
    /// still were then.
    pub(crate) async fn drained(&self, timeout: Duration) -> bool {
        let mut drain = self.drain.subscribe();
        tokio::time::timeout(timeout, drain.wait_for(|d| d.in_flight == 0))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    pub(crate) fn name(&self) -> &str {
        &self.spec.name
    }

    /// The client, if the server has one (ready, or reconnecting).
    pub(crate) fn client(&self) -> Option<Client> {
        lock(&self.client).clone()
    }

    pub(crate) fn set_client(&self, client: Option<Client>) -> Option<Client> {
        std::mem::replace(&mut *lock(&self.client), client)
    }

    pub(crate) fn health(&self) -> Health {
        self.health.borrow().clone()
    }

    /// The client configuration for this server: its own, or the fleet's,
    /// with its request timeout.
    pub(crate) fn client_config(&self, fleet: &ClientConfig) -> ClientConfig {
        let config = self
            .spec
            .client_config
            .clone()
            .unwrap_or(fleet.clone())
            .server_label(self.spec.name.as_str());
        match self.spec.policy.request_timeout {
            Some(timeout) => config.request_timeout(timeout),
            None => config,
        }
    }

    /// A call slot, when the server has a concurrency cap.
    pub(crate) async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        match &self.permits {
            // The semaphore is never closed.
            Some(s) => s.clone().acquire_owned().await.ok(),
            None => None,
        }
    }

    /// Stops watching the client.
    pub(crate) fn stop_monitor(&self) {
        if let Some(task) = lock(&self.monitor).take() {
            task.abort();
        }
    }
}
