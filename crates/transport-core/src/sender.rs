use bytes::Bytes;
use tokio::sync::mpsc;

use crate::SendError;

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

    fn check(&self, frame: Bytes) -> Result<Bytes, SendError> {
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
        self.tx.try_send(frame).map_err(|e| match e {
            mpsc::error::TrySendError::Full(f) => SendError::Busy(f),
            mpsc::error::TrySendError::Closed(f) => SendError::Closed(f),
        })
    }

    /// Queues `frame`, waiting for room. Cancel-safe: if the future is dropped
    /// before it completes, the frame was not queued.
    pub async fn send(&self, frame: Bytes) -> Result<(), SendError> {
        let frame = self.check(frame)?;
        self.tx
            .send(frame)
            .await
            .map_err(|e| SendError::Closed(e.0))
    }

    /// True once the transport has stopped taking frames.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
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
}
