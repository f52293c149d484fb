//! The driver: the one task that owns the transport and reads from it.
//!
//! It parses each frame once and hands it on without waiting: responses
//! complete their caller through the pending map, server requests go to
//! handler tasks, notifications go to bounded lanes. It keeps a window of
//! grants open, topping it up when half is used.

use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use bytes::Bytes;
use mcpwire_codec::jsonrpc::{EnvelopeError, Frame, Id, Message, Response};
use mcpwire_transport::TransportExt;
use mcpwire_transport::{Active, CloseReason, Transport, TransportError, TransportEvent};

use tokio::time::{Instant, Sleep};

use crate::base::error::Error;
use crate::base::signal::{CloseRequest, SIGNAL_CLOSE, SIGNAL_REARM, SIGNAL_SESSION};
use crate::notify::inbox::Inbox;
use crate::observe::metrics::Count;
use crate::requests::dispatch::Dispatcher;
use crate::session::live::LiveConnection;
use crate::types::{Cancelled, Progress};

/// How the transport session ended.
pub(crate) struct DriverExit {
    /// The transport's reason, if it reported one.
    pub(crate) reason: Option<CloseReason>,
    /// Why we closed it ourselves (the user, a failed keepalive).
    pub(crate) local: Option<CloseRequest>,
}

/// What woke the driver.
enum Step {
    Event(Option<TransportEvent>),
    Close,
    Sweep,
}

pub(crate) async fn run<T: Transport>(
    mut transport: T,
    conn: Arc<LiveConnection>,
    inbox: Arc<Inbox>,
    dispatcher: Arc<Dispatcher>,
    window: NonZeroU32,
) -> DriverExit {
    let engine = &conn.engine;
    transport.set_active(Active::Many(window));
    let mut remaining = window.get();
    let mut local = None;
    // The one timer behind every request timeout (see `engine`): armed for
    // `armed_at`, re-armed when a caller signals an earlier deadline or a
    // sweep finds the next one.
    let mut timer = Box::pin(tokio::time::sleep_until(Instant::now()));
    let mut armed_at: Option<Instant> = None;
    let reason = loop {
        let step = std::future::poll_fn(|cx| {
            let flags = engine.signal.poll_take(cx);
            // Re-arm before anything else: the flags are taken once.
            if flags & SIGNAL_REARM != 0 {
                arm(&mut timer, &mut armed_at, engine.armed());
            }
            if flags & SIGNAL_SESSION != 0 {
                engine.peer().set_session(&transport.info());
                conn.session_read.notify_one();
            }
            if flags & SIGNAL_CLOSE != 0 && local.is_none() {
                return Poll::Ready(Step::Close);
            }
            if armed_at.is_some() && timer.as_mut().poll(cx).is_ready() {
                armed_at = None;
                return Poll::Ready(Step::Sweep);
            }
            transport.poll_event(cx).map(Step::Event)
        })
        .await;
        let event = match step {
            Step::Event(event) => event,
            Step::Close => {
                local = engine.signal.close_request();
                // Boxed: closing is rare, and its future would otherwise
                // be part of every idle session's task.
                Box::pin(transport.close()).await;
                continue;
            }
            Step::Sweep => {
                let next = engine.sweep();
                arm(&mut timer, &mut armed_at, next);
                continue;
            }
        };
        let Some(event) = event else { break None };
        match event {
            TransportEvent::Frame(frame) => {
                remaining = remaining.saturating_sub(1);
                if remaining <= window.get() / 2 {
                    transport.set_active(Active::Many(window));
                    remaining = window.get();
                }
                engine.metrics().bytes(false, frame.len(), engine.peer());
                on_frame(frame, &conn, &inbox, &dispatcher);
            }
            TransportEvent::Stderr(line) => {
                tracing::debug!(target: "mcp_server_stderr", "{line}");
                conn.push_stderr(line);
            }
            TransportEvent::Error(e) => {
                engine.metrics().count(Count::TransportError, engine.peer());
                tracing::warn!(error = %e, "transport reported an error");
            }
            TransportEvent::Undelivered { frame, error } => {
                on_undelivered(frame, error, &conn);
            }
            TransportEvent::Closed(reason) => break Some(reason),
            _ => {}
        }
    };
    DriverExit { reason, local }
}

/// Points the timer at `at` (or disarms it), touching tokio's timer wheel
/// only when the instant changes.
fn arm(timer: &mut Pin<Box<Sleep>>, armed_at: &mut Option<Instant>, at: Option<Instant>) {
    if let Some(at) = at
        && *armed_at != Some(at)
    {
        timer.as_mut().reset(at);
    }
    *armed_at = at;
}

fn on_frame(frame: Bytes, conn: &LiveConnection, inbox: &Inbox, dispatcher: &Arc<Dispatcher>) {
    // A JSON array is a batch (allowed by 2025-03-26): each element is
    // handled as if it had come alone.
    match Message::parse_frame(frame) {
        Ok(Frame::Single(msg)) => on_message(msg, conn, inbox, dispatcher),
        Ok(Frame::Batch(items)) => {
            for item in items {
                match item {
                    Ok(msg) => on_message(msg, conn, inbox, dispatcher),
                    Err(e) => malformed(conn, &e),
                }
            }
        }
        Err(e) => malformed(conn, &e),
    }
}

fn malformed(conn: &LiveConnection, e: &EnvelopeError) {
    conn.engine.stats.malformed.fetch_add(1, Ordering::Relaxed);
    conn.engine
        .metrics()
        .count(Count::Malformed, conn.engine.peer());
    tracing::warn!(error = %e, "ignoring a malformed message from the server");
}

fn on_message(msg: Message, conn: &LiveConnection, inbox: &Inbox, dispatcher: &Arc<Dispatcher>) {
    let engine = &conn.engine;
    match msg {
        Message::Response(Response { id, outcome }) => match id {
            Some(Id::Number(n)) => {
                // Before the caller can see the answer: what the tool cache
                // learns of its order against `list_changed`.
                inbox.tools.answered(n);
                let outcome = outcome.map_err(Error::server);
                if !engine.complete(n, outcome) {
                    tracing::debug!(id = n, "response to no pending request (late or unknown)");
                }
            }
            other => {
                engine.stats.malformed.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(id = ?other, "response with an id we never used");
            }
        },
        Message::Request(req) => dispatcher.dispatch(engine.sender(), &conn.running, req),
        Message::Notification(n) => match n.method.as_str() {
            "notifications/progress" => match n.params.map(|p| p.deserialize::<Progress>()) {
                Some(Ok(p)) => engine.progress(p),
                _ => tracing::warn!("ignoring a malformed progress notification"),
            },
            "notifications/cancelled" => {
                let parsed = n.params.and_then(|p| p.deserialize::<Cancelled>().ok());
                let id = parsed
                    .and_then(|c| c.request_id)
                    .and_then(|v| serde_json::from_value::<Id>(v).ok());
                match id {
                    // A server ends one of our subscription streams this
                    // way on stdio (the only request of ours it may cancel).
                    Some(Id::Number(n)) if inbox.tags.is_open(n) => {
                        let ended = Error::cancelled("the server ended the subscription");
                        engine.complete(n, Err(ended));
                    }
                    Some(id) => {
                        conn.running.cancel(&id);
                    }
                    None => {}
                }
            }
            method => inbox.dispatch(method, n.params),
        },
    }
}

/// A frame we queued was not delivered. A request fails, or, if the session
/// expired, waits for the lifecycle to re-initialize and replay it.
fn on_undelivered(frame: Bytes, error: TransportError, conn: &LiveConnection) {
    let id = match Message::parse(frame.clone()) {
        Ok(Message::Request(r)) => match r.id {
            Id::Number(n) => n,
            Id::String(_) => return,
        },
        Ok(other) => {
            tracing::warn!(method = ?other.method(), error = %error, "a notification or response was not delivered");
            return;
        }
        Err(_) => return,
    };
    if matches!(error, TransportError::SessionExpired) {
        conn.session_expired(frame, error);
        return;
    }
    conn.engine.complete(id, Err(Error::undelivered(error)));
}
