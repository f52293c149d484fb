//! The task behind one [`HttpTransport`](crate::HttpTransport), and the one
//! module that knows both modes: it decides which one runs (a configured
//! start, a mode the client remembered, or the automatic fallback's probe)
//! and hands the transport to [`Streamable`] or [`Legacy`].

use std::sync::Arc;

use bytes::Bytes;
use http::Uri;
use mcpwire_transport::{CloseReason, DirectSend as _};
use tokio::sync::{Semaphore, mpsc, watch};

use crate::client::HttpClient;
use crate::context::Ctx;
use crate::events::Events;
use crate::legacy::{Legacy, LegacyStream};
use crate::mode::HttpMode;
use crate::outbound::Outbound;
use crate::request::{Build, send_with_retry};
use crate::response::{rpc_error_answer, status_error};
use crate::session::{SessionSnapshot, Shared};
use crate::streamable::{DirectPost, Streamable, settle_mode};

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

/// What the automatic fallback's probe found.
enum Probe {
    /// The server speaks Streamable HTTP (or failed in a way that says
    /// nothing about legacy support): stay, and handle this answer, if the
    /// POST got one.
    Streamable(Option<(http::Response<hyper::body::Incoming>, Bytes, Outbound)>),
    /// The server speaks HTTP+SSE: its stream is open and `frame` still has
    /// to be sent.
    Legacy(Bytes, Box<LegacyStream>),
}

/// The task behind one transport, before it knows its mode.
pub(crate) struct Driver {
    ctx: Arc<Ctx>,
    in_flight: Arc<Semaphore>,
    /// The requests in flight, shared with the senders that post directly.
    direct: Arc<DirectPost>,
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
        auth: Option<Arc<dyn mcpwire_auth::Authorizer>>,
        runtime: &tokio::runtime::Handle,
    ) -> Self {
        let in_flight = Arc::new(Semaphore::new(client.config().max_in_flight));
        let ctx = Arc::new(Ctx {
            client,
            shared,
            url,
            events,
            auth,
        });
        let direct = Arc::new(DirectPost::new(ctx.clone(), in_flight.clone(), runtime));
        Self {
            ctx,
            in_flight,
            direct: direct.clone(),
            _abandon: Abandon(direct),
        }
    }

    /// The hook a [`FrameSender`](mcpwire_transport::FrameSender) offers
    /// requests to (Streamable HTTP only).
    pub(crate) fn direct(&self) -> Arc<DirectPost> {
        self.direct.clone()
    }

    /// Runs the transport in the mode `start` says, or the one the probe
    /// finds, until it closes.
    pub(crate) async fn run(
        self,
        mut rx: mpsc::Receiver<Bytes>,
        mut shutdown: watch::Receiver<bool>,
        start: Start,
    ) -> CloseReason {
        let mut streamable = Streamable::new(
            self.ctx.clone(),
            self.in_flight.clone(),
            self.direct.clone(),
        );
        match start {
            Start::Streamable => streamable.run(rx, shutdown).await,
            Start::Legacy => {
                let legacy = Legacy::new(self.ctx.clone(), HttpMode::LegacySse);
                Box::pin(legacy.run(rx, shutdown, None)).await
            }
            Start::ReceiveOnly => {
                let legacy = Legacy::new(self.ctx.clone(), HttpMode::ReceiveOnlySse);
                Box::pin(legacy.run(rx, shutdown, None)).await
            }
            Start::Auto => {
                // The first frame decides the transport; nothing else is
                // sent before it is answered.
                let first = tokio::select! {
                    frame = rx.recv() => frame,
                    _ = shutdown.changed() => None,
                };
                let Some(first) = first else {
                    return CloseReason::Local;
                };
                // The probe is handed on here, not in the mode's loop.
                self.direct.unqueue();
                // Boxed: the probe is over before the session idles.
                match Box::pin(self.probe(first)).await {
                    Probe::Streamable(answer) => {
                        if let Some((resp, frame, kind)) = answer {
                            streamable.adopt(resp, frame, kind);
                        }
                        streamable.run(rx, shutdown).await
                    }
                    Probe::Legacy(frame, stream) => {
                        let legacy = Legacy::new(self.ctx.clone(), HttpMode::LegacySse);
                        Box::pin(legacy.run(rx, shutdown, Some((frame, stream)))).await
                    }
                }
            }
        }
    }

    /// The automatic fallback's first step: POST the first frame as
    /// Streamable HTTP; on 400, 404 or 405, look for a legacy `endpoint`
    /// event on a GET of the same URL.
    async fn probe(&self, frame: Bytes) -> Probe {
        let ctx = &self.ctx;
        let kind = ctx.shared.metas.classify(&frame);
        let build = Build::Post {
            frame: &frame,
            kind: &kind,
        };
        let req = build.request(ctx, &SessionSnapshot::default());
        let resp = match send_with_retry(ctx, build, req).await {
            Ok(resp) => resp,
            Err(e) => {
                ctx.events.undelivered(frame, e.into()).await;
                return Probe::Streamable(None);
            }
        };
        if !matches!(resp.status().as_u16(), 400 | 404 | 405) {
            return Probe::Streamable(Some((resp, frame, kind)));
        }
        let original = status_error(resp).await;
        // A JSON-RPC error for the probe is a Streamable HTTP server of the
        // stateless revision refusing it (an unsupported version, say): its
        // answer, and no reason to look for a legacy stream.
        if let Outbound::Request { id, .. } = &kind
            && let Some(body) = rpc_error_answer(&original, id)
        {
            settle_mode(ctx);
            ctx.events.frame(body).await;
            return Probe::Streamable(None);
        }
        match LegacyStream::open(ctx).await {
            Ok(stream) => {
                tracing::debug!(url = %ctx.url, "falling back to HTTP+SSE");
                ctx.shared.set_mode(HttpMode::LegacySse);
                ctx.client
                    .remember_mode(&ctx.shared.url, HttpMode::LegacySse);
                Probe::Legacy(frame, Box::new(stream))
            }
            Err(e) => {
                tracing::debug!(error = %e, "no legacy SSE endpoint either");
                ctx.events.undelivered(frame, original.into()).await;
                Probe::Streamable(None)
            }
        }
    }
}
