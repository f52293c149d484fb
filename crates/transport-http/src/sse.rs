//! Reading SSE response bodies: answers to POSTs, the GET stream, and their
//! resumption with `Last-Event-ID` under the shared retry policy.

use bytes::{Bytes, BytesMut};
use http::Method;
use http::header::ACCEPT;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use mcpwire_codec::jsonrpc::Id;
use mcpwire_codec::{SseDecoder, SseEvent};
use mcpwire_transport::TransportError;

use crate::Error;
use crate::client::{media_type, retry_after, status_error};
use crate::driver::Ctx;
use crate::events::SseStep;
use crate::outbound::answers;
use crate::retry::Backoff;
use crate::streamable::{
    ACCEPT_SSE, LAST_EVENT_ID, MCP_SESSION_ID, capture_protocol_version, is_busy, session_headers,
};

/// The events of one SSE body. The body is polled only when the next event is
/// asked for, so a consumer that stops asking stops the reading.
pub(crate) struct SseReader {
    body: Incoming,
    decoder: SseDecoder,
    buf: BytesMut,
    eof: bool,
}

impl SseReader {
    pub(crate) fn new(body: Incoming, max_frame_len: usize) -> Self {
        Self {
            body,
            // Room for field names and an id around a maximal message.
            decoder: SseDecoder::with_max_event_len(max_frame_len.saturating_add(64 << 10)),
            buf: BytesMut::new(),
            eof: false,
        }
    }

    /// The next event; `None` at the end of the body.
    pub(crate) async fn next(&mut self) -> Option<Result<SseEvent, Error>> {
        loop {
            match self.decoder.decode(&mut self.buf) {
                Ok(Some(event)) => return Some(Ok(event)),
                Ok(None) => {}
                // The decoder has dropped the oversized event and goes on.
                Err(e) => return Some(Err(Error::Sse(e))),
            }
            if self.eof {
                // An event cut off by the end of the body is dropped, as the
                // event-stream rules ask; a complete last event is kept.
                return match self.decoder.decode_eof(&mut self.buf) {
                    Ok(Some(event)) => Some(Ok(event)),
                    Ok(None) => None,
                    Err(e) => {
                        tracing::debug!(error = %e, "SSE body ended inside an event");
                        None
                    }
                };
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buf.extend_from_slice(&data);
                    }
                }
                Some(Err(e)) => {
                    self.eof = true;
                    return Some(Err(Error::Request(Box::new(e))));
                }
                None => self.eof = true,
            }
        }
    }
}

/// One stream's resumption state: the last event id, and its backoff.
pub(crate) struct Cursor {
    pub(crate) last_event_id: Option<String>,
    pub(crate) backoff: Backoff,
}

impl Cursor {
    pub(crate) fn new(ctx: &Ctx) -> Self {
        Self {
            last_event_id: None,
            backoff: ctx.client.config().retry.backoff(),
        }
    }

    /// Records an event's id and `retry:`; a message is progress, a priming
    /// event (an id with empty data) is not.
    pub(crate) fn observe(&mut self, event: &SseEvent) {
        match event.id.as_deref() {
            // An empty id resets the last event id.
            Some("") => self.last_event_id = None,
            Some(id) => self.last_event_id = Some(id.to_owned()),
            None => {}
        }
        if let Some(retry) = event.retry {
            self.backoff.server_retry(retry);
        }
        if is_message(event) {
            self.backoff.progress();
        }
    }
}

/// An event carrying a JSON-RPC message: type `message` (the default) with
/// data. A priming event (an id and empty data) is not one.
pub(crate) fn is_message(event: &SseEvent) -> bool {
    event.event == "message" && !event.data.is_empty()
}

/// Delivers the messages of an SSE answer to a POST. If the stream breaks
/// before the response to `id`, it is resumed with a GET carrying
/// `Last-Event-ID` (a disconnect is not a cancellation). If it cannot be
/// resumed, `frame` is reported undelivered. True if the response arrived.
pub(crate) async fn answer_stream(
    ctx: &Ctx,
    body: Incoming,
    frame: Bytes,
    id: Option<Id>,
    initialize: bool,
) -> bool {
    let max = ctx.client.config().max_frame_len;
    let mut reader = SseReader::new(body, max);
    let mut cursor = Cursor::new(ctx);
    let mut answered = false;
    loop {
        while let Some(item) = reader.next().await {
            let event = match ctx.events.sse_item(item).await {
                SseStep::Event(event) => event,
                SseStep::Skip => continue,
                SseStep::End => break,
            };
            cursor.observe(&event);
            if !is_message(&event) {
                continue;
            }
            let data = event.data;
            let ours = !answered && id.as_ref().is_some_and(|id| answers(&data, id));
            if ours && initialize {
                capture_protocol_version(ctx, &data);
            }
            if !ctx.events.frame(data).await {
                return answered;
            }
            answered |= ours;
        }
        if answered || id.is_none() {
            return answered;
        }
        if cursor.last_event_id.is_none() {
            ctx.events
                .undelivered(frame, Error::StreamEnded.into())
                .await;
            return false;
        }
        match resume(ctx, &mut cursor).await {
            Ok(next) => reader = next,
            Err(e) => {
                ctx.events.undelivered(frame, e).await;
                return false;
            }
        }
    }
}

/// Reopens a stream with `GET` and `Last-Event-ID`, under the retry policy.
async fn resume(ctx: &Ctx, cursor: &mut Cursor) -> Result<SseReader, TransportError> {
    let mut floor = None;
    let mut last_error = Error::StreamEnded;
    loop {
        let Some(delay) = cursor.backoff.next_delay(floor.take()) else {
            return Err(Error::RetriesExhausted(Box::new(last_error)).into());
        };
        tokio::time::sleep(delay).await;
        let req = get(ctx, cursor.last_event_id.as_deref());
        let had_session = req.headers().contains_key(MCP_SESSION_ID);
        let resp = match ctx.client.send(req).await {
            Ok(resp) => resp,
            Err(e) => {
                last_error = e;
                continue;
            }
        };
        let status = resp.status();
        if status.is_success() {
            let media = media_type(resp.headers());
            if media != "text/event-stream" {
                return Err(Error::UnexpectedContentType(media).into());
            }
            return Ok(SseReader::new(
                resp.into_body(),
                ctx.client.config().max_frame_len,
            ));
        }
        if status == http::StatusCode::NOT_FOUND && had_session {
            ctx.shared.update(|s| {
                s.session_id = None;
                s.protocol_version = None;
            });
            return Err(TransportError::SessionExpired);
        }
        if is_busy(status) {
            floor = retry_after(resp.headers());
        }
        let retryable = is_busy(status) || status.is_server_error() || status.as_u16() == 409;
        last_error = status_error(resp).await;
        if !retryable {
            return Err(last_error.into());
        }
    }
}

/// A `GET` for an SSE stream on the MCP endpoint.
pub(crate) fn get(
    ctx: &Ctx,
    last_event_id: Option<&str>,
) -> http::Request<http_body_util::Full<Bytes>> {
    let mut req = ctx.client.request(Method::GET, &ctx.url, Bytes::new());
    let headers = req.headers_mut();
    headers.insert(ACCEPT, ACCEPT_SSE);
    session_headers(headers, &ctx.shared.snapshot());
    if let Some(value) = last_event_id.and_then(|id| http::HeaderValue::from_str(id).ok()) {
        headers.insert(LAST_EVENT_ID, value);
    }
    req
}

/// The GET stream for server-initiated messages. 405, 404 and 406 mean the
/// server offers none: it ends quietly. 409 (a stream is already open for the
/// session), 429/503 and broken or gracefully closed streams are retried under
/// the retry policy, resuming with `Last-Event-ID`; a budget spent is reported
/// as a non-fatal error. Request traffic is never affected. `answered`, if
/// given, is told when the first `GET` has its answer or failed.
pub(crate) async fn listen(
    ctx: std::sync::Arc<Ctx>,
    mut answered: Option<tokio::sync::oneshot::Sender<()>>,
) {
    let mut cursor = Cursor::new(&ctx);
    let mut floor = None;
    loop {
        let req = get(&ctx, cursor.last_event_id.as_deref());
        let sent = ctx.client.send(req).await;
        if let Some(answered) = answered.take() {
            let _ = answered.send(());
        }
        match sent {
            Ok(resp) => {
                let status = resp.status();
                let media = media_type(resp.headers());
                if status.is_success() && media != "text/event-stream" {
                    ctx.events
                        .error(Error::UnexpectedContentType(media).into())
                        .await;
                    return;
                }
                if status.is_success() {
                    let mut reader =
                        SseReader::new(resp.into_body(), ctx.client.config().max_frame_len);
                    while let Some(item) = reader.next().await {
                        let event = match ctx.events.sse_item(item).await {
                            SseStep::Event(event) => event,
                            SseStep::Skip => continue,
                            SseStep::End => break,
                        };
                        cursor.observe(&event);
                        if is_message(&event) && !ctx.events.frame(event.data).await {
                            return;
                        }
                    }
                } else if matches!(status.as_u16(), 404..=406) {
                    tracing::debug!(%status, "server offers no GET stream");
                    return;
                } else if is_busy(status) {
                    floor = retry_after(resp.headers());
                } else if status.as_u16() == 409 {
                    tracing::debug!("a GET stream is already open for this session");
                } else {
                    let error = status_error(resp).await;
                    let fatal = status.is_client_error();
                    ctx.events.error(error.into()).await;
                    if fatal {
                        return;
                    }
                }
            }
            Err(e) => tracing::debug!(error = %e, "GET stream failed"),
        }
        match cursor.backoff.next_delay(floor.take()) {
            Some(delay) => tokio::time::sleep(delay).await,
            None => {
                let error = Error::RetriesExhausted(Box::new(Error::StreamEnded));
                ctx.events.error(error.into()).await;
                return;
            }
        }
    }
}
