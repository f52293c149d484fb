//! Reading SSE bodies, whatever the mode: an [`SseReader`] over one body,
//! the [`Cursor`] a stream resumes from (its last event id and backoff), and
//! [`open`], a GET for a stream. What only Streamable HTTP does with its
//! streams lives with it (`crate::streamable::stream`).

use bytes::BytesMut;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use mcpwire_codec::{SseDecoder, SseEvent};

use crate::context::Ctx;
use crate::error::Error;
use crate::events::SseStep;
use crate::request::{Build, send};
use crate::response::{media_type, status_error};
use crate::retry::Backoff;

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

impl SseReader {
    /// The next event of the stream, recorded in `cursor` (its id, its
    /// `retry:`, progress): the one way every mode reads an SSE stream. An
    /// oversized event is reported through `ctx`'s events and skipped;
    /// `None` once the body has ended or broken.
    pub(crate) async fn next_observed(
        &mut self,
        ctx: &Ctx,
        cursor: &mut Cursor,
    ) -> Option<SseEvent> {
        while let Some(item) = self.next().await {
            match ctx.events.sse_item(item).await {
                SseStep::Event(event) => {
                    cursor.observe(&event);
                    return Some(event);
                }
                SseStep::Skip => {}
                SseStep::End => return None,
            }
        }
        None
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

/// GETs an SSE stream on the URL, resuming after `last_event_id`: an error
/// unless the answer is a success with `text/event-stream`.
pub(crate) async fn open(ctx: &Ctx, last_event_id: Option<&str>) -> Result<SseReader, Error> {
    let build = Build::Stream { last_event_id };
    let resp = send(ctx, build, build.request(ctx, &ctx.shared.snapshot())).await?;
    if !resp.status().is_success() {
        return Err(status_error(resp).await);
    }
    let media = media_type(resp.headers());
    if media != "text/event-stream" {
        return Err(Error::UnexpectedContentType(media));
    }
    Ok(SseReader::new(
        resp.into_body(),
        ctx.client.config().max_frame_len,
    ))
}
