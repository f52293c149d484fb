//! The legacy HTTP+SSE transport (MCP 2024-11-05) and the receive-only SSE
//! transport: a GET event stream carries every server message; the legacy
//! stream first announces, in an `endpoint` event, where to POST. This
//! module owns both modes' state ([`Legacy`]) and loop.

use std::sync::Arc;

use bytes::Bytes;
use http::Uri;
use mcpwire_transport::{CloseReason, Outgoing, TransportError};
use tokio::sync::{mpsc, watch};

use crate::context::Link;
use crate::error::{BoxError, EndpointError, Error};
use crate::mode::HttpMode;
use crate::request::{Build, send_with_retry};
use crate::response::{read_body, status_error};
use crate::retry::Attempt;
use crate::session::SessionSnapshot;
use crate::sse::{self, Cursor, SseReader, is_message};

/// Whether a stream being opened must announce its endpoint first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Announce {
    /// Legacy HTTP+SSE: wait for the `endpoint` event.
    Endpoint,
    /// Receive-only, or a reconnect: read messages at once.
    Nothing,
}

/// An open legacy event stream and the endpoint it announced.
pub(crate) struct LegacyStream {
    reader: SseReader,
    endpoint: Option<Uri>,
    cursor: Cursor,
}

/// How long an opened legacy stream may take to announce its endpoint. The
/// specification makes it the first event, which servers send at once; a
/// stream that says nothing is not a legacy MCP server (a Streamable HTTP
/// server's GET stream, say), and the wait must not hold up the connection.
pub(crate) const ENDPOINT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The most read of a POST's acknowledgement (a legacy server answers on
/// the event stream; the POST's own body is a short "Accepted"): enough
/// for any such body, and a bound on a server that sends more.
const MAX_ACK_LEN: usize = 64 << 10;

impl LegacyStream {
    /// GETs the SSE URL and waits (at most [`ENDPOINT_WAIT`], and within
    /// the request timeout) for the `endpoint` event.
    pub(crate) async fn open(link: &Link) -> Result<LegacyStream, Error> {
        Self::connect(link, Cursor::new(link), Announce::Endpoint).await
    }

    async fn connect(link: &Link, cursor: Cursor, announce: Announce) -> Result<Self, Error> {
        let reader = sse::open(link, cursor.last_event_id.as_deref()).await?;
        let mut stream = LegacyStream {
            reader,
            endpoint: None,
            cursor,
        };
        if announce == Announce::Endpoint {
            let timeout = link.client.config().request_timeout.min(ENDPOINT_WAIT);
            match tokio::time::timeout(timeout, stream.wait_endpoint(link)).await {
                Ok(result) => result?,
                Err(_) => return Err(EndpointError::NotInTime(timeout).into()),
            }
        }
        Ok(stream)
    }

    /// Reads until the `endpoint` event. The specification makes it the first
    /// event; anything before it is skipped.
    async fn wait_endpoint(&mut self, link: &Link) -> Result<(), Error> {
        while let Some(event) = self.reader.next().await {
            let event = event?;
            self.cursor.observe(&event);
            if event.event == "endpoint" {
                self.endpoint = Some(resolve_endpoint(&link.url, &event.data)?);
                return Ok(());
            }
            tracing::debug!("skipping an event before the legacy endpoint");
        }
        Err(EndpointError::StreamEnded.into())
    }
}

/// Resolves the announced endpoint against the SSE URL; another origin is
/// refused, so messages (and any credentials in custom headers) never go to a
/// host the user did not name.
pub(crate) fn resolve_endpoint(sse: &Uri, data: &[u8]) -> Result<Uri, EndpointError> {
    let text = std::str::from_utf8(data)
        .map_err(EndpointError::NotUtf8)?
        .trim();
    let invalid = |source: BoxError| EndpointError::Invalid {
        endpoint: text.to_owned(),
        source,
    };
    let base = url::Url::parse(&sse.to_string()).map_err(|e| invalid(Box::new(e)))?;
    let joined = base.join(text).map_err(|e| invalid(Box::new(e)))?;
    if joined.origin() != base.origin() {
        return Err(EndpointError::OtherOrigin {
            endpoint: joined.to_string(),
        });
    }
    joined
        .as_str()
        .parse()
        .map_err(|e: http::uri::InvalidUri| invalid(Box::new(e)))
}

/// A legacy or receive-only SSE transport's state, owned by its driver task.
pub(crate) struct Legacy {
    link: Arc<Link>,
    /// [`HttpMode::LegacySse`] or [`HttpMode::ReceiveOnlySse`].
    mode: HttpMode,
    snap: SessionSnapshot,
}

impl Legacy {
    /// `mode` is [`HttpMode::LegacySse`] or [`HttpMode::ReceiveOnlySse`].
    pub(crate) fn new(link: Arc<Link>, mode: HttpMode) -> Self {
        Self {
            link,
            mode,
            snap: SessionSnapshot::default(),
        }
    }

    /// Runs the transport until closed or the stream is lost for good.
    /// `pending` is a stream the automatic fallback opened and the frame it
    /// has still to post there.
    pub(crate) async fn run(
        mut self,
        mut rx: mpsc::Receiver<Outgoing>,
        mut shutdown: watch::Receiver<bool>,
        pending: Option<(Bytes, Box<LegacyStream>)>,
    ) -> CloseReason {
        let receive_only = self.mode == HttpMode::ReceiveOnlySse;
        let announce = if receive_only {
            Announce::Nothing
        } else {
            Announce::Endpoint
        };
        let (first, stream) = match pending {
            Some((frame, stream)) => (Some(frame), *stream),
            None => {
                let link = self.link.clone();
                let open = LegacyStream::connect(&link, Cursor::new(&link), announce);
                let opened = tokio::select! {
                    opened = open => opened,
                    _ = shutdown.changed() => return CloseReason::Local,
                };
                match opened {
                    Ok(stream) => (None, stream),
                    Err(e) => return CloseReason::Error(e.into()),
                }
            }
        };
        self.link.session.set_mode(self.mode);
        let endpoint = stream.endpoint.clone();
        self.link.session.update(|s| s.endpoint = endpoint);
        // Aborted when the driver ends or is dropped (the transport dropped).
        let mut reader = AbortOnDrop(tokio::spawn(read_stream(
            self.link.clone(),
            stream,
            announce,
        )));
        if let Some(frame) = first {
            self.post(frame).await;
        }
        loop {
            tokio::select! {
                biased;
                _ = shutdown.changed() => break,
                reason = &mut reader.0 => {
                    return reason.unwrap_or(CloseReason::Local);
                }
                frame = rx.recv() => match frame {
                    Some(frame) => {
                        tokio::select! {
                            _ = self.post(frame.frame) => {}
                            _ = shutdown.changed() => break,
                        }
                    }
                    None => break,
                },
            }
        }
        rx.close();
        if !receive_only {
            let timeout = self.link.client.config().close_timeout;
            let flush = async {
                while let Some(frame) = rx.recv().await {
                    self.post(frame.frame).await;
                }
            };
            let _ = tokio::time::timeout(timeout, flush).await;
        }
        drop(reader);
        CloseReason::Local
    }

    /// POSTs one frame to the announced endpoint; its answer comes on the
    /// event stream, so only the status matters here.
    async fn post(&mut self, frame: Bytes) {
        self.link.session.refresh(&mut self.snap);
        let Some(endpoint) = self.snap.endpoint.clone() else {
            let error = Error::from(EndpointError::NotAnnounced);
            self.link.events.undelivered(frame, error.into()).await;
            return;
        };
        let build = Build::LegacyPost {
            endpoint: &endpoint,
            frame: &frame,
        };
        let req = build.request(&self.link, &self.snap);
        match send_with_retry(&self.link, build, req).await {
            Ok(resp) if resp.status().is_success() => {
                // Reading the short acknowledgement lets the connection go
                // back to the pool.
                let config = self.link.client.config();
                let _ = read_body(resp.into_body(), MAX_ACK_LEN, config.request_timeout).await;
            }
            Ok(resp) => {
                let error = status_error(resp).await;
                self.link.events.undelivered(frame, error.into()).await;
            }
            Err(e) => self.link.events.undelivered(frame, e.into()).await,
        }
    }
}

/// A task handle that aborts its task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Delivers the stream's messages, reconnecting under the retry policy. A
/// new `endpoint` after a reconnect means the server started a new session:
/// it is reported as [`TransportError::SessionExpired`] so the client can
/// initialize again.
async fn read_stream(link: Arc<Link>, mut stream: LegacyStream, announce: Announce) -> CloseReason {
    loop {
        while let Some(event) = stream.reader.next_observed(&link, &mut stream.cursor).await {
            if announce == Announce::Endpoint && event.event == "endpoint" {
                match resolve_endpoint(&link.url, &event.data) {
                    Ok(endpoint) => {
                        if stream.endpoint.as_ref() != Some(&endpoint) {
                            stream.endpoint = Some(endpoint.clone());
                            link.session.update(|s| s.endpoint = Some(endpoint));
                            link.events.error(TransportError::SessionExpired).await;
                        }
                    }
                    Err(e) => link.events.error(Error::from(e).into()).await,
                }
                continue;
            }
            if is_message(&event) && !link.events.frame(event.data).await {
                return CloseReason::Local;
            }
        }
        // Reconnect under the retry policy, resuming after the last event.
        let last_event_id = stream.cursor.last_event_id.as_deref();
        let reconnected = stream
            .cursor
            .backoff
            .retry(Attempt::after_an_end(), || reconnect(&link, last_event_id))
            .await;
        match reconnected {
            Ok(mut next) => {
                // The budget goes on where this stream's left it: only a
                // message is progress.
                next.cursor.backoff = stream.cursor.backoff.clone();
                next.endpoint = stream.endpoint.take();
                stream = next;
            }
            Err(_) => {
                let error = Error::RetriesExhausted(Box::new(Error::StreamEnded));
                return CloseReason::Error(error.into());
            }
        }
    }
}

/// One attempt to reopen the legacy event stream after `last_event_id`.
async fn reconnect(link: &Link, last_event_id: Option<&str>) -> Attempt<LegacyStream> {
    let cursor = Cursor {
        last_event_id: last_event_id.map(str::to_owned),
        backoff: link.client.config().retry.backoff(),
    };
    match LegacyStream::connect(link, cursor, Announce::Nothing).await {
        Ok(next) => Attempt::Done(next),
        Err(e) => {
            tracing::debug!(error = %e, "legacy SSE reconnect failed");
            Attempt::after_an_end()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_relative_and_stay_on_origin() {
        let sse: Uri = "http://127.0.0.1:8080/mcp/sse".parse().unwrap();
        let e = resolve_endpoint(&sse, b"/messages?sessionId=abc").unwrap();
        assert_eq!(
            e.to_string(),
            "http://127.0.0.1:8080/messages?sessionId=abc"
        );
        let e = resolve_endpoint(&sse, b"messages/?session_id=1").unwrap();
        assert_eq!(
            e.to_string(),
            "http://127.0.0.1:8080/mcp/messages/?session_id=1"
        );
        assert!(resolve_endpoint(&sse, b"http://evil.example/messages").is_err());
        assert!(resolve_endpoint(&sse, b"https://127.0.0.1:8080/messages").is_err());
    }
}
