//! The outbound queue and writer task of an [`IoTransport`](crate::IoTransport),
//! made when the first frame needs them.
//!
//! A lone frame (a sequential call) is written by its sender (see
//! [`SharedWrite`]); only a burst, a write the sender could not finish, or
//! closing needs the writer task and its queue. A connection that is opened,
//! called once and left idle (a gateway holding many servers) then never
//! pays for them: a tokio channel allocates its first block of 32 slots when
//! it is made (about 1.6 KB for `Bytes`), and the task and its future cost
//! about 1 KB more.
//!
//! Starting late changes nothing a sender sees: frames that find work ahead
//! of them are counted as queued by [`SharedWrite`] before the queue is
//! asked for, the writer's first act is to take any hand-off left before it
//! ran (and a notification sent before it waited is kept for it), and the
//! queue has the configured capacity, so back-pressure is the same.

use std::future::Future as _;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::direct::SharedWrite;
use crate::writer::write_loop;
use crate::{Framing, TransportEvent};

/// The writer task of one transport, and its queue once made.
pub(crate) struct Outbound {
    /// The write half, shared with the senders.
    pub(crate) shared: Arc<SharedWrite>,
    /// Made with the writer task (a `Sender` per clone would make each
    /// clone of a `FrameSender` pay for it; one lives here).
    queue: OnceLock<mpsc::Sender<Bytes>>,
    task: Mutex<Task>,
}

enum Task {
    /// Not started: what it will need.
    Waiting(Box<Launch>),
    Running(JoinHandle<()>),
    /// Finished, or the transport is gone.
    Gone,
}

struct Launch {
    capacity: usize,
    framing: Framing,
    shutdown: oneshot::Receiver<()>,
    failed: oneshot::Sender<Vec<TransportEvent>>,
    /// The runtime the transport was made on: a sender may run elsewhere.
    runtime: Handle,
}

impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbound")
            .field("started", &self.queue.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Outbound {
    /// A writer for `shared`, started on first use with a queue of
    /// `capacity` frames. Must be called within a tokio runtime (the task is
    /// spawned on it later).
    pub(crate) fn new(
        shared: Arc<SharedWrite>,
        framing: Framing,
        capacity: usize,
        shutdown: oneshot::Receiver<()>,
        failed: oneshot::Sender<Vec<TransportEvent>>,
    ) -> Self {
        Self {
            shared,
            queue: OnceLock::new(),
            task: Mutex::new(Task::Waiting(Box::new(Launch {
                capacity: capacity.max(1),
                framing,
                shutdown,
                failed,
                runtime: Handle::current(),
            }))),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Task> {
        self.task.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The queue, starting the writer task on first use.
    pub(crate) fn queue(&self) -> &mpsc::Sender<Bytes> {
        self.queue.get_or_init(|| self.start())
    }

    /// The queue if it was made.
    pub(crate) fn queue_made(&self) -> Option<&mpsc::Sender<Bytes>> {
        self.queue.get()
    }

    /// Starts the writer task if it has not started: work was left for it,
    /// or the transport is closing.
    pub(crate) fn start_writer(&self) {
        self.queue();
    }

    fn start(&self) -> mpsc::Sender<Bytes> {
        let mut task = self.lock();
        let Task::Waiting(launch) = std::mem::replace(&mut *task, Task::Gone) else {
            // The transport is gone: a queue nobody drains, closed at once.
            return mpsc::channel(1).0;
        };
        let Launch {
            capacity,
            framing,
            shutdown,
            failed,
            runtime,
        } = *launch;
        let (tx, rx) = mpsc::channel(capacity);
        let writer = write_loop(self.shared.clone(), rx, shutdown, framing, failed);
        *task = Task::Running(runtime.spawn(writer));
        tx
    }

    /// Ready once the writer task has finished (or never started).
    pub(crate) fn poll_finished(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut task = self.lock();
        if let Task::Running(handle) = &mut *task {
            if std::pin::Pin::new(handle).poll(cx).is_pending() {
                return Poll::Pending;
            }
            *task = Task::Gone;
        }
        Poll::Ready(())
    }

    /// Stops the writer task at once (or keeps it from ever starting).
    pub(crate) fn abort(&self) {
        if let Task::Running(handle) = std::mem::replace(&mut *self.lock(), Task::Gone) {
            handle.abort();
        }
    }
}
