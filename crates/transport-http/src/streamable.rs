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

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode};
use hyper::body::Incoming;
use mcpwire_transport::{CloseReason, DirectSend as _, Outgoing};
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
use tokio::task::{AbortHandle, JoinSet};

use crate::context::{Exchange, Link, drive};
use crate::outbound::Outbound;
use crate::request::{Build, MCP_SESSION_ID, send, send_with_retry};
use crate::session::SessionSnapshot;

pub(crate) use direct::DirectPost;
use exchange::{answer, exchange};
pub(crate) use session::settle_mode;

/// How long the first request after `initialized` waits for the GET stream's
/// answer.
const LISTEN_ANSWER_WAIT: Duration = Duration::from_secs(2);

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
    pub(crate) fn adopt(&mut self, resp: Response<Incoming>, frame: Bytes, kind: Outbound) {
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
        if let Some(frame) = held {
            let exchange = Box::pin(self.send(frame)).await;
            direct.handed_on(exchange);
        }
        loop {
            tokio::select! {
                biased;
                _ = shutdown.changed() => break,
                () = direct.drive() => {}
                frame = rx.recv() => match frame {
                    Some(frame) => {
                        // The requests in flight go on while this frame is
                        // posted (or waits for an in-flight permit, which
                        // only they can give back).
                        // Boxed, as is closing below: posting holds a
                        // request and its retries, kilobytes an idle
                        // session would otherwise carry in its task.
                        let exchange = tokio::select! {
                            exchange = Box::pin(self.send(frame)) => exchange,
                            () = direct.drive() => None,
                            _ = shutdown.changed() => break,
                        };
                        direct.handed_on(exchange);
                    }
                    None => break,
                },
                Some(_) = self.tasks.join_next() => {}
            }
        }
        Box::pin(self.close(rx)).await;
        CloseReason::Local
    }

    /// Sends one frame over Streamable HTTP. A request comes back as an
    /// [`Exchange`] for the driver to poll beside the others (its answer may
    /// stream for long); everything else is posted before the next frame, so
    /// a notification such as `initialized` reaches the server before the
    /// requests queued after it.
    async fn send(&mut self, frame: Outgoing) -> Option<Exchange> {
        let kind = Outbound::of(&frame);
        let frame = frame.frame;
        self.link.session.refresh(&mut self.snap);
        let build = Build::Post {
            frame: &frame,
            kind: &kind,
        };
        let req = build.request(&self.link, &self.snap);
        match kind {
            Outbound::Request { .. } => {
                // Waiting for a permit stops the driver taking frames from
                // its queue: senders then see `Busy`.
                let permit = match self.in_flight.clone().try_acquire_owned() {
                    Ok(permit) => permit,
                    Err(_) => {
                        // Only the requests in flight give a permit back:
                        // until then their wakes are the driver's (see
                        // `direct`), whether or not a consumer polls.
                        self.direct.driver_waits(true);
                        let permit = self.in_flight.clone().acquire_owned().await;
                        self.direct.driver_waits(false);
                        permit.ok()?
                    }
                };
                let link = self.link.clone();
                Some(Box::pin(async move {
                    exchange(link, req, frame, kind).await;
                    drop(permit);
                }))
            }
            Outbound::Notification { .. } | Outbound::Other => {
                // Only the status is awaited here: it orders this frame
                // before the next. A body (not expected, but a server may
                // stream one) is read in its own task so it cannot hold the
                // driver.
                let had_session = req.headers().contains_key(MCP_SESSION_ID);
                let initialized = matches!(kind, Outbound::Notification { initialized: true });
                // With a session, the GET stream opens beside `initialized`
                // (the session is known from `initialize`'s answer) and is
                // waited for below: the two round trips overlap instead of
                // adding up before the first request.
                let listening = match initialized && had_session {
                    true => self.start_listener(),
                    false => None,
                };
                let resp = match send_with_retry(&self.link, build, req).await {
                    Ok(resp) => resp,
                    Err(e) => {
                        self.stop_listener();
                        self.link.events.undelivered(frame, e.into()).await;
                        return None;
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
                // Without a session the GET goes after `initialized`, and
                // its answer is still waited for: not for order (the server
                // cannot tie the stream to our requests) but so that the
                // next request finds the connection free. Posted at once,
                // it would open a second connection, kept idle for the
                // life of the pool (a client per session held two).
                let listening = match initialized && !had_session && status.is_success() {
                    true => self.start_listener(),
                    false => listening,
                };
                if let Some(answered) = listening {
                    if status.is_success() {
                        // The GET stream is answered before the next frame
                        // is posted, so whatever the server sends on it
                        // because of our first requests has a stream to go
                        // to (a server without an event store drops a
                        // message that finds none). Bounded: a server slow
                        // to answer the GET only delays the first request.
                        let _ = tokio::time::timeout(LISTEN_ANSWER_WAIT, answered).await;
                    } else {
                        self.stop_listener();
                    }
                }
                None
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

    /// Closing: flush what is queued, end the session, stop every task; all
    /// within the close timeout.
    async fn close(&mut self, mut rx: mpsc::Receiver<Outgoing>) {
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
            while let Some(frame) = rx.recv().await {
                direct.unqueue();
                let kind = Outbound::of(&frame);
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
