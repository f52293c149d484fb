//! Posting a request from the sender's own task when nothing is queued.
//!
//! Why: through the queue, a request costs a wake-up of the driver task and
//! a channel hop before hyper even sees it (on a multi-threaded runtime, the
//! wake-up often crosses threads). When the transport is idle, the sender
//! instead builds the POST and polls its exchange once itself, which hands
//! the request to hyper's connection task at once. The exchange then lives
//! in the set of requests in flight, which the driver polls too.
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
//! The answers: whoever polls the set does so with one waker of the set's
//! own ([`Wakers`]). While the transport's consumer waits in `poll_event`, a
//! ready exchange wakes the consumer, which polls the set itself and finds
//! the answer in its queue at once, without a hop through the driver task;
//! otherwise (and for every wake after the first, until the consumer waits
//! again) it wakes the driver. Either may poll the set at any time, so a
//! consumer that stops polling delays nothing but its own answers.
//!
//! Requests go direct only from a task of the transport's own runtime (the
//! exchange's timers belong to it), only in Streamable HTTP mode, and not
//! for `initialize`, whose answer changes the session.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::task::{Context, Poll, Waker};

use futures_util::Stream;
use futures_util::task::AtomicWaker;
use mcpwire_transport::{DirectSend, Offered, Outgoing};
use tokio::runtime::Handle;
use tokio::sync::Semaphore;

use crate::context::{Exchange, InFlight, Link};
use crate::mode::HttpMode;
use crate::outbound::Outbound;
use crate::request::Build;
use crate::session::SessionSnapshot;
use crate::streamable::exchange::exchange;

/// The requests in flight and what a sender needs to post one itself;
/// shared by a transport's driver and its [`FrameSender`](mcpwire_transport::FrameSender).
pub(crate) struct DirectPost {
    link: Arc<Link>,
    in_flight: Arc<Semaphore>,
    runtime: tokio::runtime::Id,
    /// Frames counted as queued and not yet handed on by the driver.
    queued: AtomicUsize,
    wakers: Arc<Wakers>,
    /// `wakers` as a waker: the only one the set is ever polled with.
    waker: Waker,
    state: Mutex<State>,
}

/// Who is woken when an exchange in the set is ready.
#[derive(Default)]
struct Wakers {
    driver: AtomicWaker,
    consumer: AtomicWaker,
    /// The consumer waits in `poll_event` and has not been woken since.
    consumer_waits: AtomicBool,
    /// The driver waits for an in-flight permit, which only the set's
    /// progress gives back: every wake goes to the driver.
    driver_waits: AtomicBool,
}

impl std::task::Wake for Wakers {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // One wake goes to a waiting consumer; the next ones, until it waits
        // again, to the driver. A consumer that was woken but does not come
        // back (its wait was dropped) then delays only what it alone would
        // read, never the driver: while the driver needs the set to move,
        // every wake is the driver's.
        if self.driver_waits.load(Ordering::Acquire) {
            self.driver.wake();
        } else if self.consumer_waits.swap(false, Ordering::AcqRel) {
            self.consumer.wake();
        } else {
            self.driver.wake();
        }
    }
}

struct State {
    requests: InFlight,
    /// The driver runs the Streamable HTTP loop (and has registered its
    /// waker).
    driving: bool,
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
    pub(crate) fn new(link: Arc<Link>, in_flight: Arc<Semaphore>, runtime: &Handle) -> Self {
        let wakers = Arc::new(Wakers::default());
        Self {
            link,
            in_flight,
            runtime: runtime.id(),
            queued: AtomicUsize::new(0),
            waker: Waker::from(wakers.clone()),
            wakers,
            state: Mutex::new(State {
                requests: InFlight::new(),
                driving: false,
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
        self.wakers.driver.register(cx.waker());
        let mut st = self.lock();
        st.driving = true;
        self.poll_all(&mut st.requests);
        Poll::Pending
    }

    /// Polls the requests in flight from the consumer's `poll_event`, so an
    /// answer that woke the consumer is in its queue before it looks.
    pub(crate) fn poll_for_consumer(&self) {
        self.wakers.consumer_waits.store(false, Ordering::Release);
        if !self.on_own_runtime() {
            return;
        }
        let mut st = self.lock();
        if st.driving {
            self.poll_all(&mut st.requests);
        }
    }

    /// The consumer is about to wait in `poll_event`: the next ready
    /// exchange wakes it rather than the driver.
    pub(crate) fn consumer_waits(&self, waker: &Waker) {
        self.wakers.consumer.register(waker);
        self.wakers.consumer_waits.store(true, Ordering::Release);
    }

    /// Sets whether the driver waits for the set to give back an in-flight
    /// permit. Set before the driver's next poll of the set, so an exchange
    /// that became ready earlier is seen then.
    pub(crate) fn driver_waits(&self, waits: bool) {
        self.wakers.driver_waits.store(waits, Ordering::Release);
    }

    /// Polls the set until nothing in it is ready (completed exchanges have
    /// already delivered their answers; their output is nothing).
    fn poll_all(&self, requests: &mut InFlight) {
        let mut cx = Context::from_waker(&self.waker);
        while let Poll::Ready(Some(())) = Pin::new(&mut *requests).poll_next(&mut cx) {}
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
            // Started now, not at the driver's next poll.
            self.poll_all(&mut st.requests);
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
            st.driving = false;
            std::mem::take(&mut st.requests)
        };
        drop(requests);
    }

    fn queue(&self, frame: Outgoing) -> Offered {
        self.queued.fetch_add(1, Ordering::AcqRel);
        Offered::Queue(frame)
    }

    fn on_own_runtime(&self) -> bool {
        Handle::try_current().is_ok_and(|h| h.id() == self.runtime)
    }
}

impl DirectSend for DirectPost {
    fn offer(&self, frame: Outgoing) -> Offered {
        // Before the frame is queued or posted: an abort of it while it
        // waits in the queue must be remembered (see `crate::abort`).
        if frame.meta.is_some() {
            self.link.session.aborts.arm();
        }
        if self.queued.load(Ordering::Acquire) != 0
            || self.link.session.mode() != Some(HttpMode::StreamableHttp)
            || !self.on_own_runtime()
        {
            return self.queue(frame);
        }
        let kind = Outbound::of(&frame);
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
        if !(st.open && st.driving) {
            drop(st);
            return self.queue(frame);
        }
        // Checked again under the lock: the driver may have queued or handed
        // on a frame since; a frame it handed on is already in the set.
        if self.queued.load(Ordering::Acquire) != 0 {
            drop(st);
            return self.queue(frame);
        }
        let st = &mut *st;
        self.link.session.refresh(&mut st.snap);
        let build = Build::Post {
            frame: &frame.frame,
            kind: &kind,
        };
        let req = build.request(&self.link, &st.snap);
        let link = self.link.clone();
        let frame = frame.frame;
        st.requests.push(Box::pin(async move {
            exchange(link, req, frame, kind).await;
            drop(permit);
        }));
        self.poll_all(&mut st.requests);
        Offered::Taken
    }

    fn unqueue(&self) {
        // Never below zero, even if a count is given back twice.
        let _ = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }
}
