//! Reading SSE bodies, whatever the mode: an [`SseReader`] over one body,
//! the [`Cursor`] a stream resumes from (its last event id and backoff), and
//! [`open`], a GET for a stream. What only Streamable HTTP does with its
//! streams lives with it (`crate::streamable::stream`).

use bytes::BytesMut;
use http_body_util::BodyExt;
use hyper::body::Body as _;
use mcpwire_codec::{SseDecoder, SseEvent, grow_frame_buffer};

use crate::context::Link;
use crate::demand::ResponseBody;
use crate::error::Error;
use crate::events::SseStep;
use crate::request::{Build, send};
use crate::response::{media_type, status_error};
use crate::retry::Backoff;

/// The events of one SSE body. The body is polled only when the next event is
/// asked for, so a consumer that stops asking stops the reading.
pub(crate) struct SseReader {
    body: ResponseBody,
    decoder: SseDecoder,
    buf: BytesMut,
    eof: bool,
}

/// An event whose data is this long or longer is not left sharing its
/// allocation with the read buffer (see `release`).
const LARGE_EVENT: usize = 64 << 10;

/// Room an event may take beyond its message: field names, an id, an event
/// type and line ends around a maximal message.
const EVENT_FRAMING_ROOM: usize = 64 << 10;

impl SseReader {
    pub(crate) fn new(body: ResponseBody, max_frame_len: usize) -> Self {
        let max_event_len = max_frame_len.saturating_add(EVENT_FRAMING_ROOM);
        // A body that declares its length (a one-event answer to a POST,
        // usually) gets room for it at once; the buffer grows as the codec's
        // frame buffers do (see `crate::response::Gather` for why).
        let declared = body
            .size_hint()
            .exact()
            .and_then(|n| usize::try_from(n).ok())
            .map_or(0, |n| n.min(max_event_len));
        let mut buf = BytesMut::new();
        grow_frame_buffer(&mut buf, declared, max_event_len);
        Self {
            body,
            decoder: SseDecoder::with_max_event_len(max_event_len),
            buf,
            eof: false,
        }
    }

    /// The next event; `None` at the end of the body.
    pub(crate) async fn next(&mut self) -> Option<Result<SseEvent, Error>> {
        loop {
            match self.decoder.decode(&mut self.buf) {
                Ok(Some(event)) => {
                    release(&mut self.buf, &event);
                    return Some(Ok(event));
                }
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
                        let max = self.decoder.max_event_len();
                        grow_frame_buffer(&mut self.buf, data.len(), max);
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

/// After a large event the read buffer starts afresh (what is left of it,
/// at most one read, is copied), so the event's data is the only holder of
/// its allocation: the client then parses a large answer in that allocation
/// instead of copying it (`Payload::take`), and the memory goes when the
/// answer does. Left shared, the buffer kept the allocation of the answer
/// read before for as long as the stream lasted.
fn release(buf: &mut BytesMut, event: &SseEvent) {
    if event.data.len() >= LARGE_EVENT {
        *buf = BytesMut::from(&buf[..]);
    }
}

impl SseReader {
    /// The next event of the stream, recorded in `cursor` (its id, its
    /// `retry:`, progress): the one way every mode reads an SSE stream. An
    /// oversized event is reported through `link`'s events and skipped;
    /// `None` once the body has ended or broken.
    pub(crate) async fn next_observed(
        &mut self,
        link: &Link,
        cursor: &mut Cursor,
    ) -> Option<SseEvent> {
        while let Some(item) = self.next().await {
            match link.events.sse_item(item).await {
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
    pub(crate) fn new(link: &Link) -> Self {
        Self {
            last_event_id: None,
            backoff: link.client.config().retry.backoff(),
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
pub(crate) async fn open(link: &Link, last_event_id: Option<&str>) -> Result<SseReader, Error> {
    let build = Build::Stream { last_event_id };
    let resp = send(link, build, build.request(link, &link.session.snapshot())).await?;
    if !resp.status().is_success() {
        return Err(status_error(resp).await);
    }
    let media = media_type(resp.headers());
    if media != "text/event-stream" {
        return Err(Error::UnexpectedContentType(media));
    }
    Ok(SseReader::new(
        resp.into_body(),
        link.client.config().max_frame_len,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-event body with `len` bytes of data, decoded from one buffer.
    fn decoded(len: usize) -> (BytesMut, SseEvent) {
        let mut buf = BytesMut::from(&b"event: message\ndata: "[..]);
        buf.extend_from_slice(&vec![b'x'; len]);
        buf.extend_from_slice(b"\n\n");
        let event = SseDecoder::new()
            .decode(&mut buf)
            .unwrap()
            .expect("a complete event");
        (buf, event)
    }

    #[test]
    fn a_large_event_is_left_the_only_holder_of_its_allocation() {
        let (mut buf, event) = decoded(LARGE_EVENT);
        release(&mut buf, &event);
        // The client parses it in place only if nothing else holds it.
        let data = event.data.try_into_mut().expect("unique");
        assert_eq!(data.len(), LARGE_EVENT);
        assert!(buf.is_empty());
    }

    #[test]
    fn a_small_event_keeps_sharing_the_read_buffer() {
        let (mut buf, event) = decoded(LARGE_EVENT - 1);
        let before = buf.as_ptr();
        release(&mut buf, &event);
        assert_eq!(buf.as_ptr(), before);
        assert!(event.data.try_into_mut().is_err());
    }

    #[test]
    fn what_follows_a_large_event_is_kept() {
        let (mut buf, event) = decoded(LARGE_EVENT);
        buf.extend_from_slice(b"data: next");
        release(&mut buf, &event);
        assert_eq!(&buf[..], b"data: next");
    }
}
