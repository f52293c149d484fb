//! The legacy HTTP+SSE transport (MCP 2024-11-05) and the receive-only SSE
//! transport: a GET event stream carries every server message; the legacy
//! stream first announces, in an `endpoint` event, where to POST.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{Method, Uri};
use mcpwire_transport::{CloseReason, TransportError};
use tokio::sync::{mpsc, watch};

use crate::client::{media_type, read_body, status_error};
use crate::driver::{Ctx, Driver, Outbound};
use crate::events::SseStep;
use crate::sse::{Cursor, SseReader, get, is_message};
use crate::streamable::{ACCEPT_POST, JSON, post_with_retry};
use crate::{Error, HttpMode};

/// An open legacy event stream and the endpoint it announced.
pub(crate) struct LegacyStream {
    reader: SseReader,
    endpoint: Option<Uri>,
    cursor: Cursor,
}

impl LegacyStream {
    /// GETs the SSE URL and, unless `receive_only`, waits (within the request
    /// timeout) for the `endpoint` event.
    pub(crate) async fn open(ctx: &Ctx) -> Result<LegacyStream, Error> {
        Self::connect(ctx, Cursor::new(ctx), true).await
    }

    async fn connect(ctx: &Ctx, cursor: Cursor, want_endpoint: bool) -> Result<Self, Error> {
        let req = get(ctx, cursor.last_event_id.as_deref());
        let resp = ctx.client.send(req).await?;
        if !resp.status().is_success() {
            return Err(status_error(resp).await);
        }
        let media = media_type(resp.headers());
        if media != "text/event-stream" {
            return Err(Error::UnexpectedContentType(media));
        }
        let mut stream = LegacyStream {
            reader: SseReader::new(resp.into_body(), ctx.client.config().max_frame_len),
            endpoint: None,
            cursor,
        };
        if want_endpoint {
            let timeout = ctx.client.config().request_timeout;
            match tokio::time::timeout(timeout, stream.wait_endpoint(ctx)).await {
                Ok(result) => result?,
                Err(_) => return Err(Error::Endpoint("no endpoint event in time".into())),
            }
        }
        Ok(stream)
    }

    /// Reads until the `endpoint` event. The specification makes it the first
    /// event; anything before it is skipped.
    async fn wait_endpoint(&mut self, ctx: &Ctx) -> Result<(), Error> {
        while let Some(event) = self.reader.next().await {
            let event = event?;
            self.cursor.observe(&event);
            if event.event == "endpoint" {
                self.endpoint = Some(resolve_endpoint(&ctx.url, &event.data)?);
                return Ok(());
            }
            tracing::debug!("skipping an event before the legacy endpoint");
        }
        Err(Error::Endpoint(
            "the stream ended before an endpoint event".into(),
        ))
    }
}

/// Resolves the announced endpoint against the SSE URL; another origin is
/// refused, so messages (and any credentials in custom headers) never go to a
/// host the user did not name.
pub(crate) fn resolve_endpoint(sse: &Uri, data: &[u8]) -> Result<Uri, Error> {
    let text = std::str::from_utf8(data)
        .map_err(|_| Error::Endpoint("the endpoint is not UTF-8".into()))?
        .trim();
    let base = url::Url::parse(&sse.to_string())
        .map_err(|e| Error::Endpoint(format!("bad SSE URL: {e}")))?;
    let joined = base
        .join(text)
        .map_err(|e| Error::Endpoint(format!("bad endpoint {text:?}: {e}")))?;
    if joined.origin() != base.origin() {
        return Err(Error::Endpoint(format!(
            "endpoint {joined} is not on the SSE URL's origin"
        )));
    }
    joined
        .as_str()
        .parse()
        .map_err(|_| Error::Endpoint(format!("bad endpoint {joined}")))
}

impl Driver {
    /// Runs a legacy or receive-only transport until closed or the stream is
    /// lost for good.
    pub(crate) async fn run_legacy(
        mut self,
        mut rx: mpsc::Receiver<Bytes>,
        mut shutdown: watch::Receiver<bool>,
        pending: Option<(Bytes, Box<LegacyStream>)>,
        receive_only: bool,
    ) -> CloseReason {
        let (first, stream) = match pending {
            Some((frame, stream)) => (Some(frame), *stream),
            None => {
                let ctx = self.ctx.clone();
                let open = LegacyStream::connect(&ctx, Cursor::new(&ctx), !receive_only);
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
        self.ctx.shared.set_mode(if receive_only {
            HttpMode::ReceiveOnlySse
        } else {
            HttpMode::LegacySse
        });
        let endpoint = stream.endpoint.clone();
        self.ctx.shared.update(|s| s.endpoint = endpoint);
        // Aborted when the driver ends or is dropped (the transport dropped).
        let mut reader = AbortOnDrop(tokio::spawn(read_legacy(
            self.ctx.clone(),
            stream,
            !receive_only,
        )));
        if let Some(frame) = first {
            self.post_legacy(frame).await;
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
                            _ = self.post_legacy(frame) => {}
                            _ = shutdown.changed() => break,
                        }
                    }
                    None => break,
                },
            }
        }
        rx.close();
        if !receive_only {
            let timeout = self.ctx.client.config().close_timeout;
            let flush = async {
                while let Some(frame) = rx.recv().await {
                    self.post_legacy(frame).await;
                }
            };
            let _ = tokio::time::timeout(timeout, flush).await;
        }
        drop(reader);
        CloseReason::Local
    }

    /// POSTs one frame to the announced endpoint; its answer comes on the
    /// event stream, so only the status matters here.
    async fn post_legacy(&mut self, frame: Bytes) {
        self.ctx.shared.refresh(&mut self.snap);
        let Some(endpoint) = self.snap.endpoint.clone() else {
            let error = Error::Endpoint("no endpoint announced".into());
            self.ctx.events.undelivered(frame, error.into()).await;
            return;
        };
        let mut req = self
            .ctx
            .client
            .request(Method::POST, &endpoint, frame.clone());
        req.headers_mut().insert(ACCEPT, ACCEPT_POST);
        req.headers_mut().insert(CONTENT_TYPE, JSON);
        match post_with_retry(&self.ctx, req, &frame, &Outbound::Other).await {
            Ok(resp) if resp.status().is_success() => {
                // Reading the short acknowledgement lets the connection go
                // back to the pool.
                let config = self.ctx.client.config();
                let _ = read_body(resp.into_body(), 64 << 10, config.request_timeout).await;
            }
            Ok(resp) => {
                let error = status_error(resp).await;
                self.ctx.events.undelivered(frame, error.into()).await;
            }
            Err(e) => self.ctx.events.undelivered(frame, e.into()).await,
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
async fn read_legacy(ctx: Arc<Ctx>, mut stream: LegacyStream, legacy: bool) -> CloseReason {
    loop {
        while let Some(item) = stream.reader.next().await {
            let event = match ctx.events.sse_item(item).await {
                SseStep::Event(event) => event,
                SseStep::Skip => continue,
                SseStep::End => break,
            };
            stream.cursor.observe(&event);
            if legacy && event.event == "endpoint" {
                match resolve_endpoint(&ctx.url, &event.data) {
                    Ok(endpoint) => {
                        if stream.endpoint.as_ref() != Some(&endpoint) {
                            stream.endpoint = Some(endpoint.clone());
                            ctx.shared.update(|s| s.endpoint = Some(endpoint));
                            ctx.events.error(TransportError::SessionExpired).await;
                        }
                    }
                    Err(e) => ctx.events.error(e.into()).await,
                }
                continue;
            }
            if is_message(&event) && !ctx.events.frame(event.data).await {
                return CloseReason::Local;
            }
        }
        // Reconnect under the retry policy, resuming after the last event.
        loop {
            let Some(delay) = stream.cursor.backoff.next_delay(None) else {
                let error = Error::RetriesExhausted(Box::new(Error::StreamEnded));
                return CloseReason::Error(error.into());
            };
            tokio::time::sleep(delay).await;
            let cursor = Cursor {
                last_event_id: stream.cursor.last_event_id.clone(),
                backoff: stream.cursor.backoff.clone(),
            };
            match LegacyStream::connect(&ctx, cursor, false).await {
                Ok(next) => {
                    let endpoint = stream.endpoint.take();
                    stream = next;
                    stream.endpoint = endpoint;
                    break;
                }
                Err(e) => tracing::debug!(error = %e, "legacy SSE reconnect failed"),
            }
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
