//! [`Inbox`]: what the transport (its owner's side) and the driver task
//! share: the grants, the messages read for the owner, the events, and who
//! to wake.
//!
//! One mutex guards it all, held for a few field updates at a time and
//! never across an await. The driver reads a message from the socket only
//! while the owner holds more grants than messages already wait for it (and
//! fewer than `read_ahead` wait), or, holding none, while nothing waits:
//! that check is the flow control.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Waker};

use bytes::Bytes;
use mcpwire_transport::{Active, CloseReason, Grants, TransportError, TransportEvent};

use crate::Error;

/// What [`WsTransport`](crate::WsTransport) and its driver share: the messages
/// and events read for the owner, its grants, and the connection's end.
#[derive(Debug)]
pub(crate) struct Inbox {
    state: Mutex<State>,
    read_ahead: usize,
}

#[derive(Debug, Default)]
struct State {
    grants: Grants,
    /// Messages read for the owner, oldest first; each uses a grant when
    /// delivered.
    frames: VecDeque<Bytes>,
    /// Non-fatal errors and undelivered frames, delivered without grants.
    events: VecDeque<TransportEvent>,
    /// Binary messages dropped and not yet reported: the latest one's length
    /// and how many so far. Kept as one pending report so a server that
    /// floods binary messages cannot grow `events`.
    binary: Option<(usize, u64)>,
    binary_total: u64,
    /// Why the connection ended, set once by the driver.
    end: Option<CloseReason>,
    /// The driver has finished (the socket is released).
    finished: bool,
    close_requested: bool,
    owner: Option<Waker>,
    driver: Option<Waker>,
}

/// What the driver may do now.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DriverView {
    /// The owner asked to close.
    pub(crate) close_requested: bool,
    /// The owner holds a grant for one more message than already waits.
    pub(crate) may_read: bool,
}

fn wake(slot: &mut Option<Waker>) {
    if let Some(w) = slot.take() {
        w.wake();
    }
}

fn register(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

impl State {
    /// Whether the driver may read one more message: while the owner holds
    /// a grant for more than already waits (up to `read_ahead`), and, with
    /// no grant at all, while nothing waits. That one message of read-ahead
    /// is what lets a paused owner learn of the server's close (or have a
    /// ping answered) while nothing is pending, as the contract promises;
    /// past it the socket is not read and TCP pushes the server back.
    fn may_read(&self, read_ahead: usize) -> bool {
        let waiting = self.frames.len();
        waiting < read_ahead && ((self.grants.remaining() as usize) > waiting || waiting == 0)
    }
}

impl Inbox {
    pub(crate) fn new(read_ahead: usize) -> Self {
        Self {
            state: Mutex::new(State::default()),
            read_ahead: read_ahead.max(1),
        }
    }

    /// The one way to take the lock: a panic elsewhere never poisons the
    /// transport (every update leaves the state consistent).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    // The driver's side.

    /// What the driver may do, registering it to be woken when that changes.
    pub(crate) fn driver_view(&self, cx: &Context<'_>) -> DriverView {
        let mut s = self.lock();
        register(&mut s.driver, cx);
        DriverView {
            close_requested: s.close_requested,
            may_read: s.may_read(self.read_ahead),
        }
    }

    /// A text message for the owner.
    pub(crate) fn push_frame(&self, frame: Bytes) {
        let mut s = self.lock();
        s.frames.push_back(frame);
        wake(&mut s.owner);
    }

    /// A binary message was dropped.
    pub(crate) fn binary_dropped(&self, len: usize) {
        let mut s = self.lock();
        s.binary_total += 1;
        s.binary = Some((len, s.binary_total));
        wake(&mut s.owner);
    }

    /// A non-fatal event for the owner.
    pub(crate) fn push_event(&self, event: TransportEvent) {
        let mut s = self.lock();
        s.events.push_back(event);
        wake(&mut s.owner);
    }

    /// The connection ended: the frames that were not sent come back to the
    /// owner first, then `reason`.
    pub(crate) fn finish(&self, reason: CloseReason, undelivered: Vec<(Bytes, TransportError)>) {
        let mut s = self.lock();
        for (frame, error) in undelivered {
            s.events
                .push_back(TransportEvent::Undelivered { frame, error });
        }
        s.end.get_or_insert(reason);
        s.finished = true;
        wake(&mut s.owner);
    }

    // The owner's side.

    /// Replaces the grants; wakes the driver if it may now read.
    pub(crate) fn set_active(&self, active: Active) {
        let mut s = self.lock();
        s.grants.set(active);
        if s.may_read(self.read_ahead) {
            wake(&mut s.driver);
        }
    }

    /// Asks the driver to close; true the first time.
    pub(crate) fn request_close(&self) -> bool {
        let mut s = self.lock();
        let first = !s.close_requested;
        s.close_requested = true;
        wake(&mut s.driver);
        first
    }

    /// True once the driver has finished; otherwise the owner is woken when
    /// it does.
    pub(crate) fn poll_finished(&self, cx: &Context<'_>) -> bool {
        let mut s = self.lock();
        if !s.finished {
            register(&mut s.owner, cx);
        }
        s.finished
    }

    /// The next event for the owner, or `None` (the owner is then woken
    /// when there is one). `Closed` comes last, once no frame the owner
    /// granted is left; after a close request it comes at once, with
    /// [`CloseReason::Local`].
    pub(crate) fn next_event(&self, cx: &Context<'_>) -> Option<TransportEvent> {
        let mut s = self.lock();
        if s.close_requested {
            return Some(TransportEvent::Closed(CloseReason::Local));
        }
        if let Some(event) = s.events.pop_front() {
            return Some(event);
        }
        if let Some((len, total)) = s.binary.take() {
            let error = TransportError::from(Error::BinaryMessage { len, total });
            return Some(TransportEvent::Error(error));
        }
        if s.grants.any()
            && let Some(frame) = s.frames.pop_front()
        {
            s.grants.take();
            // A slot of the read-ahead is free again.
            if s.may_read(self.read_ahead) {
                wake(&mut s.driver);
            }
            return Some(TransportEvent::Frame(frame));
        }
        if s.frames.is_empty()
            && let Some(reason) = &s.end
        {
            return Some(TransportEvent::Closed(reason.clone()));
        }
        register(&mut s.owner, cx);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU32;
    use std::task::Waker;

    fn cx() -> Context<'static> {
        Context::from_waker(Waker::noop())
    }

    #[test]
    fn the_driver_may_read_only_for_grants_beyond_what_waits() {
        let inbox = Inbox::new(2);
        let cx = cx();
        // Paused with nothing waiting: one message of read-ahead.
        assert!(inbox.driver_view(&cx).may_read);
        inbox.push_frame(Bytes::from_static(b"0"));
        assert!(!inbox.driver_view(&cx).may_read);
        inbox.set_active(Active::Once);
        assert!(!inbox.driver_view(&cx).may_read);
        assert!(matches!(inbox.next_event(&cx), Some(TransportEvent::Frame(f)) if f == "0"));
        assert!(inbox.driver_view(&cx).may_read);
        inbox.set_active(Active::Once);
        inbox.push_frame(Bytes::from_static(b"1"));
        assert!(!inbox.driver_view(&cx).may_read);
        inbox.set_active(Active::Many(NonZeroU32::new(10).unwrap()));
        assert!(inbox.driver_view(&cx).may_read);
        inbox.push_frame(Bytes::from_static(b"2"));
        // Read-ahead full, grants or not.
        assert!(!inbox.driver_view(&cx).may_read);
        assert!(matches!(inbox.next_event(&cx), Some(TransportEvent::Frame(f)) if f == "1"));
        assert!(inbox.driver_view(&cx).may_read);
    }

    #[test]
    fn closed_waits_behind_granted_frames_and_binary_reports_coalesce() {
        let inbox = Inbox::new(4);
        let cx = cx();
        inbox.set_active(Active::Once);
        inbox.push_frame(Bytes::from_static(b"1"));
        inbox.set_active(Active::Paused);
        for len in [3, 4, 5] {
            inbox.binary_dropped(len);
        }
        inbox.finish(CloseReason::Eof, Vec::new());
        let e = inbox.next_event(&cx);
        assert!(
            matches!(&e, Some(TransportEvent::Error(TransportError::Other(o))) if o.to_string().contains("5 bytes (3 so far)")),
            "{e:?}"
        );
        // Paused with a frame waiting: nothing yet.
        assert!(inbox.next_event(&cx).is_none());
        inbox.set_active(Active::Once);
        assert!(matches!(
            inbox.next_event(&cx),
            Some(TransportEvent::Frame(_))
        ));
        assert!(matches!(
            inbox.next_event(&cx),
            Some(TransportEvent::Closed(CloseReason::Eof))
        ));
    }
}
