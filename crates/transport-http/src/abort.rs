//! Cancelling a request by closing its answer stream (Streamable HTTP of the
//! 2026-07-28 revision, where that is how a request is cancelled).
//!
//! Every request's exchange (its POST, then its answer) registers here by
//! its JSON-RPC id while it runs. [`Aborts::abort`] stops it: the exchange
//! future ends at its next poll and is dropped with its POST or its response
//! body, so hyper closes the connection (HTTP/1.1) or resets the stream
//! (HTTP/2), and the server sees the client go. A request aborted before it
//! was posted (still queued) is remembered, and never posted. Both tables
//! are bounded; an entry leaves the live table when its exchange ends.
//!
//! Only the stateless revision cancels a request this way, and only its
//! requests carry frame metadata (`MCP-Protocol-Version`, `Mcp-Method`), so
//! only a request that came with metadata registers: the `initialize` era's
//! requests (cancelled with `notifications/cancelled`) pay nothing for it.
//! The table is armed by the first request with metadata; until then
//! [`Aborts::abort`] says it cannot. Once armed, an abort of a request
//! without metadata (which no client asks for) changes nothing.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::future::{AbortHandle, AbortRegistration, Abortable};
use mcpwire_codec::jsonrpc::Id;

/// How many ids aborted before they were posted are remembered (a request
/// aborted while queued; an answer that came first leaves one here too).
const MAX_EARLY: usize = 256;

/// The exchanges that can be aborted, by request id.
#[derive(Debug, Default)]
pub(crate) struct Aborts {
    /// Set by the first request that carries frame metadata (see the
    /// module's docs); never cleared.
    armed: AtomicBool,
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    live: HashMap<Id, AbortHandle>,
    early: VecDeque<Id>,
}

impl Aborts {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// From now on, [`abort`](Self::abort) stops exchanges that registered.
    /// Called before the request that arms it is queued or posted.
    pub(crate) fn arm(&self) {
        if !self.armed.load(Ordering::Relaxed) {
            self.armed.store(true, Ordering::Relaxed);
        }
    }

    /// Whether [`abort`](Self::abort) can stop anything (see
    /// [`arm`](Self::arm)).
    pub(crate) fn is_armed(&self) -> bool {
        self.armed.load(Ordering::Relaxed)
    }

    /// Runs `exchange`, the exchange of request `id`, so that
    /// [`abort`](Self::abort) can stop it; `None` if it was aborted (before
    /// it was posted, or while it ran).
    pub(crate) async fn run<F: Future>(
        self: &Arc<Self>,
        id: &Id,
        exchange: F,
    ) -> Option<F::Output> {
        let registration = self.register(id)?;
        let _entry = Entry {
            aborts: self,
            id: id.clone(),
        };
        Abortable::new(exchange, registration).await.ok()
    }

    fn register(&self, id: &Id) -> Option<AbortRegistration> {
        let mut table = self.lock();
        if let Some(at) = table.early.iter().position(|e| e == id) {
            table.early.remove(at);
            return None;
        }
        let (handle, registration) = AbortHandle::new_pair();
        table.live.insert(id.clone(), handle);
        Some(registration)
    }

    /// Stops the exchange of request `id`, or keeps it from starting. False,
    /// doing nothing, while the table is not armed: the caller cancels the
    /// request another way.
    pub(crate) fn abort(&self, id: &Id) -> bool {
        if !self.is_armed() {
            return false;
        }
        let mut table = self.lock();
        match table.live.remove(id) {
            Some(handle) => handle.abort(),
            None => {
                if table.early.len() >= MAX_EARLY {
                    table.early.pop_front();
                }
                table.early.push_back(id.clone());
            }
        }
        true
    }
}

/// Takes an exchange out of the live table when it ends, aborted or not.
struct Entry<'a> {
    aborts: &'a Aborts,
    id: Id,
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        self.aborts.lock().live.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_abort_ends_a_running_exchange_and_keeps_a_queued_one_from_starting() {
        let aborts = Arc::new(Aborts::default());
        aborts.arm();
        // Running: the exchange is pending until aborted.
        let running = tokio::spawn({
            let aborts = aborts.clone();
            async move {
                aborts
                    .run(&Id::Number(1), std::future::pending::<()>())
                    .await
            }
        });
        while aborts.lock().live.is_empty() {
            tokio::task::yield_now().await;
        }
        assert!(aborts.abort(&Id::Number(1)));
        assert_eq!(running.await.unwrap(), None);
        assert!(
            aborts.lock().live.is_empty(),
            "the entry left with the exchange"
        );
        // Queued: aborted first, never run.
        assert!(aborts.abort(&Id::Number(2)));
        let mut ran = false;
        assert_eq!(aborts.run(&Id::Number(2), async { ran = true }).await, None);
        assert!(!ran);
        // Others run to the end and leave nothing behind.
        assert_eq!(aborts.run(&Id::Number(3), async { 7 }).await, Some(7));
        let table = aborts.lock();
        assert!(table.live.is_empty() && table.early.is_empty());
    }

    #[test]
    fn the_early_table_is_bounded() {
        let aborts = Aborts::default();
        aborts.arm();
        for n in 0..(MAX_EARLY as i64 + 10) {
            aborts.abort(&Id::Number(n));
        }
        assert_eq!(aborts.lock().early.len(), MAX_EARLY);
    }

    #[test]
    fn an_unarmed_table_refuses_and_remembers_nothing() {
        let aborts = Aborts::default();
        assert!(!aborts.is_armed());
        assert!(
            !aborts.abort(&Id::Number(1)),
            "the caller must cancel another way"
        );
        let table = aborts.lock();
        assert!(table.live.is_empty() && table.early.is_empty());
    }
}
