use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::SendError;
use crate::direct::{Direct, SharedWrite};

/// The sending half of a transport: cheap to clone and shared by every caller.
///
/// Frames go into a bounded queue that the transport drains. Nothing here
/// blocks: [`try_send`](Self::try_send) answers `Busy` at once when the queue is
/// full, and [`send`](Self::send) waits for room. A frame is checked against
/// the transport's limits before it is queued, so an oversized message fails
/// at once with the frame handed back, never hangs.
#[derive(Debug, Clone)]
pub struct FrameSender {
    tx: mpsc::Sender<Bytes>,
    max_frame_len: usize,
    reject_newlines: bool,
    /// False for transports that cannot send at all (receive-only streams).
    can_send: bool,
    /// Set by byte-stream transports: lets a sender write a frame itself when
    /// nothing is queued, saving the writer task's wake-up.
    direct: Option<Arc<SharedWrite>>,
}

impl FrameSender {
    /// A sender with a queue of `capacity` frames, and the receiving end the
    /// transport drains. The maximum frame length starts at the codec default
    /// (16 MiB).
    pub fn channel(capacity: usize) -> (FrameSender, mpsc::Receiver<Bytes>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            FrameSender {
                tx,
                max_frame_len: mcpwire_codec::DEFAULT_MAX_FRAME_LEN,
                reject_newlines: false,
                can_send: true,
                direct: None,
            },
            rx,
        )
    }

    /// Frames longer than `max` bytes are refused with
    /// [`SendError::TooLarge`].
    #[must_use]
    pub fn max_frame_len(mut self, max: usize) -> Self {
        self.max_frame_len = max;
        self
    }

    /// Frames containing a raw `\n` are refused with
    /// [`SendError::EmbeddedNewline`] (for newline framing).
    #[must_use]
    pub fn reject_newlines(mut self, reject: bool) -> Self {
        self.reject_newlines = reject;
        self
    }

    /// Every frame is refused with [`SendError::NotSupported`], at once: for
    /// transports that only receive (a receive-only SSE stream).
    #[must_use]
    pub fn receive_only(mut self) -> Self {
        self.can_send = false;
        self
    }

    /// Lets senders write directly to `shared` when nothing is queued.
    pub(crate) fn direct(mut self, shared: Arc<SharedWrite>) -> Self {
        self.direct = Some(shared);
        self
    }

    /// Writes the frame at once if possible. `Ok(None)`: done; `Ok(Some)`:
    /// queue it (counted as queued); `Err`: the transport is closed.
    fn try_direct(&self, frame: Bytes) -> Result<Option<Bytes>, SendError> {
        match &self.direct {
            None => Ok(Some(frame)),
            Some(shared) => match shared.try_direct(frame) {
                Direct::Done => Ok(None),
                Direct::Queue(frame) => Ok(Some(frame)),
                Direct::Closed(frame) => Err(SendError::Closed(frame)),
            },
        }
    }

    fn check(&self, frame: Bytes) -> Result<Bytes, SendError> {
        if !self.can_send {
            return Err(SendError::NotSupported(frame));
        }
        if frame.len() > self.max_frame_len {
            return Err(SendError::TooLarge(frame, self.max_frame_len));
        }
        if self.reject_newlines && memchr_newline(&frame) {
            return Err(SendError::EmbeddedNewline(frame));
        }
        Ok(frame)
    }

    /// Queues `frame` if there is room now.
    pub fn try_send(&self, frame: Bytes) -> Result<(), SendError> {
        let frame = self.check(frame)?;
        let Some(frame) = self.try_direct(frame)? else {
            return Ok(());
        };
        self.tx.try_send(frame).map_err(|e| {
            self.unqueue();
            match e {
                mpsc::error::TrySendError::Full(f) => SendError::Busy(f),
                mpsc::error::TrySendError::Closed(f) => SendError::Closed(f),
            }
        })
    }

    /// Queues `frame`, waiting for room. Cancel-safe: if the future is dropped
    /// before it completes, the frame was not queued.
    pub async fn send(&self, frame: Bytes) -> Result<(), SendError> {
        let frame = self.check(frame)?;
        let Some(frame) = self.try_direct(frame)? else {
            return Ok(());
        };
        // Undoes the "queued" count if the frame never makes it into the
        // queue, including when this future is dropped while waiting.
        struct Unqueue<'a>(Option<&'a SharedWrite>);
        impl Drop for Unqueue<'_> {
            fn drop(&mut self) {
                if let Some(shared) = self.0 {
                    shared.unqueue(1);
                }
            }
        }
        let mut guard = Unqueue(self.direct.as_deref());
        let result = self.tx.send(frame).await;
        if result.is_ok() {
            guard.0 = None;
        }
        result.map_err(|e| SendError::Closed(e.0))
    }

    fn unqueue(&self) {
        if let Some(shared) = &self.direct {
            shared.unqueue(1);
        }
    }

    /// True once the transport has stopped taking frames.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed() || self.direct.as_ref().is_some_and(|d| d.is_released())
    }
}

fn memchr_newline(frame: &[u8]) -> bool {
    memchr::memchr(b'\n', frame).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn busy_too_large_newline_and_closed_hand_the_frame_back() {
        let (tx, mut rx) = FrameSender::channel(1);
        let tx = tx.max_frame_len(4).reject_newlines(true);
        tx.try_send(Bytes::from_static(b"{}")).unwrap();
        assert!(
            matches!(tx.try_send(Bytes::from_static(b"[]")), Err(SendError::Busy(f)) if f == "[]")
        );
        assert!(matches!(
            tx.try_send(Bytes::from_static(b"12345")),
            Err(SendError::TooLarge(_, 4))
        ));
        assert!(matches!(
            tx.try_send(Bytes::from_static(b"{\n}")),
            Err(SendError::EmbeddedNewline(_))
        ));
        assert_eq!(rx.recv().await.unwrap(), "{}");
        drop(rx);
        let err = tx.send(Bytes::from_static(b"1")).await.unwrap_err();
        assert_eq!(err.into_frame(), "1");
        assert!(tx.is_closed());
    }

    #[tokio::test]
    async fn receive_only_refuses_at_send_time() {
        let (tx, _rx) = FrameSender::channel(4);
        let tx = tx.receive_only();
        assert!(
            matches!(tx.try_send(Bytes::from_static(b"{}")), Err(SendError::NotSupported(f)) if f == "{}")
        );
        assert!(matches!(
            tx.send(Bytes::from_static(b"[]")).await,
            Err(SendError::NotSupported(_))
        ));
    }
}
