use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use http::Uri;
use mcpwire_transport::CloseReason;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::direct::DirectPost;
use crate::events::Events;
pub(crate) use crate::outbound::Outbound;
use crate::session::{SessionSnapshot, Shared};
use crate::streamable::Probe;
use crate::{Error, HttpClient, HttpMode};
use mcpwire_transport::DirectSend as _;

/// How a transport starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// Probe with the first POST, fall back to legacy SSE on 400/404/405.
    Auto,
    Streamable,
    Legacy,
    ReceiveOnly,
}

impl Start {
    pub(crate) fn mode(self) -> Option<HttpMode> {
        match self {
            Start::Auto => None,
            Start::Streamable => Some(HttpMode::StreamableHttp),
            Start::Legacy => Some(HttpMode::LegacySse),
            Start::ReceiveOnly => Some(HttpMode::ReceiveOnlySse),
        }
    }
}

/// Everything a driver's tasks share.
pub(crate) struct Ctx {
    pub(crate) client: HttpClient,
    pub(crate) shared: Arc<Shared>,
    pub(crate) url: Uri,
    pub(crate) events: Events,
}

/// One request's exchange (its POST, then its JSON or SSE answer), polled by
/// the driver task itself.
pub(crate) type Exchange = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The requests in flight. The driver polls them in its own task rather than
/// spawning a task per request: a spawned task costs a scheduling and, when
/// it ends, a wake-up of the driver (the `JoinSet`), on every request. Here
/// hyper's connection task wakes the driver once when the answer is in.
pub(crate) type InFlight = FuturesUnordered<Exchange>;

/// Polls the requests in flight forever (pending once there are none), so it
/// can run beside whatever the driver is waiting for.
pub(crate) async fn drive(requests: &mut InFlight) {
    loop {
        if requests.next().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}

/// The task behind one [`HttpTransport`](crate::HttpTransport).
pub(crate) struct Driver {
    pub(crate) ctx: Arc<Ctx>,
    pub(crate) tasks: JoinSet<()>,
    pub(crate) snap: SessionSnapshot,
    pub(crate) listener: Option<tokio::task::AbortHandle>,
    pub(crate) in_flight: Arc<tokio::sync::Semaphore>,
    /// The requests in flight, shared with the senders that post directly.
    pub(crate) direct: Arc<DirectPost>,
    /// Drops the requests in flight however the driver ends (an aborted
    /// task included), so a sender cannot keep them, or start new ones.
    _abandon: Abandon,
}

struct Abandon(Arc<DirectPost>);

impl Drop for Abandon {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

impl Driver {
    pub(crate) fn new(
        client: HttpClient,
        shared: Arc<Shared>,
        url: Uri,
        events: Events,
        runtime: &tokio::runtime::Handle,
    ) -> Self {
        let in_flight = Arc::new(tokio::sync::Semaphore::new(client.config().max_in_flight));
        let ctx = Arc::new(Ctx {
            client,
            shared,
            url,
            events,
        });
        let direct = Arc::new(DirectPost::new(ctx.clone(), in_flight.clone(), runtime));
        Self {
            in_flight,
            ctx,
            tasks: JoinSet::new(),
            snap: SessionSnapshot::default(),
            listener: None,
            direct: direct.clone(),
            _abandon: Abandon(direct),
        }
    }

    pub(crate) async fn run(
        mut self,
        mut rx: mpsc::Receiver<Bytes>,
        mut shutdown: watch::Receiver<bool>,
        start: Start,
    ) -> CloseReason {
        let mut pending = None;
        if start == Start::Auto {
            // The first frame decides the transport; nothing else is sent
            // before it is answered.
            let first = tokio::select! {
                frame = rx.recv() => frame,
                _ = shutdown.changed() => None,
            };
            let Some(first) = first else {
                return CloseReason::Local;
            };
            // The probe is handed on here, not in the loop below.
            self.direct.unqueue();
            if let Probe::Legacy(frame, stream) = self.probe(first).await {
                pending = Some((frame, stream));
            }
        }
        if matches!(start, Start::Legacy | Start::ReceiveOnly) || pending.is_some() {
            let receive_only = start == Start::ReceiveOnly;
            return self.run_legacy(rx, shutdown, pending, receive_only).await;
        }
        // Requests in flight live in `direct`, where senders may add
        // theirs; polling it (first in the loop) also gives them the
        // driver's waker.
        let direct = self.direct.clone();
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
                        let exchange = tokio::select! {
                            exchange = self.send_streamable(frame) => exchange,
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
        self.close_streamable(rx).await;
        CloseReason::Local
    }
}

/// Parses an absolute `http` or `https` URL.
pub(crate) fn parse_url(url: &str) -> Result<Uri, Error> {
    let uri: Uri = url.parse().map_err(|e| Error::InvalidUrl {
        url: url.to_owned(),
        source: Box::new(e),
    })?;
    match uri.scheme_str() {
        Some("http") | Some("https") => {}
        Some(other) => return Err(Error::UnsupportedScheme(other.to_owned())),
        None => {
            return Err(Error::InvalidUrl {
                url: url.to_owned(),
                source: "the URL is not absolute".into(),
            });
        }
    }
    if uri.host().is_none() {
        return Err(Error::InvalidUrl {
            url: url.to_owned(),
            source: "the URL has no host".into(),
        });
    }
    Ok(uri)
}
