use bytes::Bytes;
use mcpwire_transport::{TransportError, TransportEvent};
use tokio::sync::mpsc;

/// The driver's and stream tasks' side of a transport's event queues.
///
/// Frames go through a small bounded queue (the read-ahead): a task that finds
/// it full waits, stops polling its response body, and the server is pushed
/// back by TCP (or HTTP/2 flow control). Other events have their own queue so
/// they are never stuck behind frames waiting for a grant.
#[derive(Debug, Clone)]
pub(crate) struct Events {
    frames: mpsc::Sender<Bytes>,
    control: mpsc::Sender<Box<TransportEvent>>,
}

pub(crate) struct EventQueues {
    pub(crate) frames: mpsc::Receiver<Bytes>,
    /// Boxed: a tokio channel allocates its first block of 32 slots when
    /// it is made, so every session pays 32 slots of the item's size
    /// whether or not an event ever comes (about 2 KiB unboxed).
    pub(crate) control: mpsc::Receiver<Box<TransportEvent>>,
}

/// Room for non-frame events; a task finding it full waits.
const CONTROL_CAPACITY: usize = 64;

impl Events {
    pub(crate) fn new(read_ahead: usize) -> (Events, EventQueues) {
        let (frames, frames_rx) = mpsc::channel(read_ahead.max(1));
        let (control, control_rx) = mpsc::channel(CONTROL_CAPACITY);
        (
            Events { frames, control },
            EventQueues {
                frames: frames_rx,
                control: control_rx,
            },
        )
    }

    /// Queues an inbound frame, waiting while the read-ahead is full. False if
    /// the transport is gone.
    pub(crate) async fn frame(&self, frame: Bytes) -> bool {
        self.frames.send(frame).await.is_ok()
    }

    pub(crate) async fn undelivered(&self, frame: Bytes, error: TransportError) {
        tracing::debug!(%error, "frame undelivered");
        let _ = self
            .control
            .send(Box::new(TransportEvent::Undelivered { frame, error }))
            .await;
    }

    pub(crate) async fn error(&self, error: TransportError) {
        tracing::debug!(%error, "transport error");
        let _ = self
            .control
            .send(Box::new(TransportEvent::Error(error)))
            .await;
    }

    /// Sorts an SSE reader's item: an event goes on; an oversized event (the
    /// decoder dropped it and continues) is reported as a non-fatal error and
    /// skipped; a broken body ends the stream.
    pub(crate) async fn sse_item(
        &self,
        item: Result<mcpwire_codec::SseEvent, crate::Error>,
    ) -> SseStep {
        match item {
            Ok(event) => SseStep::Event(event),
            Err(crate::Error::Sse(e)) => {
                self.error(TransportError::Frame(e)).await;
                SseStep::Skip
            }
            Err(e) => {
                tracing::debug!(error = %e, "SSE stream broke");
                SseStep::End
            }
        }
    }
}

/// What to do with one item read from an SSE body.
pub(crate) enum SseStep {
    /// Handle this event.
    Event(mcpwire_codec::SseEvent),
    /// Nothing to handle; read on.
    Skip,
    /// The body is broken: stop reading it.
    End,
}
