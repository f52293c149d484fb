//! Streamable HTTP (MCP 2025-03-26 and later): one POST per frame, JSON or
//! SSE answers, the session id, the GET stream, and `DELETE` on close. This
//! module owns the mode's state ([`Streamable`]) and its loop; its parts
//! sit below it: [`stream`] (its SSE streams), [`exchange`] (one request's
//! POST and answer), [`direct`] (posting from the sender's task) and
//! [`session`] (what answers say about the session).

mod session;
mod stream;
mod exchange;
mod direct;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode};
use mcpwire_transport::{CloseReason, DirectSend as _, Outgoing};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot, watch};
use tokio::task::{AbortHandle, JoinSet};

use crate::context::{Exchange, Link, drive};
use crate::demand::ResponseBody;
use crate::outbound::Outbound;
use crate::request::{Build, MCP_SESSION_ID, send, send_with_retry};
use crate::session::SessionSnapshot;

pub(crate) use direct::DirectPost;
use exchange::{answer, exchange};
pub(crate) use session::settle_mode;

/// How long the first request after `initialized` waits for the GET stream's
/// answer.
const LISTEN_ANSWER_WAIT: Duration = Duration::from_secs(2);

/// A frame taken from the queue, with what it is: read once, however long
/// it waits to be handed on.
type Classified = (Outgoing, Outbound);

/// `frame`, with what it is.
fn classified(frame: Outgoing) -> Classified {
    let kind = Outbound::of(&frame);
    (frame, kind)
}

/// A Streamable HTTP transport's state, owned by its driver task.
pub(crate) struct Streamable {
    link: Arc<Link>,
    /// Streams that are not a request's answer: the GET stream, a
    /// notification's answer body, an answer taken over from the fallback.
    tasks: JoinSet<()>,
    snap: SessionSnapshot,
    listener: Option<AbortHandle>,
    in_flight: Arc<Semaphore>,
    /// The requests in flight, shared with the senders that post directly.
    direct: Arc<DirectPost>,
}

impl Streamable {
    pub(crate) fn new(link: Arc<Link>, in_flight: Arc<Semaphore>, direct: Arc<DirectPost>) -> Self {
        Self {
            link,
            tasks: JoinSet::new(),
            snap: SessionSnapshot::default(),
            listener: None,
            in_flight,
            direct,
        }
    }

    /// Handles, beside the loop, the answer to a frame posted before it ran
    /// (the automatic fallback's probe).
    pub(crate) fn adopt(&mut self, resp: Response<ResponseBody>, frame: Bytes, kind: Outbound) {
        let link = self.link.clone();
        self.tasks.spawn(async move {
            answer(&link, resp, frame, kind, false).await;
        });
    }

    /// Posts queued frames until the transport closes, then closes it;
    /// `held` first: a frame already taken from the queue (still counted as
    /// queued) while the automatic fallback's probe ran.
    pub(crate) async fn run(
        mut self,
        mut rx: mpsc::Receiver<Outgoing>,
        mut shutdown: watch::Receiver<bool>,
        held: Option<Outgoing>,
    ) -> CloseReason {
        // Requests in flight live in `direct`, where senders may add
        // theirs; polling it (first in the loop) also gives them the
        // driver's waker.
        let direct = self.direct.clone();
        let mut closing = match held {
            Some(frame) => Box::pin(self.hand_on(&direct, frame, &mut rx, &mut shutdown)).await,
            None => ControlFlow::Continue(()),
        };
        while closing.is_continue() {
            tokio::select! {
                biased;
                _ = shutdown.changed() => break,
                () = direct.drive() => {}
                frame = rx.recv() => match frame {
                    // Boxed, as is closing below: handing on holds a frame
                    // and its retries, kilobytes an idle session would
                    // otherwise carry in its task.
                    Some(frame) => {
                        let handing = self.hand_on(&direct, frame, &mut rx, &mut shutdown);
                        closing = Box::pin(handing).await;
                    }
                    None => break,
                },
                Some(_) = self.tasks.join_next() => {}
            }
        }
        let unsent = match closing {
            ControlFlow::Break(unsent) => unsent,
            ControlFlow::Continue(()) => Vec::new(),
        };
        Box::pin(self.close(rx, unsent)).await;
        CloseReason::Local
    }

    /// Hands on one frame taken from the queue, and any kept back while it
    /// waited (see [`wait_for_permit`](Self::wait_for_permit)): a request's
    /// exchange joins the requests in flight; anything else is posted before
    /// the next frame, so a notification such as `initialized` reaches the
    /// server before the requests queued after it. The requests in flight
    /// go on meanwhile. Breaks when the transport closes, with the frames
    /// not handed on, for the close to flush.
    async fn hand_on(
        &mut self,
        direct: &DirectPost,
        frame: Outgoing,
        rx: &mut mpsc::Receiver<Outgoing>,
        shutdown: &mut watch::Receiver<bool>,
    ) -> ControlFlow<Vec<Classified>> {
        let mut next = Some(classified(frame));
        while let Some((frame, kind)) = next.take() {
            let exchange = if let Outbound::Request { .. } = kind {
                let permit = match self.in_flight.clone().try_acquire_owned() {
                    Ok(permit) => permit,
                    Err(_) => match self.wait_for_permit(direct, rx, shutdown, &mut next).await {
                        Some(permit) => permit,
                        None => {
                            let unsent = [Some((frame, kind)), next].into_iter().flatten();
                            return ControlFlow::Break(unsent.collect());
                        }
                    },
                };
                Some(self.start(frame.frame, kind, permit))
            } else {
                // Nothing is kept back here (only a request waits): on
                // closing, the frame being posted is given up.
                tokio::select! {
                    () = self.post(frame.frame, kind) => {}
                    () = direct.drive() => {}
                    _ = shutdown.changed() => return ControlFlow::Break(Vec::new()),
                }
                None
            };
            direct.handed_on(exchange);
        }
        ControlFlow::Continue(())
    }

    /// Waits for an in-flight permit for a request taken from the queue;
    /// `None` if the transport closes first. Only the requests in flight
    /// give one back, so they go on meanwhile, and so does every response
    /// queued behind the request: a server may hold each of those requests
    /// until it has the client's answer to a request of its own (an
    /// elicitation, a sampling), and that answer waiting behind a request
    /// that waits for them would wedge the transport until they time out.
    /// The first frame of any other kind is kept in `next`, in order, and
    /// nothing more is taken from the queue until the permit comes.
    async fn wait_for_permit(
        &mut self,
        direct: &DirectPost,
        rx: &mut mpsc::Receiver<Outgoing>,
        shutdown: &mut watch::Receiver<bool>,
        next: &mut Option<Classified>,
    ) -> Option<OwnedSemaphorePermit> {
        let permit = self.in_flight.clone().acquire_owned();
        tokio::pin!(permit);
        let mut queue_open = true;
        // Every wake of the requests in flight is the driver's meanwhile
        // (see `direct`), whether or not a consumer polls.
        direct.driver_waits(true);
        let permit = loop {
            tokio::select! {
                biased;
                _ = shutdown.changed() => break None,
                permit = &mut permit => break permit.ok(),
                () = direct.drive() => {}
                frame = rx.recv(), if queue_open && next.is_none() => match frame {
                    Some(frame) => match Outbound::of(&frame) {
                        Outbound::Response => {
                            tokio::select! {
                                () = self.post(frame.frame, Outbound::Response) => {}
                                () = direct.drive() => {}
                                _ = shutdown.changed() => break None,
                            }
                            direct.handed_on(None);
                        }
                        kind => *next = Some((frame, kind)),
                    },
                    None => queue_open = false,
                },
            }
        };
        direct.driver_waits(false);
        permit
    }

    /// A request's exchange, to join the requests in flight (its answer may
    /// stream for long); it gives `permit` back when it ends.
    fn start(&mut self, frame: Bytes, kind: Outbound, permit: OwnedSemaphorePermit) -> Exchange {
        self.link.session.refresh(&mut self.snap);
        let build = Build::Post {
            frame: &frame,
            kind: &kind,
        };
        let req = build.request(&self.link, &self.snap);
        let link = self.link.clone();
        Box::pin(async move {
            exchange(link, req, frame, kind).await;
            drop(permit);
        })
    }

    /// Posts a notification, a response or anything else that is not a
    /// request, and waits for its answer's status: that orders it before
    /// the next frame.
    async fn post(&mut self, frame: Bytes, kind: Outbound) {
        self.link.session.refresh(&mut self.snap);
        let build = Build::Post {
            frame: &frame,
            kind: &kind,
        };
        let req = build.request(&self.link, &self.snap);
        // A body (not expected, but a server may stream one) is read in its
        // own task so it cannot hold the driver.
        let had_session = req.headers().contains_key(MCP_SESSION_ID);
        let initialized = matches!(kind, Outbound::Notification { initialized: true });
        // With a session, the GET stream opens beside `initialized` (the
        // session is known from `initialize`'s answer) and is waited for
        // below: the two round trips overlap instead of adding up before the
        // first request.
        let listening = match initialized && had_session {
            true => self.start_listener(),
            false => None,
        };
        let resp = match send_with_retry(&self.link, build, req).await {
            Ok(resp) => resp,
            Err(e) => {
                self.stop_listener();
                self.link.events.undelivered(frame, e.into()).await;
                return;
            }
        };
        let status = resp.status();
        if status == StatusCode::ACCEPTED || !status.is_success() {
            answer(&self.link, resp, frame, kind, had_session).await;
        } else {
            let link = self.link.clone();
            self.tasks.spawn(async move {
                answer(&link, resp, frame, kind, had_session).await;
            });
        }
        // Without a session the GET goes after `initialized`, and its answer
        // is still waited for: not for order (the server cannot tie the
        // stream to our requests) but so that the next request finds the
        // connection free. Posted at once, it would open a second
        // connection, kept idle for the life of the pool (a client per
        // session held two).
        let listening = match initialized && !had_session && status.is_success() {
            true => self.start_listener(),
            false => listening,
        };
        if let Some(answered) = listening {
            if status.is_success() {
                // The GET stream is answered before the next frame is
                // posted, so whatever the server sends on it because of our
                // first requests has a stream to go to (a server without an
                // event store drops a message that finds none). Bounded: a
                // server slow to answer the GET only delays the first
                // request.
                let _ = tokio::time::timeout(LISTEN_ANSWER_WAIT, answered).await;
            } else {
                self.stop_listener();
            }
        }
    }

    /// Opens the GET stream for server-initiated messages, unless one runs,
    /// listening is off, or this URL answered a `GET` with 405 lately (see
    /// `HttpClient::offers_no_stream`). The receiver completes when the first `GET` has
    /// its answer (of any status) or failed.
    fn start_listener(&mut self) -> Option<oneshot::Receiver<()>> {
        if !self.link.client.config().listen
            || self.link.client.offers_no_stream(&self.link.session.url)
        {
            return None;
        }
        if self.listener.as_ref().is_some_and(|h| !h.is_finished()) {
            return None;
        }
        let (answered, rx) = oneshot::channel();
        let handle = self
            .tasks
            .spawn(stream::listen(self.link.clone(), Some(answered)));
        self.listener = Some(handle);
        Some(rx)
    }

    /// Stops the GET stream (`initialized` was not accepted).
    fn stop_listener(&mut self) {
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
    }

    /// Closing: flush what is queued (`unsent` first: frames taken from the
    /// queue but not handed on), end the session, stop every task; all
    /// within the close timeout.
    async fn close(&mut self, mut rx: mpsc::Receiver<Outgoing>, unsent: Vec<Classified>) {
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
        // From here on every frame goes through the queue, which is flushed
        // below (or refuses it once closed).
        self.direct.close();
        rx.close();
        let mut requests = self.direct.take_requests();
        let timeout = self.link.client.config().close_timeout;
        let link = self.link.clone();
        let direct = self.direct.clone();
        let flush = async {
            let mut unsent = unsent.into_iter();
            while let Some((frame, kind)) = match unsent.next() {
                Some(taken) => Some(taken),
                None => rx.recv().await.map(classified),
            } {
                direct.unqueue();
                let frame = frame.frame;
                let build = Build::Post {
                    frame: &frame,
                    kind: &kind,
                };
                let req = build.request(&link, &link.session.snapshot());
                exchange(link.clone(), req, frame, kind).await;
            }
            delete_session(&link).await;
        };
        // The requests in flight may still be answered while closing, as
        // they were when each ran in its own task.
        let flush = async {
            tokio::select! {
                () = flush => {}
                () = drive(&mut requests) => {}
            }
        };
        if tokio::time::timeout(timeout, flush).await.is_err() {
            tracing::debug!("close timed out flushing frames or deleting the session");
        }
        drop(requests);
        self.tasks.abort_all();
    }
}

/// Ends the session with `DELETE`; 405 (the server does not allow it) and
/// any other answer are accepted, as the session is being left either way.
async fn delete_session(link: &Link) {
    let snap = link.session.snapshot();
    if snap.session_id.is_none() {
        return;
    }
    match send(
        link,
        Build::EndSession,
        Build::EndSession.request(link, &snap),
    )
    .await
    {
        Ok(resp) => tracing::debug!(status = %resp.status(), "session DELETE answered"),
        Err(e) => tracing::debug!(error = %e, "session DELETE failed"),
    }
}
