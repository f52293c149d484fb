//! The task behind one [`HttpTransport`](crate::HttpTransport), and the one
//! module that knows both modes: it decides which one runs (a configured
//! start, a mode the client remembered, or the automatic fallback's probe)
//! and hands the transport to [`Streamable`] or [`Legacy`].

use std::sync::Arc;

use bytes::Bytes;
use http::Uri;
use mcpwire_transport::{CloseReason, DirectSend as _, Outgoing};
use tokio::sync::{Semaphore, mpsc, watch};

use crate::client::HttpClient;
use crate::context::Link;
use crate::error::Error;
use crate::events::Events;
use crate::legacy::{Legacy, LegacyStream};
use crate::mode::HttpMode;
use crate::outbound::Outbound;
use crate::request::{Build, send_with_retry};
use crate::response::{rpc_error_answer, status_error};
use crate::session::{SessionSnapshot, SessionState};
use crate::streamable::{DirectPost, Streamable, settle_mode};

/// How a transport starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// Probe with the first POST; if `initialize` is refused with 400, 404
    /// or 405, fall back to legacy SSE.
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
    Streamable(Option<(http::Response<crate::demand::ResponseBody>, Bytes, Outbound)>),
    /// The server speaks HTTP+SSE: its stream is open and `frame` still has
    /// to be sent.
    Legacy(Bytes, Box<LegacyStream>),
    /// The frame was refused, but it was not `initialize`: the server may
    /// still speak either transport, and the next frame decides.
    Undecided,
}

/// The task behind one transport, before it knows its mode.
pub(crate) struct Driver {
    link: Arc<Link>,
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
        session: Arc<SessionState>,
        url: Uri,
        events: Events,
        auth: Option<Arc<dyn mcpwire_auth::Authorizer>>,
        runtime: &tokio::runtime::Handle,
    ) -> Self {
        let in_flight = Arc::new(Semaphore::new(client.config().max_in_flight));
        let link = Arc::new(Link {
            client,
            session,
            url,
            events,
            auth,
        });
        let direct = Arc::new(DirectPost::new(link.clone(), in_flight.clone(), runtime));
        Self {
            link,
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
        mut rx: mpsc::Receiver<Outgoing>,
        mut shutdown: watch::Receiver<bool>,
        start: Start,
    ) -> CloseReason {
        let mut streamable = Streamable::new(
            self.link.clone(),
            self.in_flight.clone(),
            self.direct.clone(),
        );
        match start {
            Start::Streamable => streamable.run(rx, shutdown, None).await,
            Start::Legacy => {
                let legacy = Legacy::new(self.link.clone(), HttpMode::LegacySse);
                Box::pin(legacy.run(rx, shutdown, None)).await
            }
            Start::ReceiveOnly => {
                let legacy = Legacy::new(self.link.clone(), HttpMode::ReceiveOnlySse);
                Box::pin(legacy.run(rx, shutdown, None)).await
            }
            Start::Auto => {
                // Frames taken from the queue but not yet handed on (and so
                // still counted as queued).
                let mut next: Option<Outgoing> = None;
                loop {
                    let first = match next.take() {
                        Some(frame) => Some(frame),
                        None => tokio::select! {
                            frame = rx.recv() => frame,
                            _ = shutdown.changed() => None,
                        },
                    };
                    let Some(first) = first else {
                        return CloseReason::Local;
                    };
                    // The probe is handed on here, not in the mode's loop.
                    self.direct.unqueue();
                    // Boxed: the probe is over before the session idles.
                    let mut probe = Box::pin(self.probe(first.clone()));
                    let outcome = if Outbound::of(&first).is_initialize() {
                        probe.await
                    } else {
                        // A request before the handshake (the era probe's
                        // `server/discover`) may go unanswered: the caller
                        // then gives up on it and sends `initialize`, which
                        // must not wait behind it. Any other frame waits for
                        // the probe's outcome.
                        tokio::select! {
                            outcome = &mut probe => outcome,
                            frame = rx.recv() => match frame {
                                Some(frame) if Outbound::of(&frame).is_initialize() => {
                                    tracing::debug!(url = %self.link.url, "initialize sent while the first request waits: that request is abandoned");
                                    drop(probe);
                                    next = Some(frame);
                                    continue;
                                }
                                Some(frame) => {
                                    next = Some(frame);
                                    probe.await
                                }
                                None => probe.await,
                            },
                            _ = shutdown.changed() => return CloseReason::Local,
                        }
                    };
                    match outcome {
                        Probe::Undecided => {}
                        Probe::Streamable(answer) => {
                            if let Some((resp, frame, kind)) = answer {
                                streamable.adopt(resp, frame, kind);
                            }
                            return streamable.run(rx, shutdown, next).await;
                        }
                        Probe::Legacy(frame, stream) => {
                            let legacy = Legacy::new(self.link.clone(), HttpMode::LegacySse);
                            return Box::pin(legacy.run(rx, shutdown, Some((frame, stream)))).await;
                        }
                    }
                }
            }
        }
    }

    /// The automatic fallback's step for one frame: POST it as Streamable
    /// HTTP. A refusal of `initialize` (400, 404 or 405) sends the client
    /// looking for a legacy `endpoint` event on a GET of the same URL; a
    /// refusal of anything before it (any error status but 401 and 403: the
    /// stateless era's `server/discover` at a server of the `initialize`
    /// era) is that request's answer, and the next frame decides.
    async fn probe(&self, frame: Outgoing) -> Probe {
        let link = &self.link;
        let kind = Outbound::of(&frame);
        let frame = frame.frame;
        let build = Build::Post {
            frame: &frame,
            kind: &kind,
        };
        let req = build.request(link, &SessionSnapshot::default());
        let resp = match send_with_retry(link, build, req).await {
            Ok(resp) => resp,
            Err(e) => {
                link.events.undelivered(frame, e.into()).await;
                return Probe::Streamable(None);
            }
        };
        let status = resp.status().as_u16();
        let initialize = kind.is_initialize();
        let refused = if initialize {
            matches!(status, 400 | 404 | 405)
        } else {
            status >= 400 && !matches!(status, 401 | 403)
        };
        if !refused {
            return Probe::Streamable(Some((resp, frame, kind)));
        }
        let original = status_error(resp).await;
        // A JSON-RPC error for the frame is a Streamable HTTP server of the
        // stateless revision refusing it (an unsupported version, say): its
        // answer, and no reason to look further.
        if let Outbound::Request { id, .. } = &kind
            && let Some(body) = rpc_error_answer(&original, id)
        {
            settle_mode(link);
            link.events.frame(body).await;
            return Probe::Streamable(None);
        }
        if !initialize {
            tracing::debug!(url = %link.url, status, "a request before initialize was refused: the next frame decides the transport");
            link.events.undelivered(frame, original.into()).await;
            return Probe::Undecided;
        }
        match LegacyStream::open(link).await {
            Ok(stream) => {
                tracing::debug!(url = %link.url, "falling back to HTTP+SSE");
                link.session.set_mode(HttpMode::LegacySse);
                link.client
                    .remember_mode(&link.session.url, HttpMode::LegacySse);
                Probe::Legacy(frame, Box::new(stream))
            }
            Err(legacy) => {
                tracing::debug!(error = %legacy, "no legacy SSE endpoint either");
                let error = Error::NoEndpoint {
                    status,
                    post: Box::new(original),
                    legacy: Box::new(legacy),
                };
                link.events.undelivered(frame, error.into()).await;
                Probe::Streamable(None)
            }
        }
    }
}
