//! [`Demand`]: how many requests are open and how many connections are live
//! per origin in one connection pool, and the rule that holds back a new
//! connection while enough are live.
//!
//! hyper-util's pool starts a connection for a request that finds none idle
//! and goes on waiting for one to come back; when one comes back first, the
//! new connection is still made and kept. A caller whose next request
//! follows its last answer at once races its own connection's return this
//! way, and the pool grows past the requests in flight: at 32 in flight the
//! W3 benchmark held 38 to 43 sockets (see `docs/benchmarks.md`), each with
//! its buffers and its task. So a connect started while at least as many
//! connections are live as requests are open waits: for its request to be
//! answered (the connection went to it; the connect then ends with
//! [`NotNeeded`], which hyper-util drops in the background), for the count
//! to change, or for [`DEFER_LIMIT`] at most, and then connects.
//!
//! A request is open from the moment it is sent until its answer's body has
//! ended or been dropped ([`ResponseBody`]); a connection is live from its
//! connect until hyper drops it ([`Live`]).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Uri;
use http::uri::{Authority, Scheme};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::sync::Notify;

/// The longest a connect waits for a connection to come back. A pooled
/// connection comes back within a few hundred microseconds of its answer's
/// end; one that does not by then is taken to be held elsewhere.
pub(crate) const DEFER_LIMIT: Duration = Duration::from_millis(50);

/// How many origins a pool's counts are kept for before those with no open
/// request and no live connection are forgotten.
const ORIGINS_KEPT: usize = 64;

/// The open requests and live connections of one connection pool, per
/// origin (scheme and authority, as hyper-util keys its pool).
#[derive(Default)]
pub(crate) struct Demand {
    origins: Mutex<HashMap<(Scheme, Authority), Arc<Counts>>>,
}

/// One origin's counts.
#[derive(Default)]
pub(crate) struct Counts {
    open: AtomicUsize,
    live: AtomicUsize,
    /// Deferred connects waiting on `changed`: changes are announced only
    /// when there are any.
    waiting: AtomicUsize,
    changed: Notify,
}

impl Counts {
    fn announce(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.changed.notify_waiters();
        }
    }
}

impl Demand {
    /// Counts a request to `uri` as open until the returned [`Open`] and
    /// everything made from it are dropped; `None` for a URI with no
    /// authority (hyper refuses it before connecting).
    pub(crate) fn open(&self, uri: &Uri) -> Option<Open> {
        let key = (uri.scheme()?.clone(), uri.authority()?.clone());
        let counts = {
            let mut origins = self.origins.lock().unwrap_or_else(|e| e.into_inner());
            if origins.len() >= ORIGINS_KEPT && !origins.contains_key(&key) {
                // Only the map holds these, and taking another needs the lock.
                origins.retain(|_, c| Arc::strong_count(c) > 1);
            }
            origins.entry(key).or_default().clone()
        };
        counts.open.fetch_add(1, Ordering::SeqCst);
        counts.announce();
        Some(Open {
            waiting: Settle(Arc::new(Waiting {
                counts: counts.clone(),
                settled: AtomicBool::new(false),
            })),
            counts: OpenGuard(counts),
        })
    }
}

#[cfg(test)]
impl Demand {
    /// The open requests and live connections of `uri`'s origin.
    pub(crate) fn counts(&self, uri: &Uri) -> (usize, usize) {
        let key = (
            uri.scheme().unwrap().clone(),
            uri.authority().unwrap().clone(),
        );
        let origins = self.origins.lock().unwrap();
        origins.get(&key).map_or((0, 0), |c| {
            (c.open.load(Ordering::SeqCst), c.live.load(Ordering::SeqCst))
        })
    }
}

/// An open request: counted until dropped, and waiting for its connection
/// until [`answered`](Open::answered) or dropped.
pub(crate) struct Open {
    waiting: Settle,
    counts: OpenGuard,
}

impl Open {
    /// The request's side of a connect it may start: see [`Waiting::needed`].
    pub(crate) fn waiting(&self) -> Arc<Waiting> {
        self.waiting.0.clone()
    }

    /// The answer's headers came: the request has its connection. What is
    /// left open is its body.
    pub(crate) fn answered(self) -> OpenGuard {
        let Open { waiting, counts } = self;
        drop(waiting);
        counts
    }
}

/// Settles the request's wait for a connection when dropped.
struct Settle(Arc<Waiting>);

impl Drop for Settle {
    fn drop(&mut self) {
        self.0.settled.store(true, Ordering::SeqCst);
        self.0.counts.announce();
    }
}

/// The open count of one request; dropping it closes the request.
pub(crate) struct OpenGuard(Arc<Counts>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.announce();
    }
}

/// Whether a request still waits for a connection.
pub(crate) struct Waiting {
    counts: Arc<Counts>,
    /// The request was answered or dropped.
    settled: AtomicBool,
}

/// Why a deferred connect was not made: its request got a connection that
/// came back to the pool (hyper-util discards the error of a connect it
/// left running in the background).
#[derive(Debug, thiserror::Error)]
#[error("the connection was not needed: the request was sent on one that came back to the pool")]
pub(crate) struct NotNeeded;

impl Waiting {
    /// Waits while a connect for this request may be spared: while as many
    /// connections are live as requests are open, and the request has not
    /// been answered, for [`DEFER_LIMIT`] at most. `Err(NotNeeded)` once the
    /// request has been answered or dropped.
    pub(crate) async fn needed(&self) -> Result<(), NotNeeded> {
        let counts = self.counts.clone();
        let deadline = tokio::time::Instant::now() + DEFER_LIMIT;
        counts.waiting.fetch_add(1, Ordering::SeqCst);
        let _done = Deferred(&counts);
        loop {
            let changed = counts.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.settled.load(Ordering::SeqCst) {
                return Err(NotNeeded);
            }
            if counts.live.load(Ordering::SeqCst) < counts.open.load(Ordering::SeqCst) {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Ok(());
            }
        }
    }

    /// The connection this request's connect made: live until dropped.
    pub(crate) fn live(&self) -> Live {
        self.counts.live.fetch_add(1, Ordering::SeqCst);
        Live(self.counts.clone())
    }
}

/// A deferred connect, counted while it waits.
struct Deferred<'a>(&'a Counts);

impl Drop for Deferred<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A live connection, counted until dropped.
pub(crate) struct Live(Arc<Counts>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::SeqCst);
        self.0.announce();
    }
}

tokio::task_local! {
    /// The request whose sending polls the pool: a connect the pool starts
    /// meanwhile is made for it.
    pub(crate) static SENDING: Option<Arc<Waiting>>;
}

/// The request a connect started now would be made for, if any.
pub(crate) fn sending() -> Option<Arc<Waiting>> {
    SENDING.try_with(Clone::clone).ok().flatten()
}

/// An answer's body, its request open until it ends or is dropped.
pub(crate) struct ResponseBody {
    body: Incoming,
    open: Option<OpenGuard>,
}

impl ResponseBody {
    pub(crate) fn new(body: Incoming, open: Option<OpenGuard>) -> Self {
        Self { body, open }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.body).poll_frame(cx);
        if matches!(poll, Poll::Ready(None | Some(Err(_)))) || this.body.is_end_stream() {
            this.open = None;
        }
        poll
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::task::Poll;

    use super::*;

    const ORIGIN: &str = "http://127.0.0.1:1/mcp";

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }

    fn counts(demand: &Demand, url: &str) -> (usize, usize) {
        demand.counts(&uri(url))
    }

    /// A request that found its one live connection busy: as many live as
    /// open.
    fn busy_pool(demand: &Demand) -> (Open, Live) {
        let open = demand.open(&uri(ORIGIN)).unwrap();
        let live = open.waiting().live();
        (open, live)
    }

    fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        let waker = std::task::Waker::noop();
        Pin::new(f).poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn requests_and_connections_are_counted_per_origin_until_dropped() {
        let demand = Demand::default();
        let a = demand.open(&uri(ORIGIN)).unwrap();
        let b = demand.open(&uri("http://127.0.0.1:1/other")).unwrap();
        let other = demand.open(&uri("https://127.0.0.1:1/mcp")).unwrap();
        assert_eq!(counts(&demand, ORIGIN), (2, 0));
        assert_eq!(counts(&demand, "https://127.0.0.1:1/"), (1, 0));
        let live = b.waiting().live();
        assert_eq!(counts(&demand, ORIGIN), (2, 1));
        // Answered, the request stays open for its body.
        let body = a.answered();
        assert_eq!(counts(&demand, ORIGIN), (2, 1));
        drop(body);
        drop(b);
        assert_eq!(counts(&demand, ORIGIN), (0, 1));
        drop(live);
        assert_eq!(counts(&demand, ORIGIN), (0, 0));
        drop(other);
        assert!(demand.open(&uri("/relative")).is_none());
    }

    #[test]
    fn origins_nothing_holds_are_forgotten_past_the_limit() {
        let demand = Demand::default();
        let held = demand.open(&uri(ORIGIN)).unwrap();
        for port in 2..=ORIGINS_KEPT {
            drop(demand.open(&uri(&format!("http://127.0.0.1:{port}/"))));
        }
        assert_eq!(demand.origins.lock().unwrap().len(), ORIGINS_KEPT);
        drop(demand.open(&uri("http://127.0.0.1:9999/")));
        let origins = demand.origins.lock().unwrap();
        // The held origin and the new one.
        assert_eq!(origins.len(), 2);
        drop(origins);
        assert_eq!(counts(&demand, ORIGIN), (1, 0));
        drop(held);
    }

    #[tokio::test]
    async fn a_connect_goes_ahead_at_once_while_fewer_are_live_than_open() {
        let demand = Demand::default();
        let (first, _live) = busy_pool(&demand);
        let second = demand.open(&uri(ORIGIN)).unwrap();
        let waiting = second.waiting();
        let mut needed = Box::pin(waiting.needed());
        assert!(matches!(poll_once(&mut needed), Poll::Ready(Ok(()))));
        drop((first, second));
    }

    #[tokio::test(start_paused = true)]
    async fn a_connect_for_a_request_answered_meanwhile_is_not_made() {
        let demand = Demand::default();
        let (open, live) = busy_pool(&demand);
        let waiting = open.waiting();
        let mut needed = Box::pin(waiting.needed());
        assert!(poll_once(&mut needed).is_pending());
        let body = open.answered();
        assert!(matches!(needed.await, Err(NotNeeded)));
        assert_eq!(counts(&demand, ORIGIN), (1, 1));
        drop((body, live));
    }

    #[tokio::test(start_paused = true)]
    async fn a_connect_for_a_request_dropped_meanwhile_is_not_made() {
        let demand = Demand::default();
        let (open, _live) = busy_pool(&demand);
        let waiting = open.waiting();
        let mut needed = Box::pin(waiting.needed());
        assert!(poll_once(&mut needed).is_pending());
        drop(open);
        assert!(matches!(needed.await, Err(NotNeeded)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_deferred_connect_goes_ahead_when_a_connection_closes() {
        let demand = Demand::default();
        let (open, live) = busy_pool(&demand);
        let waiting = open.waiting();
        let started = tokio::time::Instant::now();
        let mut needed = Box::pin(waiting.needed());
        assert!(poll_once(&mut needed).is_pending());
        drop(live);
        assert!(matches!(needed.await, Ok(())));
        assert!(started.elapsed() < DEFER_LIMIT);
        drop(open);
    }

    #[tokio::test(start_paused = true)]
    async fn a_deferred_connect_goes_ahead_when_another_request_opens() {
        let demand = Demand::default();
        let (open, _live) = busy_pool(&demand);
        let waiting = open.waiting();
        let started = tokio::time::Instant::now();
        let mut needed = Box::pin(waiting.needed());
        assert!(poll_once(&mut needed).is_pending());
        let another = demand.open(&uri(ORIGIN)).unwrap();
        assert!(matches!(needed.await, Ok(())));
        assert!(started.elapsed() < DEFER_LIMIT);
        drop((open, another));
    }

    #[tokio::test(start_paused = true)]
    async fn a_deferred_connect_waits_no_longer_than_the_limit() {
        let demand = Demand::default();
        let (open, _live) = busy_pool(&demand);
        let waiting = open.waiting();
        let started = tokio::time::Instant::now();
        assert!(matches!(waiting.needed().await, Ok(())));
        assert_eq!(started.elapsed(), DEFER_LIMIT);
        // Waiting for nothing now: changes are not announced.
        assert_eq!(
            demand
                .origins
                .lock()
                .unwrap()
                .values()
                .next()
                .unwrap()
                .waiting
                .load(Ordering::SeqCst),
            0
        );
        drop(open);
    }

    #[tokio::test]
    async fn outside_a_send_no_request_is_waiting() {
        assert!(sending().is_none());
        let demand = Demand::default();
        let open = demand.open(&uri(ORIGIN)).unwrap();
        let seen = SENDING
            .scope(Some(open.waiting()), async { sending().is_some() })
            .await;
        assert!(seen);
        drop(open);
    }
}
