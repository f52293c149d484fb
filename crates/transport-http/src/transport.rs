//! [`HttpTransport`]: the handle a user holds. It spawns the driver task,
//! takes frames through its [`FrameSender`], and delivers events against
//! grants.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{HeaderValue, Uri};
use mcpwire_transport::{
    Active, CloseReason, ConnectError, Direction, FrameSender, Grants, Tap, Tapped, Transport,
    TransportError, TransportEvent, TransportInfo,
};
use tokio::sync::{oneshot, watch};
use tokio::time::Sleep;

use crate::client::HttpClient;
use crate::driver::{Driver, Start};
use crate::error::Error;
use crate::events::{EventQueues, Events};
use crate::mode::HttpMode;
use crate::session::SessionState;
use crate::streamable::DirectPost;

/// How long past its own close timeout a driver is given before the
/// transport stops waiting for it.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// An MCP server reached over HTTP: Streamable HTTP, legacy HTTP+SSE, or a
/// receive-only SSE stream, implementing the
/// [`Transport`] contract.
///
/// # Tasks
///
/// Each transport spawns one driver task on the current tokio runtime (so the
/// constructors fail with [`ConnectError::NoRuntime`] outside one). The driver posts
/// queued frames, and spawns tasks only for streams that are not a request's
/// answer (the GET stream, a notification's answer body, the first answer
/// during the automatic fallback, the legacy SSE stream). Requests in flight are not tasks: in Streamable HTTP a
/// request sent while nothing is queued is posted from the sender's own task
/// (on the transport's runtime), and the requests in flight are polled by the
/// driver and by [`poll_event`](Transport::poll_event), whichever a ready
/// answer wakes (see `docs/http.md`). Dropping the transport aborts and drops
/// them all at once; [`close`](mcpwire_transport::TransportExt::close)
/// first flushes queued frames and ends the session with `DELETE`, bounded by
/// [`HttpConfig::close_timeout`](crate::HttpConfig::close_timeout).
///
/// # Flow control
///
/// Inbound frames wait in a queue of
/// [`read_ahead`](crate::HttpConfig::read_ahead) frames. While the consumer
/// holds no grant and that queue is full, stream tasks stop polling their
/// response bodies, so the server is pushed back by TCP (or HTTP/2 flow
/// control). Read-ahead while paused is bounded by the queue plus one read
/// buffer per open stream.
pub struct HttpTransport {
    sender: FrameSender,
    grants: Grants,
    queues: EventQueues,
    read_ahead: usize,
    done: Option<oneshot::Receiver<CloseReason>>,
    reason: Option<CloseReason>,
    reported: bool,
    session: Arc<SessionState>,
    shutdown: watch::Sender<bool>,
    closing: bool,
    close_deadline: Option<Pin<Box<Sleep>>>,
    close_timeout: std::time::Duration,
    driver: tokio::task::AbortHandle,
    direct: Arc<DirectPost>,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.session.url)
            .field("mode", &self.session.mode())
            .finish_non_exhaustive()
    }
}

impl HttpTransport {
    /// A transport to `url` that finds the server's mode by the
    /// specification's backwards-compatibility procedure. Nothing is sent
    /// until the first frame (the `initialize` request) is: it is POSTed; if
    /// the server answers 400, 404 or 405, a GET on the same URL that
    /// announces a legacy `endpoint` switches the transport to HTTP+SSE. The
    /// outcome is cached per URL in `client`, and reported by
    /// [`mode`](Self::mode). The session opens when a client connects over
    /// it.
    pub fn new(client: &HttpClient, url: &str) -> Result<Self, Error> {
        Self::with_authorizer(client, url, None, client.authorizer(url)?)
    }

    /// Streamable HTTP (MCP 2025-03-26 and later) only.
    pub fn streamable(client: &HttpClient, url: &str) -> Result<Self, Error> {
        Self::spawn(client, url, Start::Streamable, client.authorizer(url)?)
    }

    /// The legacy HTTP+SSE transport (MCP 2024-11-05): `url` is the SSE URL.
    pub fn legacy_sse(client: &HttpClient, url: &str) -> Result<Self, Error> {
        Self::spawn(client, url, Start::Legacy, client.authorizer(url)?)
    }

    /// A receive-only SSE stream: every event's data is a frame; its
    /// [`FrameSender`] refuses every frame at once with
    /// [`SendError::NotSupported`](mcpwire_transport::SendError::NotSupported).
    pub fn receive_only_sse(client: &HttpClient, url: &str) -> Result<Self, Error> {
        Self::spawn(client, url, Start::ReceiveOnly, client.authorizer(url)?)
    }

    /// The general form: `mode` (`None`: decided by the server, as
    /// [`new`](Self::new)), and `authorizer` for the credentials of
    /// every request instead of the one `client` keeps for `url` (`None`:
    /// no credentials; a 401 is [`Error::Authorization`]). Keep the
    /// authorizer and give it to every transport made for the server, so
    /// the authorization outlives a reconnection.
    pub fn with_authorizer(
        client: &HttpClient,
        url: &str,
        mode: Option<HttpMode>,
        authorizer: Option<Arc<dyn mcpwire_auth::Authorizer>>,
    ) -> Result<Self, Error> {
        let start = match mode.or_else(|| client.cached_mode(url)) {
            Some(HttpMode::LegacySse) => Start::Legacy,
            Some(HttpMode::ReceiveOnlySse) if mode.is_some() => Start::ReceiveOnly,
            Some(_) => Start::Streamable,
            None => Start::Auto,
        };
        Self::spawn(client, url, start, authorizer)
    }

    fn spawn(
        client: &HttpClient,
        url: &str,
        start: Start,
        authorizer: Option<Arc<dyn mcpwire_auth::Authorizer>>,
    ) -> Result<Self, Error> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| ConnectError::NoRuntime)?;
        let uri = parse_url(url)?;
        let config = client.config();
        let (events, queues) = Events::new(config.read_ahead);
        let (shutdown, shutdown_rx) = watch::channel(false);
        let (done_tx, done) = oneshot::channel();
        let session = Arc::new(SessionState::new(url.to_owned(), start.mode()));
        let driver = Driver::new(
            client.clone(),
            session.clone(),
            uri,
            events,
            authorizer,
            &runtime,
        );
        let direct = driver.direct();
        let (sender, rx) = FrameSender::channel(config.queue_capacity);
        let mut sender = sender
            .max_frame_len(config.max_frame_len)
            .reads_meta()
            .abort_sink(session.clone());
        match start {
            Start::ReceiveOnly => sender = sender.receive_only(),
            // Only Streamable HTTP posts directly; the automatic start
            // does once the probe has settled on it.
            Start::Auto | Start::Streamable => sender = sender.direct_send(direct.clone()),
            Start::Legacy => {}
        }
        let task = runtime.spawn(async move {
            let reason = driver.run(rx, shutdown_rx, start).await;
            let _ = done_tx.send(reason);
        });
        Ok(Self {
            sender,
            grants: Grants::default(),
            queues,
            read_ahead: config.read_ahead,
            done: Some(done),
            reason: None,
            reported: false,
            session,
            shutdown,
            closing: false,
            close_deadline: None,
            close_timeout: config.close_timeout,
            driver: task.abort_handle(),
            direct,
        })
    }

    /// The transport in use; `None` while the automatic fallback has not
    /// decided yet (before the first answer).
    pub fn mode(&self) -> Option<HttpMode> {
        self.session.mode()
    }

    /// The Streamable HTTP session id, once the server assigned one.
    pub fn session_id(&self) -> Option<String> {
        self.session
            .snapshot()
            .session_id
            .and_then(|v| v.to_str().ok().map(str::to_owned))
    }

    /// The protocol version sent in `MCP-Protocol-Version`: captured from the
    /// `initialize` result, or set here by the client after negotiation.
    pub fn protocol_version(&self) -> Option<String> {
        self.session
            .snapshot()
            .protocol_version
            .and_then(|v| v.to_str().ok().map(str::to_owned))
    }

    /// Sets the `MCP-Protocol-Version` header for every later request.
    pub fn set_protocol_version(&self, version: &str) -> Result<(), Error> {
        let value = HeaderValue::from_str(version)
            .map_err(|_| Error::InvalidHeaderValue(version.to_owned()))?;
        self.session.update(|s| s.protocol_version = Some(value));
        Ok(())
    }

    fn poll_done(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(done) = self.done.as_mut() else {
            return Poll::Ready(());
        };
        let reason = std::task::ready!(Pin::new(done).poll(cx));
        self.done = None;
        let reason = reason.unwrap_or_else(|_| {
            if self.closing {
                CloseReason::Local
            } else {
                CloseReason::Error(TransportError::Other(Arc::new(Error::StreamEnded)))
            }
        });
        self.reason.get_or_insert(reason);
        Poll::Ready(())
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        // The driver's own guard does the same once the abort is processed;
        // this closes the window before that for senders still alive.
        self.direct.abandon();
        self.driver.abort();
    }
}

impl Transport for HttpTransport {
    fn sender(&self) -> FrameSender {
        self.sender.clone()
    }

    fn set_active(&mut self, active: Active) {
        self.grants.set(active);
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        if self.reported {
            return Poll::Ready(None);
        }
        // Answers that woke us are read into the queues first.
        self.direct.poll_for_consumer();
        if let Poll::Ready(Some(event)) = self.queues.control.poll_recv(cx) {
            return Poll::Ready(Some(*event));
        }
        if self.grants.any()
            && let Poll::Ready(Some(frame)) = self.queues.frames.poll_recv(cx)
        {
            self.grants.take();
            if let Some(tap) = self.session.tap.get() {
                tap.frame(&Tapped::new(Direction::Received, &frame));
            }
            return Poll::Ready(Some(TransportEvent::Frame(frame)));
        }
        let _ = self.poll_done(cx);
        if let Some(reason) = &self.reason {
            // Frames read before the end are delivered first, as grants
            // allow; a paused consumer with a full read-ahead (or a local
            // close) gets `Closed` at once.
            let buffered = self.queues.frames.len();
            if buffered == 0 || self.closing || (!self.grants.any() && buffered >= self.read_ahead)
            {
                self.reported = true;
                return Poll::Ready(Some(TransportEvent::Closed(reason.clone())));
            }
        }
        self.direct.consumer_waits(cx.waker());
        Poll::Pending
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.closing {
            self.closing = true;
            self.direct.close();
            let _ = self.shutdown.send(true);
            // The driver bounds its own flush and DELETE; this deadline only
            // guards against a driver that fails to.
            self.close_deadline = Some(Box::pin(tokio::time::sleep(
                self.close_timeout + CLOSE_GRACE,
            )));
        }
        if self.poll_done(cx).is_ready() {
            return Poll::Ready(());
        }
        if let Some(deadline) = self.close_deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            self.driver.abort();
            self.done = None;
            self.reason.get_or_insert(CloseReason::Local);
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Taps every frame where its request is built and sent, each attempt
    /// of it (a retry, a resend after an authorization challenge), with
    /// the header fields it went with; received frames as they are
    /// delivered. The first tap set stays.
    fn set_tap(&mut self, tap: Arc<dyn Tap>) -> bool {
        let _ = self.session.tap.set(tap);
        true
    }

    fn info(&self) -> TransportInfo {
        let mode = self.session.mode();
        let mut info = TransportInfo::new(
            mode.map_or("http", HttpMode::kind),
            self.session.url.clone(),
        );
        if let Some(id) = self.session_id() {
            info = info.with_detail("session-id", id);
        }
        if let Some(v) = self.protocol_version() {
            info = info.with_detail("protocol-version", v);
        }
        info
    }
}

/// Parses an absolute `http` or `https` URL.
fn parse_url(url: &str) -> Result<Uri, Error> {
    let uri: Uri = url.parse().map_err(|e| ConnectError::InvalidUrl {
        url: url.to_owned(),
        source: Box::new(e),
    })?;
    match uri.scheme_str() {
        Some("http") | Some("https") => {}
        Some(other) => {
            return Err(ConnectError::UnsupportedScheme {
                scheme: other.to_owned(),
                expected: "http or https",
            }
            .into());
        }
        None => {
            return Err(ConnectError::InvalidUrl {
                url: url.to_owned(),
                source: "the URL is not absolute".into(),
            }
            .into());
        }
    }
    if uri.host().is_none() {
        return Err(ConnectError::InvalidUrl {
            url: url.to_owned(),
            source: "the URL has no host".into(),
        }
        .into());
    }
    Ok(uri)
}
