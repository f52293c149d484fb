//! Putting a [`Tap`] on a transport.
//!
//! A transport that sends header fields with its frames (HTTP) taps them
//! itself, where each request is sent, so the tap sees the headers as they
//! went ([`Transport::set_tap`] returns true). Any other transport is
//! wrapped in a [`TappedTransport`]: its sender shows each frame to the tap
//! as it is accepted for sending, and its events each frame as it is
//! delivered. Neither way is a relay: the frame goes from the caller to the
//! transport with everything it carries (its [`FrameMeta`](crate::FrameMeta)
//! included), exactly as without a tap.

use std::sync::Arc;
use std::task::{Context, Poll};

use crate::tap::{Direction, Tap, Tapped};
use crate::{Active, FrameSender, Transport, TransportEvent, TransportInfo};

/// Any transport with a [`Tap`] on it: frames are shown to the tap as the
/// transport's sender accepts them (after its checks: a frame refused as
/// too large is not shown) and as the transport delivers them. For
/// transports without header fields; an HTTP transport taps itself.
#[derive(Debug)]
pub struct TappedTransport<T> {
    inner: T,
    sender: FrameSender,
    tap: Arc<dyn Tap>,
}

impl<T: Transport> TappedTransport<T> {
    /// `inner`, with `tap` on it.
    pub fn new(inner: T, tap: Arc<dyn Tap>) -> Self {
        let sender = inner.sender().tap(tap.clone());
        Self { inner, sender, tap }
    }

    /// The transport inside.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: Transport> Transport for TappedTransport<T> {
    fn sender(&self) -> FrameSender {
        self.sender.clone()
    }

    fn set_active(&mut self, active: Active) {
        self.inner.set_active(active);
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        let event = self.inner.poll_event(cx);
        if let Poll::Ready(Some(TransportEvent::Frame(frame))) = &event {
            self.tap.frame(&Tapped::new(Direction::Received, frame));
        }
        event
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.inner.poll_close(cx)
    }

    fn info(&self) -> TransportInfo {
        self.inner.info()
    }

    fn set_tap(&mut self, tap: Arc<dyn Tap>) -> bool {
        self.sender = self.inner.sender().tap(tap.clone());
        self.tap = tap;
        true
    }
}

/// Puts `tap` on `transport`: the transport's own tap if it has one (see
/// [`Transport::set_tap`]), else a [`TappedTransport`] around it.
pub fn tap_transport(mut transport: Box<dyn Transport>, tap: Arc<dyn Tap>) -> Box<dyn Transport> {
    if transport.set_tap(tap.clone()) {
        transport
    } else {
        Box::new(TappedTransport::new(transport, tap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IoConfig, IoTransport, TransportExt};
    use bytes::Bytes;
    use std::sync::Mutex;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[derive(Debug, Default)]
    struct Log(Mutex<Vec<(Direction, Vec<u8>)>>);

    impl Tap for Log {
        fn frame(&self, tapped: &Tapped<'_>) {
            self.0
                .lock()
                .unwrap()
                .push((tapped.direction, tapped.frame.to_vec()));
        }
    }

    #[tokio::test]
    async fn a_tapped_byte_stream_shows_each_frame_once_and_sends_the_same_bytes() {
        let log = Arc::new(Log::default());
        let (transport, peer) = IoTransport::pair(IoConfig::new());
        let mut transport = tap_transport(Box::new(transport), log.clone());
        let (read, mut write) = tokio::io::split(peer);
        let mut lines = BufReader::new(read).lines();
        transport
            .sender()
            .send(Bytes::from_static(br#"{"id":1}"#))
            .await
            .unwrap();
        // A frame the sender refuses is not shown: it never went.
        let refused = transport
            .sender()
            .max_frame_len(2)
            .send(Bytes::from_static(b"[1,2]"))
            .await;
        assert!(refused.is_err());
        assert_eq!(lines.next_line().await.unwrap().unwrap(), r#"{"id":1}"#);
        transport
            .sender()
            .try_send(Bytes::from_static(br#"{"id":3}"#))
            .unwrap();
        assert_eq!(lines.next_line().await.unwrap().unwrap(), r#"{"id":3}"#);
        write.write_all(b"{\"id\":2}\n").await.unwrap();
        transport.set_active(Active::Once);
        match transport.next_event().await {
            Some(TransportEvent::Frame(f)) => assert_eq!(f, r#"{"id":2}"#),
            other => panic!("{other:?}"),
        }
        let seen = log.0.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                (Direction::Sent, br#"{"id":1}"#.to_vec()),
                (Direction::Sent, br#"{"id":3}"#.to_vec()),
                (Direction::Received, br#"{"id":2}"#.to_vec()),
            ]
        );
        transport.close().await;
    }
}
