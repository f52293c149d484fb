//! The outbound queue and writer task of an [`IoTransport`](crate::IoTransport),
//! made when the first frame needs them.
//!
//! A lone frame (a sequential call) is written by its sender (see
//! [`SharedWrite`]); only a burst, a write the sender could not finish, or
//! closing needs the writer task and its queue. A connection that is opened,
//! called once and left idle (a gateway holding many servers) then never
//! pays for them: a tokio channel allocates its first block of 32 slots when
//! it is made, and the task and its future cost more (measured per idle
//! session in `docs/benchmarks.md`, "Density").
//!
//! The first write to a fresh pipe is often left to the writer task (its
//! readiness is not known until the runtime's reactor has seen it), so the
//! task is started for that alone, without the queue, and ends once it has
//! nothing to do and no queue ([`Dock::park`]); the next need starts it again.
//! Once the queue is made the task keeps it and stays.
//!
//! Starting late changes nothing a sender sees: frames that find work ahead
//! of them are counted as queued by [`SharedWrite`] before the queue is
//! asked for, the writer's first act is to take any hand-off left before it
//! ran (and a notification sent before it waited is kept for it), and the
//! queue has the configured capacity, so back-pressure is the same. The
//! writer parks only under the lock that starting it takes, after checking
//! that no hand-off, flush, queue or shutdown is waiting, so nothing that
//! arrives meanwhile is left without a writer.

use std::future::Future as _;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::Framing;
use crate::direct::SharedWrite;
use crate::writer::{Dock, Ends, write_loop};

/// The writer task of one transport, and its queue once made.
pub(crate) struct Outbound {
    /// The write half, shared with the senders.
    pub(crate) shared: Arc<SharedWrite>,
    /// Made on first need (a `Sender` per clone would make each clone of a
    /// `FrameSender` pay for it; one lives here).
    queue: OnceLock<mpsc::Sender<Bytes>>,
    slots: Mutex<Slots>,
    capacity: usize,
    framing: Framing,
    /// The runtime the transport was made on: a sender may run elsewhere.
    runtime: Handle,
}

struct Slots {
    task: Task,
    /// The queue's receiving end, made and not yet taken by the task.
    rx: Option<mpsc::Receiver<Bytes>>,
}

enum Task {
    /// Not running: what it needs when it starts.
    Waiting(Box<Ends>),
    Running(JoinHandle<()>),
    /// Finished after closing, or the transport is gone.
    Gone,
}

impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbound")
            .field("queue", &self.queue.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Outbound {
    /// A writer for `shared`, started on need, with a queue of `capacity`
    /// frames made on need. Must be called within a tokio runtime (the task
    /// is spawned on it).
    pub(crate) fn new(
        shared: Arc<SharedWrite>,
        framing: Framing,
        capacity: usize,
        ends: Ends,
    ) -> Self {
        Self {
            shared,
            queue: OnceLock::new(),
            slots: Mutex::new(Slots {
                task: Task::Waiting(Box::new(ends)),
                rx: None,
            }),
            capacity: capacity.max(1),
            framing,
            runtime: Handle::current(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The queue, made (and the writer task started) on first use.
    pub(crate) fn queue(self: &Arc<Self>) -> &mpsc::Sender<Bytes> {
        self.queue.get_or_init(|| self.make_queue())
    }

    /// The queue if it was made.
    pub(crate) fn queue_made(&self) -> Option<&mpsc::Sender<Bytes>> {
        self.queue.get()
    }

    fn make_queue(self: &Arc<Self>) -> mpsc::Sender<Bytes> {
        let (tx, rx) = mpsc::channel(self.capacity);
        let mut slots = self.lock();
        // Closing or failed: the writer may have looked for the queue for
        // the last time. A queue nobody drains is closed from the start, so
        // sends fail as they would have on the writer's closed queue.
        if matches!(slots.task, Task::Gone) || self.shared.is_closing() {
            return tx;
        }
        slots.rx = Some(rx);
        self.shared.queue_made();
        if matches!(slots.task, Task::Waiting(_)) {
            self.spawn(&mut slots);
        } else {
            drop(slots);
            // The running task waits for work: this wakes it to take the queue.
            self.shared.notify.notify();
        }
        tx
    }

    /// Starts the writer task if it is not running: work was left for it,
    /// or the transport is closing.
    pub(crate) fn start_writer(self: &Arc<Self>) {
        let mut slots = self.lock();
        if matches!(slots.task, Task::Waiting(_)) {
            self.spawn(&mut slots);
        }
    }

    fn spawn(self: &Arc<Self>, slots: &mut Slots) {
        let Task::Waiting(ends) = std::mem::replace(&mut slots.task, Task::Gone) else {
            return;
        };
        let dock: Arc<dyn Dock> = self.clone();
        let writer = write_loop(
            self.shared.clone(),
            dock,
            slots.rx.take(),
            *ends,
            self.framing,
        );
        slots.task = Task::Running(self.runtime.spawn(writer));
    }

    /// Ready once the writer task has finished (or is not running).
    pub(crate) fn poll_finished(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut slots = self.lock();
        if let Task::Running(handle) = &mut slots.task {
            if std::pin::Pin::new(handle).poll(cx).is_pending() {
                return Poll::Pending;
            }
            slots.task = Task::Gone;
        }
        Poll::Ready(())
    }

    /// Stops the writer task at once (or keeps it from ever starting).
    pub(crate) fn abort(&self) {
        let mut slots = self.lock();
        slots.rx = None;
        if let Task::Running(handle) = std::mem::replace(&mut slots.task, Task::Gone) {
            handle.abort();
        }
    }
}

impl Dock for Outbound {
    fn take_queue(&self) -> Option<mpsc::Receiver<Bytes>> {
        self.lock().rx.take()
    }

    fn park(&self, ends: Ends) -> Result<(), Ends> {
        let mut slots = self.lock();
        if slots.rx.is_some() || !ends.shutdown.is_empty() || self.shared.has_work() {
            return Err(ends);
        }
        // Running: this task (its handle is dropped; it ends now). Gone:
        // the transport was dropped, nothing will start it again.
        if matches!(slots.task, Task::Running(_)) {
            slots.task = Task::Waiting(Box::new(ends));
        }
        Ok(())
    }
}
