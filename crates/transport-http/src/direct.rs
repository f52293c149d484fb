//! Posting a request from the sender's own task when nothing is queued.
//!
//! Why: through the queue, a request costs a wake-up of the driver task and
//! a channel hop before hyper even sees it (on a multi-threaded runtime, the
//! wake-up often crosses threads). When the transport is idle, the sender
//! instead builds the POST and polls its exchange once itself, which hands
//! the request to hyper's connection task at once. The exchange then lives
//! in the set of requests in flight that the driver polls: the first poll
//! uses the driver's waker, so the answer wakes the driver exactly as if the
//! driver had posted the request.
//!
//! What keeps the guarantees of the queue:
//! - Order. Only requests go direct; notifications, responses and anything
//!   unreadable take the queue, where the driver posts each before the next
//!   frame (so nothing overtakes `initialized`). A request goes direct only
//!   while no frame is queued or being handed on by the driver, and the
//!   driver adds a queued request to the set before it stops counting it, so
//!   the set's first-in-first-out polling starts it before any later one.
//! - Backpressure. A direct post takes an in-flight permit without waiting;
//!   with none left the frame is queued, and the queue fills as before.
//! - Failures. The exchange is the same future the driver would run, so an
//!   error answer, an expired session or a timeout is reported the same way
//!   (`Undelivered`, `SessionExpired`).
//! - No blocking. The sender only ever `try_lock`s the shared state; if the
//!   driver holds it, the frame is queued.
//!
//! Requests go direct only from a task of the transport's own runtime (the
//! exchange's timers belong to it), only in Streamable HTTP mode, and not
//! for `initialize`, whose answer changes the session.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use futures_util::Stream;
use mcpwire_transport::{DirectSend, Offered};
use tokio::runtime::Handle;
use tokio::sync::Semaphore;

use crate::HttpMode;
use crate::driver::{Ctx, Exchange, InFlight, Outbound};
use crate::session::SessionSnapshot;
use crate::streamable::{exchange, post};

/// The requests in flight and what a sender needs to post one itself;
/// shared by a transport's driver and its [`FrameSender`](mcpwire_transport::FrameSender).
pub(crate) struct DirectPost {
    ctx: Arc<Ctx>,
    in_flight: Arc<Semaphore>,
    runtime: tokio::runtime::Id,
    /// Frames counted as queued and not yet handed on by the driver.
    queued: AtomicUsize,
    state: Mutex<State>,
}

struct State {
    requests: InFlight,
    /// The driver's waker, from its last poll of `requests`. `None` until
    /// the driver runs the Streamable HTTP loop.
    waker: Option<Waker>,
    /// Cleared for good when the transport closes or is dropped.
    open: bool,
    snap: SessionSnapshot,
}

impl std::fmt::Debug for DirectPost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectPost")
            .field("queued", &self.queued.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl DirectPost {
    pub(crate) fn new(ctx: Arc<Ctx>, in_flight: Arc<Semaphore>, runtime: &Handle) -> Self {
        Self {
            ctx,
            in_flight,
            runtime: runtime.id(),
            queued: AtomicUsize::new(0),
            state: Mutex::new(State {
                requests: InFlight::new(),
                waker: None,
                open: true,
                snap: SessionSnapshot::default(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent across a panic in a poll: the set
        // removes a future that panicked.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Polls the requests in flight from the driver's task; pending for
    /// ever, so it can run beside whatever the driver waits for.
    pub(crate) fn poll_drive(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.lock();
        if !st.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            st.waker = Some(cx.waker().clone());
        }
        poll_all(&mut st.requests, cx);
        Poll::Pending
    }

    /// Drives the requests in flight; never completes.
    pub(crate) async fn drive(&self) {
        std::future::poll_fn(|cx| self.poll_drive(cx)).await;
    }

    /// The driver has handed on one queued frame; a request's exchange joins
    /// the set before the frame stops counting as queued, so it is started
    /// before any request posted directly after it.
    pub(crate) fn handed_on(&self, exchange: Option<Exchange>) {
        if let Some(exchange) = exchange {
            let mut st = self.lock();
            st.requests.push(exchange);
            // Started now, not at the driver's next poll: the driver's
            // waker is the right one, as the driver is the caller.
            if let Some(waker) = st.waker.clone() {
                poll_all(&mut st.requests, &mut Context::from_waker(&waker));
            }
        }
        self.unqueue();
    }

    /// Stops direct posts for good.
    pub(crate) fn close(&self) {
        self.lock().open = false;
    }

    /// The requests in flight, taken out to be driven to the end.
    pub(crate) fn take_requests(&self) -> InFlight {
        std::mem::take(&mut self.lock().requests)
    }

    /// Stops direct posts and drops the requests in flight (the transport
    /// is gone). The futures are dropped outside the lock.
    pub(crate) fn abandon(&self) {
        let requests = {
            let mut st = self.lock();
            st.open = false;
            st.waker = None;
            std::mem::take(&mut st.requests)
        };
        drop(requests);
    }

    fn queue(&self, frame: Bytes) -> Offered {
        self.queued.fetch_add(1, Ordering::AcqRel);
        Offered::Queue(frame)
    }

    fn on_own_runtime(&self) -> bool {
        Handle::try_current().is_ok_and(|h| h.id() == self.runtime)
    }
}

/// Polls the set until nothing in it is ready (completed exchanges have
/// already delivered their answers; their output is nothing).
fn poll_all(requests: &mut InFlight, cx: &mut Context<'_>) {
    while let Poll::Ready(Some(())) = Pin::new(&mut *requests).poll_next(cx) {}
}

impl DirectSend for DirectPost {
    fn offer(&self, frame: Bytes) -> Offered {
        if self.queued.load(Ordering::Acquire) != 0
            || self.ctx.shared.mode() != Some(HttpMode::StreamableHttp)
            || !self.on_own_runtime()
        {
            return self.queue(frame);
        }
        let kind = Outbound::classify(&frame);
        if !matches!(
            kind,
            Outbound::Request {
                initialize: false,
                ..
            }
        ) {
            return self.queue(frame);
        }
        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
            return self.queue(frame);
        };
        let mut st = match self.state.try_lock() {
            Ok(st) => st,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return self.queue(frame),
        };
        // Closing: the queue decides (the driver flushes what it still
        // takes, or the sender sees `Closed`).
        let Some(waker) = st.waker.clone().filter(|_| st.open) else {
            drop(st);
            return self.queue(frame);
        };
        // Checked again under the lock: the driver may have queued or handed
        // on a frame since; a frame it handed on is already in the set.
        if self.queued.load(Ordering::Acquire) != 0 {
            drop(st);
            return self.queue(frame);
        }
        let st = &mut *st;
        self.ctx.shared.refresh(&mut st.snap);
        let req = post(&self.ctx, &st.snap, &frame, &kind);
        let ctx = self.ctx.clone();
        st.requests.push(Box::pin(async move {
            exchange(ctx, req, frame, kind).await;
            drop(permit);
        }));
        poll_all(&mut st.requests, &mut Context::from_waker(&waker));
        Offered::Taken
    }

    fn unqueue(&self) {
        // Never below zero, even if a count is given back twice.
        let _ = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }
}
