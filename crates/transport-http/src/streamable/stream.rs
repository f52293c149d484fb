//! The streams only Streamable HTTP has: an SSE answer to a POST (resumed
//! with `GET` and `Last-Event-ID` if it breaks before its response) and the
//! GET stream for server-initiated messages.

use std::sync::Arc;

use bytes::Bytes;
use hyper::body::Incoming;
use mcpwire_codec::jsonrpc::Id;
use mcpwire_transport::TransportError;
use tokio::sync::oneshot;

use crate::context::Link;
use crate::error::Error;
use crate::outbound::answers;
use crate::request::{Build, is_busy, send};
use crate::response::{media_type, retry_after, status_error};
use crate::sse::{Cursor, SseReader, is_message};
use crate::streamable::session::{capture_protocol_version, expire};

/// Delivers the messages of an SSE answer to a POST. If the stream breaks
/// before the response to `id`, it is resumed with a GET carrying
/// `Last-Event-ID` (a disconnect is not a cancellation). If it cannot be
/// resumed, `frame` is reported undelivered. True if the response arrived.
pub(crate) async fn answer_stream(
    link: &Link,
    body: Incoming,
    frame: Bytes,
    id: Option<Id>,
    initialize: bool,
) -> bool {
    let max = link.client.config().max_frame_len;
    let mut reader = SseReader::new(body, max);
    let mut cursor = Cursor::new(link);
    let mut answered = false;
    loop {
        while let Some(event) = reader.next_observed(link, &mut cursor).await {
            if !is_message(&event) {
                continue;
            }
            let data = event.data;
            let ours = !answered && id.as_ref().is_some_and(|id| answers(&data, id));
            if ours && initialize {
                capture_protocol_version(link, &data);
            }
            if !link.events.frame(data).await {
                return answered;
            }
            answered |= ours;
        }
        if answered || id.is_none() {
            return answered;
        }
        if cursor.last_event_id.is_none() {
            link.events
                .undelivered(frame, Error::StreamEnded.into())
                .await;
            return false;
        }
        match resume(link, &mut cursor).await {
            Ok(next) => reader = next,
            Err(e) => {
                link.events.undelivered(frame, e).await;
                return false;
            }
        }
    }
}

/// Reopens a stream with `GET` and `Last-Event-ID`, under the retry policy.
async fn resume(link: &Link, cursor: &mut Cursor) -> Result<SseReader, TransportError> {
    let mut floor = None;
    let mut last_error = Error::StreamEnded;
    loop {
        let Some(delay) = cursor.backoff.next_delay(floor.take()) else {
            return Err(Error::RetriesExhausted(Box::new(last_error)).into());
        };
        tokio::time::sleep(delay).await;
        let snap = link.session.snapshot();
        let had_session = snap.session_id.is_some();
        let build = Build::Stream {
            last_event_id: cursor.last_event_id.as_deref(),
        };
        let resp = match send(link, build, build.request(link, &snap)).await {
            Ok(resp) => resp,
            // Credentials do not come back by waiting.
            Err(e @ (Error::Authorization(_) | Error::AuthorizationFailed { .. })) => {
                return Err(e.into());
            }
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
                link.client.config().max_frame_len,
            ));
        }
        if status == http::StatusCode::NOT_FOUND && had_session {
            expire(link);
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

/// The GET stream for server-initiated messages. 405, 404 and 406 mean the
/// server offers none: it ends quietly. 409 (a stream is already open for the
/// session), 429/503 and broken or gracefully closed streams are retried under
/// the retry policy, resuming with `Last-Event-ID`; a budget spent is reported
/// as a non-fatal error. Request traffic is never affected. `answered`, if
/// given, is told when the first `GET` has its answer or failed.
pub(crate) async fn listen(link: Arc<Link>, mut answered: Option<oneshot::Sender<()>>) {
    let mut cursor = Cursor::new(&link);
    let mut floor = None;
    loop {
        let build = Build::Stream {
            last_event_id: cursor.last_event_id.as_deref(),
        };
        let sent = send(&link, build, build.request(&link, &link.session.snapshot())).await;
        if let Some(answered) = answered.take() {
            let _ = answered.send(());
        }
        match sent {
            Ok(resp) => {
                let status = resp.status();
                let media = media_type(resp.headers());
                if status.is_success() && media != "text/event-stream" {
                    link.events
                        .error(Error::UnexpectedContentType(media).into())
                        .await;
                    return;
                }
                if status.is_success() {
                    let mut reader =
                        SseReader::new(resp.into_body(), link.client.config().max_frame_len);
                    while let Some(event) = reader.next_observed(&link, &mut cursor).await {
                        if is_message(&event) && !link.events.frame(event.data).await {
                            return;
                        }
                    }
                } else if matches!(status.as_u16(), 404..=406) {
                    tracing::debug!(%status, "server offers no GET stream");
                    // 405 is the specification's "no stream at this
                    // endpoint": later sessions of this client skip the GET.
                    if status == http::StatusCode::METHOD_NOT_ALLOWED {
                        link.client.remember_no_stream(&link.session.url);
                    }
                    return;
                } else if is_busy(status) {
                    floor = retry_after(resp.headers());
                } else if status.as_u16() == 409 {
                    tracing::debug!("a GET stream is already open for this session");
                } else {
                    let error = status_error(resp).await;
                    let fatal = status.is_client_error();
                    link.events.error(error.into()).await;
                    if fatal {
                        return;
                    }
                }
            }
            Err(e @ (Error::Authorization(_) | Error::AuthorizationFailed { .. })) => {
                link.events.error(e.into()).await;
                return;
            }
            Err(e) => tracing::debug!(error = %e, "GET stream failed"),
        }
        match cursor.backoff.next_delay(floor.take()) {
            Some(delay) => tokio::time::sleep(delay).await,
            None => {
                // No request was lost (this stream carries none): not
                // `TransportError::Lost`.
                let error = Error::RetriesExhausted(Box::new(Error::StreamEnded));
                link.events
                    .error(TransportError::Other(Arc::new(error)))
                    .await;
                return;
            }
        }
    }
}
