//! The driver task: it owns the socket, sends queued frames, reads the
//! messages the owner granted, keeps the connection alive, and closes it.
//!
//! One task polls both directions, so a large message going out never stops
//! one coming in (and the reverse). Reading happens only while [`Inbox`]
//! allows it (a grant for one more message than already waits, or one
//! message of read-ahead while paused): otherwise the socket is not read and
//! the server's writes back up in TCP.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use mcpwire_transport::{CloseReason, Outgoing, TransportError, TransportEvent};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::Utf8Bytes;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::inbox::Inbox;
use crate::{Error, WsConfig};
use mcpwire_transport::tls::TcpOrTls;

/// The most frames handed to the socket between two flushes: it bounds the
/// frames a failed flush returns as undelivered, and the write buffer.
const BATCH: usize = 32;
/// Steps taken in one poll before the task yields to others.
const BUDGET: usize = 64;

/// How the running phase ended.
enum End {
    /// The owner asked to close (or dropped every sender).
    Local,
    /// The server sent a close frame.
    Peer(Option<CloseFrame>),
    /// The server sent a message over the limit.
    TooLarge(Error),
    /// The connection failed (I/O, protocol, keepalive).
    Failed(Error),
}

/// The keepalive: a ping after `interval` of silence from the server, and
/// the connection given up if nothing at all arrives within `pong_timeout`
/// of it.
struct Keepalive {
    interval: Duration,
    pong_timeout: Duration,
    last_heard: Instant,
    idle: Pin<Box<Sleep>>,
    deadline: Option<Pin<Box<Sleep>>>,
    ping_due: bool,
}

impl Keepalive {
    fn new(interval: Duration, pong_timeout: Duration) -> Self {
        let now = Instant::now();
        Self {
            interval,
            pong_timeout,
            last_heard: now,
            idle: Box::pin(tokio::time::sleep_until(now + interval)),
            deadline: None,
            ping_due: false,
        }
    }

    /// Something arrived: the server is alive. The idle timer is not reset
    /// here (one clock read per message); it catches up when it fires.
    fn heard(&mut self) {
        self.last_heard = Instant::now();
        self.deadline = None;
    }

    /// Checks the timers. `reading` is false while a message waits for a
    /// grant: the socket is not read then, so no pong could be seen, and
    /// the keepalive waits rather than declare a live server dead.
    fn poll(&mut self, cx: &mut Context<'_>, reading: bool) -> Result<(), Error> {
        if !reading {
            self.deadline = None;
        }
        if let Some(deadline) = self.deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Err(Error::KeepaliveTimeout(self.pong_timeout));
        }
        while self.idle.as_mut().poll(cx).is_ready() {
            let now = Instant::now();
            let due = self.last_heard + self.interval;
            if now < due {
                self.idle.as_mut().reset(due);
                continue;
            }
            if reading && self.deadline.is_none() {
                self.ping_due = true;
                let mut deadline = Box::pin(tokio::time::sleep_until(now + self.pong_timeout));
                // Registers the timer with this task.
                let _ = deadline.as_mut().poll(cx);
                self.deadline = Some(deadline);
            }
            self.idle.as_mut().reset(now + self.interval);
        }
        Ok(())
    }
}

/// Sets the connection's end in the inbox if the task stops without
/// doing so (aborted, or a panic), so the owner is never left waiting.
struct FinishOnDrop(Option<Arc<Inbox>>);

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        if let Some(inbox) = self.0.take() {
            inbox.finish(CloseReason::Error(Error::Closed.into()), Vec::new());
        }
    }
}

/// The task's state.
pub(crate) struct Driver {
    ws: WebSocketStream<TcpOrTls>,
    outbound: mpsc::Receiver<Outgoing>,
    inbox: Arc<Inbox>,
    max_frame_len: usize,
    close_timeout: Duration,
    keepalive: Option<Keepalive>,
    /// Frames handed to the socket since the last completed flush.
    unflushed: Vec<Bytes>,
    flush_pending: bool,
}

impl Driver {
    pub(crate) fn new(
        ws: WebSocketStream<TcpOrTls>,
        outbound: mpsc::Receiver<Outgoing>,
        inbox: Arc<Inbox>,
        config: &WsConfig,
    ) -> Self {
        Self {
            ws,
            outbound,
            inbox,
            max_frame_len: config.max_frame_len,
            close_timeout: config.close_timeout,
            keepalive: config
                .ping_interval
                .map(|interval| Keepalive::new(interval, config.pong_timeout)),
            unflushed: Vec::with_capacity(BATCH),
            flush_pending: false,
        }
    }

    /// Runs the connection to its end and reports it.
    pub(crate) async fn run(self) {
        let inbox = self.inbox.clone();
        let mut guard = FinishOnDrop(Some(inbox.clone()));
        // The socket is released when `drive` returns, before the owner can
        // see `Closed`.
        let (reason, undelivered) = self.drive().await;
        tracing::debug!(%reason, undelivered = undelivered.len(), "WebSocket connection ended");
        guard.0 = None;
        inbox.finish(reason, undelivered);
    }

    async fn drive(mut self) -> (CloseReason, Vec<(Bytes, TransportError)>) {
        let end = poll_fn(|cx| self.poll_running(cx)).await;
        let bound = self.close_timeout;
        match end {
            End::Local => {
                let _ = tokio::time::timeout(bound, self.close_locally()).await;
                (CloseReason::Local, Vec::new())
            }
            End::Peer(frame) => {
                // tungstenite queued our answer to the close: send it (and
                // anything not yet flushed), then wait for the server to
                // drop the connection, as RFC 6455 has it.
                let flushed = tokio::time::timeout(bound, async {
                    let flushed = self.ws.flush().await;
                    if flushed.is_ok() {
                        while let Some(Ok(_)) = self.ws.next().await {}
                    }
                    flushed
                })
                .await;
                if let Ok(Ok(())) = flushed {
                    self.unflushed.clear();
                }
                let undelivered = self.undelivered(&Error::Closed.into());
                (peer_reason(frame), undelivered)
            }
            End::TooLarge(error) => {
                self.inbox.push_event(TransportEvent::Error(error.into()));
                let close = CloseFrame {
                    code: CloseCode::Size,
                    reason: Utf8Bytes::from_static("message too large"),
                };
                let _ = tokio::time::timeout(bound, self.ws.close(Some(close))).await;
                let undelivered = self.undelivered(&Error::Closed.into());
                let reason = CloseReason::FrameTooLong {
                    max: self.max_frame_len,
                };
                (reason, undelivered)
            }
            End::Failed(error) => {
                // A dead or broken connection: no closing handshake to wait
                // for.
                let error = TransportError::from(error);
                let undelivered = self.undelivered(&error);
                (CloseReason::Error(error), undelivered)
            }
        }
    }

    /// Our close: queued frames first (best effort), our close frame, then
    /// the server's answer, all within the caller's bound.
    async fn close_locally(&mut self) {
        self.outbound.close();
        while let Ok(frame) = self.outbound.try_recv() {
            let Ok(text) = Utf8Bytes::try_from(frame.frame) else {
                continue;
            };
            if self.ws.feed(Message::Text(text)).await.is_err() {
                return;
            }
        }
        let close = CloseFrame {
            code: CloseCode::Normal,
            reason: Utf8Bytes::default(),
        };
        if self.ws.close(Some(close)).await.is_err() {
            return;
        }
        // Messages the server sent before it saw our close are dropped.
        while let Some(Ok(_)) = self.ws.next().await {}
    }

    /// The frames that will not be sent: those handed to the socket since
    /// the last flush (with `error`), then those still queued. The queue is
    /// closed, so later sends fail at once.
    fn undelivered(&mut self, error: &TransportError) -> Vec<(Bytes, TransportError)> {
        self.outbound.close();
        let mut out: Vec<_> = self
            .unflushed
            .drain(..)
            .map(|f| (f, error.clone()))
            .collect();
        let closed = TransportError::from(Error::Closed);
        while let Ok(frame) = self.outbound.try_recv() {
            out.push((frame.frame, closed.clone()));
        }
        out
    }

    fn poll_running(&mut self, cx: &mut Context<'_>) -> Poll<End> {
        for _ in 0..BUDGET {
            let view = self.inbox.driver_view(cx);
            if view.close_requested {
                return Poll::Ready(End::Local);
            }
            if let Some(keepalive) = self.keepalive.as_mut()
                && let Err(e) = keepalive.poll(cx, view.may_read)
            {
                return Poll::Ready(End::Failed(e));
            }
            let wrote = match self.poll_write(cx) {
                Ok(progress) => progress,
                Err(end) => return Poll::Ready(end),
            };
            let read = if view.may_read {
                match self.poll_read(cx) {
                    Ok(progress) => progress,
                    Err(end) => return Poll::Ready(end),
                }
            } else {
                false
            };
            if !wrote && !read {
                return Poll::Pending;
            }
        }
        // Plenty done: let other tasks run, and come back.
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Hands queued frames (and a due ping) to the socket, up to a batch,
    /// then flushes. True if anything moved.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Result<bool, End> {
        let mut progress = false;
        let mut taken = 0;
        while !self.flush_pending || taken > 0 {
            if taken == BATCH {
                break;
            }
            match Pin::new(&mut self.ws).poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => return Err(End::Failed(Error::from_ws(e))),
                Poll::Pending => break,
            }
            let ping = self.keepalive.as_mut().is_some_and(|k| {
                let due = k.ping_due;
                k.ping_due = false;
                due
            });
            let message = if ping {
                Message::Ping(Bytes::new())
            } else {
                match self.outbound.poll_recv(cx) {
                    Poll::Ready(Some(Outgoing { frame, .. })) => {
                        match Utf8Bytes::try_from(frame.clone()) {
                            Ok(text) => {
                                self.unflushed.push(frame);
                                Message::Text(text)
                            }
                            Err(_) => {
                                let error = Error::NotUtf8.into();
                                self.inbox
                                    .push_event(TransportEvent::Undelivered { frame, error });
                                progress = true;
                                continue;
                            }
                        }
                    }
                    // Every sender is gone: the transport was dropped.
                    Poll::Ready(None) => return Err(End::Local),
                    Poll::Pending => break,
                }
            };
            if let Err(e) = Pin::new(&mut self.ws).start_send(message) {
                return Err(End::Failed(Error::from_ws(e)));
            }
            taken += 1;
            progress = true;
            self.flush_pending = true;
        }
        if self.flush_pending {
            match Pin::new(&mut self.ws).poll_flush(cx) {
                Poll::Ready(Ok(())) => {
                    self.flush_pending = false;
                    self.unflushed.clear();
                    progress = true;
                }
                Poll::Ready(Err(e)) => return Err(End::Failed(Error::from_ws(e))),
                Poll::Pending => {}
            }
        }
        Ok(progress)
    }

    /// Reads one message (the caller checked the grant). True if one came.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Result<bool, End> {
        let message = match Pin::new(&mut self.ws).poll_next(cx) {
            Poll::Pending => return Ok(false),
            Poll::Ready(None) => return Err(End::Peer(None)),
            Poll::Ready(Some(Err(e))) => {
                return Err(match Error::from_ws(e) {
                    e @ Error::MessageTooLarge { .. } => End::TooLarge(e),
                    Error::Closed => End::Peer(None),
                    e => End::Failed(e),
                });
            }
            Poll::Ready(Some(Ok(message))) => message,
        };
        if let Some(keepalive) = self.keepalive.as_mut() {
            keepalive.heard();
        }
        match message {
            Message::Text(text) => self.inbox.push_frame(Bytes::from(text)),
            Message::Binary(data) => self.inbox.binary_dropped(data.len()),
            // tungstenite queued the pong; the write side flushes it.
            Message::Ping(_) => self.flush_pending = true,
            Message::Pong(_) | Message::Frame(_) => {}
            Message::Close(frame) => return Err(End::Peer(frame)),
        }
        Ok(true)
    }
}

/// A normal closure (or going away) is the end of the stream; any other
/// code is an error the owner should see.
fn peer_reason(frame: Option<CloseFrame>) -> CloseReason {
    match frame {
        None => CloseReason::Eof,
        Some(f) if matches!(f.code, CloseCode::Normal | CloseCode::Away) => CloseReason::Eof,
        Some(f) => CloseReason::Error(
            Error::ClosedByPeer {
                code: f.code.into(),
                reason: f.reason.to_string(),
            }
            .into(),
        ),
    }
}
