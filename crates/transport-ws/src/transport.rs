//! [`WsTransport`]: the [`Transport`] contract over a WebSocket connection.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use mcpwire_transport::{
    Active, ConnectError, FrameSender, Transport, TransportEvent, TransportInfo,
};
use tokio::task::AbortHandle;
use tokio::time::Sleep;

use crate::driver::Driver;
use crate::inbox::Inbox;
use crate::request::{SUBPROTOCOL, Target};
use crate::{Error, WsConnector};

/// An MCP server reached over a WebSocket (subprotocol `mcp`), implementing
/// the [`Transport`] contract.
///
/// # Tasks
///
/// [`connect`](Self::connect) spawns one driver task on the current tokio
/// runtime. It owns the socket: it sends queued frames, reads the messages
/// the owner granted, answers pings, sends its own keepalive pings, and runs
/// the closing handshake. Dropping the transport aborts it, which drops the
/// socket at once; [`close`](mcpwire_transport::TransportExt::close) first
/// sends the queued frames and a close frame and waits for the server's,
/// within [`WsConfig::close_timeout`](crate::WsConfig::close_timeout).
///
/// # Flow control
///
/// A message is read from the socket only while the owner holds a grant for
/// one more message than already waits, and at most
/// [`read_ahead`](crate::WsConfig::read_ahead) wait. With no grant
/// outstanding, one message is read ahead (so a server's close or ping is
/// still seen while nothing is pending, as for `IoTransport`), and then
/// nothing more: the server's writes back up in TCP. What is held is then
/// at most the waiting messages plus one read buffer (128 KiB) of the next.
/// Pings the server sends behind a waiting message are answered once the
/// consumer takes it, and our keepalive waits meanwhile.
///
/// # Messages
///
/// One JSON-RPC message per text message, each way. A binary message from
/// the server is dropped and reported as a non-fatal
/// [`Error::BinaryMessage`] (no grant used); one over
/// [`max_frame_len`](crate::WsConfig::max_frame_len) is refused before it is
/// buffered whole, reported as [`Error::MessageTooLarge`], and closes the
/// connection with
/// [`CloseReason::FrameTooLong`](mcpwire_transport::CloseReason::FrameTooLong).
/// A frame that cannot be sent (not UTF-8, or the connection failed before
/// it was flushed) comes back as
/// [`TransportEvent::Undelivered`].
pub struct WsTransport {
    sender: FrameSender,
    inbox: Arc<Inbox>,
    driver: AbortHandle,
    url: String,
    reported: bool,
    closing: bool,
    close_deadline: Option<Pin<Box<Sleep>>>,
    close_timeout: Duration,
}

impl std::fmt::Debug for WsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsTransport")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl WsTransport {
    /// Connects to the `ws://` or `wss://` `url`: TCP, TLS for `wss`, then
    /// the upgrade asking for the `mcp` subprotocol, all within the connect
    /// timeout. A server that does not select `mcp` is refused with
    /// [`Error::SubprotocolNotSelected`] or [`Error::SubprotocolMismatch`];
    /// an upgrade answered with another status is [`Error::Status`].
    pub async fn connect(connector: &WsConnector, url: &str) -> Result<Self, Error> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| ConnectError::NoRuntime)?;
        let target = Target::parse(url)?;
        let ws = connector.handshake(&target).await?;
        let config = connector.config();
        let (sender, outbound) = FrameSender::channel(config.queue_capacity);
        let sender = sender.max_frame_len(config.max_frame_len);
        let inbox = Arc::new(Inbox::new(config.read_ahead));
        let driver = Driver::new(ws, outbound, inbox.clone(), config);
        let task = runtime.spawn(driver.run());
        Ok(Self {
            sender,
            inbox,
            driver: task.abort_handle(),
            url: target.redacted(),
            reported: false,
            closing: false,
            close_deadline: None,
            close_timeout: config.close_timeout,
        })
    }
}

impl Drop for WsTransport {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

impl Transport for WsTransport {
    fn sender(&self) -> FrameSender {
        self.sender.clone()
    }

    fn set_active(&mut self, active: Active) {
        self.inbox.set_active(active);
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        if self.reported {
            return Poll::Ready(None);
        }
        match self.inbox.next_event(cx) {
            Some(event) => {
                if matches!(event, TransportEvent::Closed(_)) {
                    self.reported = true;
                }
                Poll::Ready(Some(event))
            }
            None => Poll::Pending,
        }
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.closing {
            self.closing = true;
            self.inbox.request_close();
            // The driver bounds its own closing; this deadline only guards
            // against a driver that fails to.
            self.close_deadline = Some(Box::pin(tokio::time::sleep(
                self.close_timeout + Duration::from_secs(1),
            )));
        }
        if self.inbox.poll_finished(cx) {
            return Poll::Ready(());
        }
        if let Some(deadline) = self.close_deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            self.driver.abort();
            return Poll::Ready(());
        }
        Poll::Pending
    }

    fn info(&self) -> TransportInfo {
        TransportInfo::new("websocket", self.url.clone()).with_detail("subprotocol", SUBPROTOCOL)
    }
}
