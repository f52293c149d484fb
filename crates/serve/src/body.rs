//! The bodies of Streamable HTTP answers: a whole JSON body, or a stream
//! of SSE events that ends with the request's answer.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::{Body, Frame};
use mcpwire_codec::jsonrpc::{ErrorObject, Id};
use mcpwire_transport::{FrameKind, Outgoing};
use tokio::sync::{OwnedSemaphorePermit, mpsc};

use crate::session::Session;
use crate::wire;

/// A response body: whole, or frames sent as SSE events as they come.
pub(crate) enum Answer {
    Whole(Full<Bytes>),
    Events(Events),
}

/// The frames of one request's stream, up to and including its answer.
pub(crate) struct Events {
    rx: mpsc::Receiver<Outgoing>,
    answered: bool,
    /// What the stream keeps alive (a stateless request's own session):
    /// dropped with the body, which is how a closed stream cancels the
    /// request.
    _owner: Option<Owner>,
}

impl Events {
    pub(crate) fn new(rx: mpsc::Receiver<Outgoing>, owner: Option<Owner>) -> Self {
        Self {
            rx,
            answered: false,
            _owner: owner,
        }
    }
}

/// A stateless request's session and its place under the endpoint's bound.
/// Dropped when its answer is sent or its client goes away: the session
/// ends then, cancelling whatever of it still runs (upstream too).
pub(crate) struct Owner {
    session: Arc<Session>,
    _slot: OwnedSemaphorePermit,
}

impl Owner {
    pub(crate) fn new(session: Arc<Session>, slot: OwnedSemaphorePermit) -> Self {
        Self {
            session,
            _slot: slot,
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.session.end();
    }
}

/// True if `out` is an answer (a result or an error). Every frame on a
/// request's stream says what it is: the session's own, and those the
/// router read because their sender did not say.
pub(crate) fn is_answer(out: &Outgoing) -> bool {
    matches!(out.kind, FrameKind::Response { .. })
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Answer::Whole(full) => Pin::new(full).poll_frame(cx),
            Answer::Events(events) => {
                if events.answered {
                    // The answer ends the stream, as the spec asks.
                    return Poll::Ready(None);
                }
                events.rx.poll_recv(cx).map(|out| {
                    out.map(|out| {
                        events.answered = is_answer(&out);
                        let mut event = BytesMut::with_capacity(out.frame.len() + 24);
                        event.extend_from_slice(b"event: message\ndata: ");
                        event.extend_from_slice(&out.frame);
                        event.extend_from_slice(b"\n\n");
                        Ok(Frame::data(event.freeze()))
                    })
                })
            }
        }
    }

    // A whole body says its length (a `Content-Length`, not chunks) by its
    // exact size hint; a stream ends when `poll_frame` says so.
    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            Answer::Whole(full) => full.size_hint(),
            Answer::Events(_) => hyper::body::SizeHint::default(),
        }
    }
}

pub(crate) fn status(code: StatusCode) -> Response<Answer> {
    let mut response = Response::new(Answer::Whole(Full::new(Bytes::new())));
    *response.status_mut() = code;
    response
}

/// A JSON-RPC error as a whole JSON body, with `code` as the HTTP status.
pub(crate) fn rpc_error(code: StatusCode, id: Option<&Id>, error: ErrorObject) -> Response<Answer> {
    let mut response = Response::new(Answer::Whole(Full::new(wire::answer(id, &Err(error)))));
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// An SSE response streaming `events`.
pub(crate) fn sse(events: Events) -> Response<Answer> {
    let mut response = Response::new(Answer::Events(events));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // A buffering proxy would hold progress back until the answer.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The answer alone, as JSON, for a client that does not take SSE (what
/// else comes for the request is left out). `owner` is kept until the
/// answer comes: a client that goes away first cancels the request.
pub(crate) async fn whole_answer(
    mut rx: mpsc::Receiver<Outgoing>,
    owner: Option<Owner>,
) -> Response<Answer> {
    while let Some(out) = rx.recv().await {
        if is_answer(&out) {
            drop(owner);
            let mut response = Response::new(Answer::Whole(Full::new(out.frame)));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            return response;
        }
    }
    // Cancelled, or the session ended: no answer.
    status(StatusCode::ACCEPTED)
}
