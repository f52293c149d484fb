//! The streams only Streamable HTTP has: an SSE answer to a POST (resumed
//! with `GET` and `Last-Event-ID` if it breaks before its response) and the
//! GET stream for server-initiated messages.

use std::sync::Arc;

use bytes::Bytes;
use mcpwire_codec::jsonrpc::Id;
use mcpwire_transport::TransportError;
use tokio::sync::oneshot;

use crate::context::Link;
use crate::demand::ResponseBody;
use crate::error::Error;
use crate::outbound::answers;
use crate::request::{Build, is_busy, send};
use crate::response::{media_type, retry_after, status_error};
use crate::retry::{Attempt, GaveUp};
use crate::sse::{Cursor, SseReader, is_message};
use crate::streamable::session::{capture_protocol_version, expire};

/// Delivers the messages of an SSE answer to a POST. If the stream breaks
/// before the response to `id`, it is resumed with a GET carrying
/// `Last-Event-ID` (a disconnect is not a cancellation). If it cannot be
/// resumed, `frame` is reported undelivered. True if the response arrived.
pub(crate) async fn answer_stream(
    link: &Link,
    body: ResponseBody,
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
    let last_event_id = cursor.last_event_id.as_deref();
    let reopened = cursor
        .backoff
        .retry(Attempt::after_an_end(), || reopen(link, last_event_id))
        .await;
    match reopened {
        Ok(reader) => Ok(reader),
        Err(GaveUp::Stopped(error)) => Err(error),
        Err(GaveUp::Exhausted(last)) => Err(Error::RetriesExhausted(Box::new(last)).into()),
    }
}

/// One attempt to reopen a POST's answer stream.
async fn reopen(link: &Link, last_event_id: Option<&str>) -> Attempt<SseReader> {
    let snap = link.session.snapshot();
    let had_session = snap.session_id.is_some();
    let build = Build::Stream { last_event_id };
    let resp = match send(link, build, build.request(link, &snap)).await {
        Ok(resp) => resp,
        // Credentials do not come back by waiting.
        Err(e @ (Error::Authorization(_) | Error::AuthorizationFailed { .. })) => {
            return Attempt::Stop(e.into());
        }
        Err(error) => return Attempt::Again { error, floor: None },
    };
    let status = resp.status();
    if status.is_success() {
        let media = media_type(resp.headers());
        if media != "text/event-stream" {
            return Attempt::Stop(Error::UnexpectedContentType(media).into());
        }
        let max = link.client.config().max_frame_len;
        return Attempt::Done(SseReader::new(resp.into_body(), max));
    }
    if status == http::StatusCode::NOT_FOUND && had_session {
        expire(link);
        return Attempt::Stop(TransportError::SessionExpired);
    }
    let floor = if is_busy(status) {
        retry_after(resp.headers())
    } else {
        None
    };
    let retryable = is_busy(status) || status.is_server_error() || status.as_u16() == 409;
    let error = status_error(resp).await;
    if retryable {
        Attempt::Again { error, floor }
    } else {
        Attempt::Stop(error.into())
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
    let mut attempt = open_listen(&link, None).await;
    if let Some(answered) = answered.take() {
        let _ = answered.send(());
    }
    loop {
        let last_event_id = cursor.last_event_id.as_deref();
        let opened = cursor
            .backoff
            .retry(attempt, || open_listen(&link, last_event_id))
            .await;
        let mut reader = match opened {
            Ok(Some(reader)) => reader,
            Ok(None) => return,
            Err(GaveUp::Stopped(error)) => {
                link.events.error(error).await;
                return;
            }
            Err(GaveUp::Exhausted(_)) => {
                // No request was lost (this stream carries none): not
                // `TransportError::Lost`.
                let error = Error::RetriesExhausted(Box::new(Error::StreamEnded));
                link.events
                    .error(TransportError::Other(Arc::new(error)))
                    .await;
                return;
            }
        };
        while let Some(event) = reader.next_observed(&link, &mut cursor).await {
            if is_message(&event) && !link.events.frame(event.data).await {
                return;
            }
        }
        attempt = Attempt::after_an_end();
    }
}

/// One attempt to open the GET stream: `Done(None)` if the server offers
/// none. A server error is reported here, and tried again.
async fn open_listen(link: &Link, last_event_id: Option<&str>) -> Attempt<Option<SseReader>> {
    let build = Build::Stream { last_event_id };
    let resp = match send(link, build, build.request(link, &link.session.snapshot())).await {
        Ok(resp) => resp,
        Err(e @ (Error::Authorization(_) | Error::AuthorizationFailed { .. })) => {
            return Attempt::Stop(e.into());
        }
        Err(error) => {
            tracing::debug!(%error, "GET stream failed");
            return Attempt::Again { error, floor: None };
        }
    };
    let status = resp.status();
    if status.is_success() {
        let media = media_type(resp.headers());
        if media != "text/event-stream" {
            return Attempt::Stop(Error::UnexpectedContentType(media).into());
        }
        let max = link.client.config().max_frame_len;
        return Attempt::Done(Some(SseReader::new(resp.into_body(), max)));
    }
    if matches!(status.as_u16(), 404..=406) {
        tracing::debug!(%status, "server offers no GET stream");
        // 405 is the specification's "no stream at this endpoint": later
        // sessions of this client skip the GET.
        if status == http::StatusCode::METHOD_NOT_ALLOWED {
            link.client.remember_no_stream(&link.session.url);
        }
        return Attempt::Done(None);
    }
    if is_busy(status) {
        return Attempt::Again {
            error: Error::StreamEnded,
            floor: retry_after(resp.headers()),
        };
    }
    if status.as_u16() == 409 {
        tracing::debug!("a GET stream is already open for this session");
        return Attempt::after_an_end();
    }
    let error = status_error(resp).await;
    if status.is_client_error() {
        return Attempt::Stop(error.into());
    }
    link.events.error(error.into()).await;
    Attempt::after_an_end()
}
