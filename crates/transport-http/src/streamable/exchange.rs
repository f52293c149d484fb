//! One request's exchange in Streamable HTTP: its POST (retried when safe),
//! then its answer: an error status, a JSON body, or an SSE stream.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use mcpwire_codec::jsonrpc::Id;
use mcpwire_transport::TransportError;

use crate::context::Link;
use crate::demand::ResponseBody;
use crate::error::Error;
use crate::outbound::Outbound;
use crate::request::{Build, MCP_SESSION_ID, send_with_retry};
use crate::response::{Media, read_body, rpc_error_answer, status_error};
use crate::streamable::session::{
    capture_protocol_version, capture_session, expire, session_unknown, settle_mode,
};
use crate::streamable::stream::answer_stream;

/// Posts one frame and handles its answer. True if the server accepted it.
/// A request that came with frame metadata can be aborted meanwhile
/// (`crate::abort`): then nothing more is sent or reported for it.
pub(crate) async fn exchange(
    link: Arc<Link>,
    req: Request<Full<Bytes>>,
    frame: Bytes,
    kind: Outbound,
) -> bool {
    let id = match &kind {
        // Only the stateless revision's requests carry frame metadata, and
        // only they are cancelled by closing their stream.
        Outbound::Request {
            id, meta: Some(_), ..
        } => id.clone(),
        _ => return post(link, req, frame, kind).await,
    };
    // Boxed: inline, the abortable wrapper would hold a second copy of the
    // POST's state in every exchange, armed or not, and moving that larger
    // future into the set of requests in flight cost HTTP W3 a quarter more
    // instructions per call (callgrind).
    let aborts = link.session.aborts.clone();
    let outcome = aborts
        .run(&id, Box::pin(post(link, req, frame, kind)))
        .await;
    if outcome.is_none() {
        tracing::debug!(%id, "request aborted: its answer stream is closed");
    }
    outcome.unwrap_or(false)
}

async fn post(link: Arc<Link>, req: Request<Full<Bytes>>, frame: Bytes, kind: Outbound) -> bool {
    let had_session = req.headers().contains_key(MCP_SESSION_ID);
    let build = Build::Post {
        frame: &frame,
        kind: &kind,
    };
    match send_with_retry(&link, build, req).await {
        Ok(resp) => answer(&link, resp, frame, kind, had_session).await,
        Err(e) => {
            link.events.undelivered(frame, e.into()).await;
            false
        }
    }
}

/// Handles the answer to a POST: status first, then the content type. True
/// if the server accepted the frame.
pub(crate) async fn answer(
    link: &Link,
    resp: Response<ResponseBody>,
    frame: Bytes,
    kind: Outbound,
    had_session: bool,
) -> bool {
    let status = resp.status();
    if !status.is_success() {
        let error = status_error(resp).await;
        // A JSON-RPC error for this request is its answer: a 404 with
        // `-32601` is a method the server does not have, not an expired
        // session.
        if let Some(body) = match &kind {
            Outbound::Request { id, .. } => rpc_error_answer(&error, id),
            _ => None,
        } {
            settle_mode(link);
            link.events.frame(body).await;
            return true;
        }
        if had_session && session_unknown(&error) {
            expire(link);
            link.events
                .undelivered(frame, TransportError::SessionExpired)
                .await;
        } else {
            link.events.undelivered(frame, error.into()).await;
        }
        return false;
    }
    let initialize = kind.is_initialize();
    if initialize {
        capture_session(link, &resp);
    } else if matches!(kind, Outbound::Request { .. }) {
        settle_mode(link);
    }
    let Outbound::Request { id, .. } = kind else {
        // A notification, response or batch: 202 with no body is the normal
        // answer. A batch may still be answered with JSON or SSE.
        if status == StatusCode::ACCEPTED {
            return true;
        }
        return deliver_body(link, resp, frame, None, false).await;
    };
    if status == StatusCode::ACCEPTED {
        // Not what the specification allows for a request; the answer may
        // still come on the GET stream, so nothing is reported as lost.
        tracing::debug!("202 Accepted for a request");
        return true;
    }
    deliver_body(link, resp, frame, Some(id), initialize).await
}

/// Delivers a success answer's JSON or SSE body.
async fn deliver_body(
    link: &Link,
    resp: Response<ResponseBody>,
    frame: Bytes,
    id: Option<Id>,
    initialize: bool,
) -> bool {
    let config = link.client.config();
    match Media::of(resp.headers()) {
        Media::Json => {
            match read_body(
                resp.into_body(),
                config.max_frame_len,
                config.request_timeout,
            )
            .await
            {
                Ok(body) if body.iter().all(u8::is_ascii_whitespace) => true,
                Ok(body) => {
                    if initialize {
                        capture_protocol_version(link, &body);
                    }
                    link.events.frame(body).await;
                    true
                }
                Err(e) => {
                    link.events.undelivered(frame, e.into()).await;
                    false
                }
            }
        }
        // Boxed: a stream's reader is larger than the whole of an exchange
        // without it, and inline every request in flight would carry it,
        // JSON answers (most of them) included.
        Media::EventStream => {
            Box::pin(answer_stream(link, resp.into_body(), frame, id, initialize)).await
        }
        Media::Other(media) => {
            // Some servers answer a notification with 200 and no body (and no
            // content type) instead of 202: that is an acceptance too.
            match read_body(
                resp.into_body(),
                config.max_frame_len,
                config.request_timeout,
            )
            .await
            {
                Ok(body) if body.iter().all(u8::is_ascii_whitespace) && id.is_none() => true,
                Ok(_) => {
                    let error = Error::UnexpectedContentType(media);
                    link.events.undelivered(frame, error.into()).await;
                    false
                }
                Err(e) => {
                    link.events.undelivered(frame, e.into()).await;
                    false
                }
            }
        }
    }
}
