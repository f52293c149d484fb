//! Streamable HTTP (MCP 2025-03-26 and later): one POST per frame, JSON or
//! SSE answers, the session id, the GET stream, and `DELETE` on close.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use mcpwire_codec::jsonrpc::Message;
use mcpwire_transport::TransportError;
use tokio::sync::{mpsc, oneshot};

use crate::client::{Media, read_body, retry_after, status_error};
use crate::driver::{Ctx, Driver, Exchange, Outbound, drive};
use crate::session::{SessionSnapshot, valid_session_id};
use crate::{Error, HttpMode};
use mcpwire_transport::DirectSend as _;

pub(crate) const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
pub(crate) const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(crate) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
pub(crate) const ACCEPT_POST: HeaderValue =
    HeaderValue::from_static("application/json, text/event-stream");
pub(crate) const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
pub(crate) const JSON: HeaderValue = HeaderValue::from_static("application/json");
/// How long the first request after `initialized` waits for the GET stream's
/// answer.
const LISTEN_ANSWER_WAIT: Duration = Duration::from_secs(2);

/// What the legacy probe found.
pub(crate) enum Probe {
    /// The server speaks Streamable HTTP (or failed in a way that says
    /// nothing about legacy support): stay.
    Streamable,
    /// The server speaks HTTP+SSE: its stream is open and `frame` still has
    /// to be sent.
    Legacy(Bytes, Box<crate::legacy::LegacyStream>),
}

impl Driver {
    /// Sends one frame over Streamable HTTP. A request comes back as an
    /// [`Exchange`] for the driver to poll beside the others (its answer may
    /// stream for long); everything else is posted before the next frame, so
    /// a notification such as `initialized` reaches the server before the
    /// requests queued after it.
    pub(crate) async fn send_streamable(&mut self, frame: Bytes) -> Option<Exchange> {
        let kind = Outbound::classify(&frame);
        self.ctx.shared.refresh(&mut self.snap);
        let req = post(&self.ctx, &self.snap, &frame, &kind);
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
                let ctx = self.ctx.clone();
                Some(Box::pin(async move {
                    exchange(ctx, req, frame, kind).await;
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
                let resp = match post_with_retry(&self.ctx, req, &frame, &kind).await {
                    Ok(resp) => resp,
                    Err(e) => {
                        self.ctx.events.undelivered(frame, e.into()).await;
                        return None;
                    }
                };
                let status = resp.status();
                if status == StatusCode::ACCEPTED || !status.is_success() {
                    answer(&self.ctx, resp, frame, kind, had_session).await;
                } else {
                    let ctx = self.ctx.clone();
                    self.tasks.spawn(async move {
                        answer(&ctx, resp, frame, kind, had_session).await;
                    });
                }
                if initialized && status.is_success() {
                    if let Some(answered) = self.start_listener() {
                        // The GET stream is answered before the next frame is
                        // posted, so whatever the server sends on it because
                        // of our first requests has a stream to go to (a
                        // server without an event store drops a message that
                        // finds none). Bounded: a server slow to answer the
                        // GET only delays the first request.
                        let _ = tokio::time::timeout(LISTEN_ANSWER_WAIT, answered).await;
                    }
                }
                None
            }
        }
    }

    /// Opens the GET stream for server-initiated messages, unless one runs
    /// or listening is off. The receiver completes when the first `GET` has
    /// its answer (of any status) or failed.
    fn start_listener(&mut self) -> Option<oneshot::Receiver<()>> {
        if !self.ctx.client.config().listen {
            return None;
        }
        if self.listener.as_ref().is_some_and(|h| !h.is_finished()) {
            return None;
        }
        let (answered, rx) = oneshot::channel();
        let handle = self
            .tasks
            .spawn(crate::sse::listen(self.ctx.clone(), Some(answered)));
        self.listener = Some(handle);
        Some(rx)
    }

    /// The automatic fallback's first step: POST the first frame and decide.
    pub(crate) async fn probe(&mut self, frame: Bytes) -> Probe {
        let kind = Outbound::classify(&frame);
        let req = post(&self.ctx, &SessionSnapshot::default(), &frame, &kind);
        let resp = match post_with_retry(&self.ctx, req, &frame, &kind).await {
            Ok(resp) => resp,
            Err(e) => {
                self.ctx.events.undelivered(frame, e.into()).await;
                return Probe::Streamable;
            }
        };
        if !matches!(resp.status().as_u16(), 400 | 404 | 405) {
            let ctx = self.ctx.clone();
            self.tasks.spawn(async move {
                answer(&ctx, resp, frame, kind, false).await;
            });
            return Probe::Streamable;
        }
        let original = status_error(resp).await;
        match crate::legacy::LegacyStream::open(&self.ctx).await {
            Ok(stream) => {
                tracing::debug!(url = %self.ctx.url, "falling back to HTTP+SSE");
                self.ctx.shared.set_mode(HttpMode::LegacySse);
                self.ctx
                    .client
                    .remember_mode(&self.ctx.shared.url, HttpMode::LegacySse);
                Probe::Legacy(frame, Box::new(stream))
            }
            Err(e) => {
                tracing::debug!(error = %e, "no legacy SSE endpoint either");
                self.ctx.events.undelivered(frame, original.into()).await;
                Probe::Streamable
            }
        }
    }

    /// Closing: flush what is queued, end the session, stop every task; all
    /// within the close timeout.
    pub(crate) async fn close_streamable(&mut self, mut rx: mpsc::Receiver<Bytes>) {
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
        // From here on every frame goes through the queue, which is flushed
        // below (or refuses it once closed).
        self.direct.close();
        rx.close();
        let mut requests = self.direct.take_requests();
        let timeout = self.ctx.client.config().close_timeout;
        let ctx = self.ctx.clone();
        let direct = self.direct.clone();
        let flush = async {
            while let Some(frame) = rx.recv().await {
                direct.unqueue();
                let kind = Outbound::classify(&frame);
                let req = post(&ctx, &ctx.shared.snapshot(), &frame, &kind);
                exchange(ctx.clone(), req, frame, kind).await;
            }
            delete_session(&ctx).await;
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

/// Builds the POST carrying `frame`. An `initialize` request starts a new
/// session, so it carries neither the old session id nor a version.
pub(crate) fn post(
    ctx: &Ctx,
    snap: &SessionSnapshot,
    frame: &Bytes,
    kind: &Outbound,
) -> Request<Full<Bytes>> {
    let mut req = ctx.client.request(Method::POST, &ctx.url, frame.clone());
    let headers = req.headers_mut();
    headers.insert(ACCEPT, ACCEPT_POST);
    headers.insert(CONTENT_TYPE, JSON);
    if !matches!(
        kind,
        Outbound::Request {
            initialize: true,
            ..
        }
    ) {
        session_headers(headers, snap);
    }
    req
}

pub(crate) fn session_headers(headers: &mut http::HeaderMap, snap: &SessionSnapshot) {
    if let Some(id) = &snap.session_id {
        headers.insert(MCP_SESSION_ID, id.clone());
    }
    if let Some(v) = &snap.protocol_version {
        headers.insert(MCP_PROTOCOL_VERSION, v.clone());
    }
}

/// True for the statuses that mean "busy, come back later".
pub(crate) fn is_busy(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE
}

/// Sends a POST, retrying what is safe to retry under the retry policy: a
/// failed connect (nothing reached the server) and 429/503 (the server said it
/// did not take the request), honouring `Retry-After`.
pub(crate) async fn post_with_retry(
    ctx: &Ctx,
    mut req: Request<Full<Bytes>>,
    frame: &Bytes,
    kind: &Outbound,
) -> Result<Response<Incoming>, Error> {
    let mut backoff = ctx.client.config().retry.backoff();
    let uri = req.uri().clone();
    loop {
        let result = ctx.client.send(req).await;
        let floor = match &result {
            Ok(resp) if is_busy(resp.status()) => retry_after(resp.headers()),
            Err(Error::Connect(_)) => None,
            _ => return result,
        };
        let Some(delay) = backoff.next_delay(floor) else {
            let last = match result {
                Ok(resp) => status_error(resp).await,
                Err(e) => e,
            };
            return Err(Error::RetriesExhausted(Box::new(last)));
        };
        drop(result);
        tracing::debug!(?delay, "retrying POST");
        tokio::time::sleep(delay).await;
        req = post(ctx, &ctx.shared.snapshot(), frame, kind);
        *req.uri_mut() = uri.clone();
    }
}

/// Posts one frame and handles its answer. True if the server accepted it.
pub(crate) async fn exchange(
    ctx: Arc<Ctx>,
    req: Request<Full<Bytes>>,
    frame: Bytes,
    kind: Outbound,
) -> bool {
    let had_session = req.headers().contains_key(MCP_SESSION_ID);
    match post_with_retry(&ctx, req, &frame, &kind).await {
        Ok(resp) => answer(&ctx, resp, frame, kind, had_session).await,
        Err(e) => {
            ctx.events.undelivered(frame, e.into()).await;
            false
        }
    }
}

/// Handles the answer to a POST: status first, then the content type.
async fn answer(
    ctx: &Ctx,
    resp: Response<Incoming>,
    frame: Bytes,
    kind: Outbound,
    had_session: bool,
) -> bool {
    let status = resp.status();
    if !status.is_success() {
        let error = status_error(resp).await;
        if had_session && session_unknown(&error) {
            tracing::debug!("session expired; dropping the session id");
            ctx.shared.update(|s| {
                s.session_id = None;
                s.protocol_version = None;
            });
            ctx.events
                .undelivered(frame, TransportError::SessionExpired)
                .await;
        } else {
            ctx.events.undelivered(frame, error.into()).await;
        }
        return false;
    }
    let initialize = matches!(
        kind,
        Outbound::Request {
            initialize: true,
            ..
        }
    );
    if initialize {
        capture_session(ctx, &resp);
    }
    let Outbound::Request { id, .. } = kind else {
        // A notification, response or batch: 202 with no body is the normal
        // answer. A batch may still be answered with JSON or SSE.
        if status == StatusCode::ACCEPTED {
            return true;
        }
        return deliver_body(ctx, resp, frame, None, false).await;
    };
    if status == StatusCode::ACCEPTED {
        // Not what the specification allows for a request; the answer may
        // still come on the GET stream, so nothing is reported as lost.
        tracing::debug!("202 Accepted for a request");
        return true;
    }
    deliver_body(ctx, resp, frame, Some(id), initialize).await
}

/// Delivers a success answer's JSON or SSE body.
async fn deliver_body(
    ctx: &Ctx,
    resp: Response<Incoming>,
    frame: Bytes,
    id: Option<mcpwire_codec::jsonrpc::Id>,
    initialize: bool,
) -> bool {
    let config = ctx.client.config();
    match Media::of(resp.headers()) {
        Media::Json => {
            match read_body(
                resp.into_body(),
                config.max_frame_len,
                config.request_timeout,
            )
            .await
            {
                Ok(body) if body.iter().all(u8::is_ascii_whitespace) => true,
                Ok(body) => {
                    if initialize {
                        capture_protocol_version(ctx, &body);
                    }
                    ctx.events.frame(body).await;
                    true
                }
                Err(e) => {
                    ctx.events.undelivered(frame, e.into()).await;
                    false
                }
            }
        }
        Media::EventStream => {
            crate::sse::answer_stream(ctx, resp.into_body(), frame, id, initialize).await
        }
        Media::Other(media) => {
            // Some servers answer a notification with 200 and no body (and no
            // content type) instead of 202: that is an acceptance too.
            match read_body(
                resp.into_body(),
                config.max_frame_len,
                config.request_timeout,
            )
            .await
            {
                Ok(body) if body.iter().all(u8::is_ascii_whitespace) && id.is_none() => true,
                Ok(_) => {
                    let error = Error::UnexpectedContentType(media);
                    ctx.events.undelivered(frame, error.into()).await;
                    false
                }
                Err(e) => {
                    ctx.events.undelivered(frame, e.into()).await;
                    false
                }
            }
        }
    }
}

/// Takes the session id from a successful `initialize` answer.
fn capture_session(ctx: &Ctx, resp: &Response<Incoming>) {
    let id = resp.headers().get(MCP_SESSION_ID).cloned();
    match id {
        Some(id) if valid_session_id(&id) => {
            ctx.shared.update(|s| s.session_id = Some(id));
        }
        Some(_) => tracing::warn!("ignoring a session id that is not visible ASCII"),
        None => ctx.shared.update(|s| s.session_id = None),
    }
    if ctx.shared.mode().is_none() {
        ctx.shared.set_mode(HttpMode::StreamableHttp);
        ctx.client
            .remember_mode(&ctx.shared.url, HttpMode::StreamableHttp);
    }
}

/// Takes `protocolVersion` from an `initialize` result, for the
/// `MCP-Protocol-Version` header.
pub(crate) fn capture_protocol_version(ctx: &Ctx, frame: &Bytes) {
    #[derive(serde::Deserialize)]
    struct InitializeResult {
        #[serde(rename = "protocolVersion")]
        protocol_version: Option<String>,
    }
    let Ok(Message::Response(resp)) = Message::parse(frame.clone()) else {
        return;
    };
    let Ok(result) = resp.outcome else { return };
    let Ok(InitializeResult {
        protocol_version: Some(version),
    }) = result.deserialize::<InitializeResult>()
    else {
        return;
    };
    if let Ok(value) = HeaderValue::from_str(&version) {
        ctx.shared.update(|s| s.protocol_version = Some(value));
    }
}

/// 404 on a request that carried a session id, or a 400 whose body says the
/// session is unknown (some servers answer so after a restart).
fn session_unknown(error: &Error) -> bool {
    let Some(status) = error.status() else {
        return false;
    };
    match status.status {
        404 => true,
        400 => {
            let body = status.body.to_ascii_lowercase();
            body.contains("session")
                && ["not found", "unknown", "invalid", "expired", "no valid"]
                    .iter()
                    .any(|w| body.contains(w))
        }
        _ => false,
    }
}

/// Ends the session with `DELETE`; 405 (the server does not allow it) and
/// any other answer are accepted, as the session is being left either way.
async fn delete_session(ctx: &Ctx) {
    let snap = ctx.shared.snapshot();
    if snap.session_id.is_none() {
        return;
    }
    let mut req = ctx.client.request(Method::DELETE, &ctx.url, Bytes::new());
    session_headers(req.headers_mut(), &snap);
    match ctx.client.send(req).await {
        Ok(resp) => tracing::debug!(status = %resp.status(), "session DELETE answered"),
        Err(e) => tracing::debug!(error = %e, "session DELETE failed"),
    }
}
