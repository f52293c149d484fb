//! What the driver task is asked to do besides reading: close the transport
//! (and why: a [`CloseRequest`]), or re-arm its timeout timer. A flag word
//! plus the driver's waker: cheaper to poll on every event than a channel or
//! a `watch`.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Waker};

use crate::base::lock::Mutex;

/// Why we close a connection ourselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CloseRequest {
    /// The user called `close` (or dropped the last handle).
    User,
    /// The handshake failed; the error is the connection's outcome.
    HandshakeFailed,
    /// Keepalive pings failed this many times in a row.
    Keepalive { failures: u32 },
}

impl fmt::Display for CloseRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseRequest::User => f.write_str("closed by the client"),
            CloseRequest::HandshakeFailed => f.write_str("closed after a failed handshake"),
            CloseRequest::Keepalive { failures } => {
                write!(f, "closed after {failures} failed keepalive pings in a row")
            }
        }
    }
}

/// The driver should close the transport.
pub(crate) const SIGNAL_CLOSE: u8 = 1;
/// The driver should re-arm its timer for the pending table's earliest
/// deadline.
pub(crate) const SIGNAL_REARM: u8 = 2;
/// The driver should read what the transport says of its session (its id,
/// once a handshake set one) for the connection's spans.
pub(crate) const SIGNAL_SESSION: u8 = 4;

/// The driver's mailbox: raised flags, the first close request, its waker.
#[derive(Default)]
pub(crate) struct DriverSignal {
    flags: AtomicU8,
    waker: Mutex<Option<Waker>>,
    /// Why the driver was asked to close (the first reason given).
    close: Mutex<Option<CloseRequest>>,
}

impl DriverSignal {
    /// Raises `flag` and wakes the driver.
    pub(crate) fn raise(&self, flag: u8) {
        self.flags.fetch_or(flag, Ordering::AcqRel);
        let waker = self.waker.lock().take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Registers the driver's waker, then takes the raised flags. Flags
    /// raised after this wake the registered waker.
    pub(crate) fn poll_take(&self, cx: &Context<'_>) -> u8 {
        {
            let mut slot = self.waker.lock();
            if !slot.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *slot = Some(cx.waker().clone());
            }
        }
        self.flags.swap(0, Ordering::AcqRel)
    }

    /// Asks the driver to close the transport; the first reason is kept.
    pub(crate) fn request_close(&self, why: CloseRequest) {
        {
            let mut slot = self.close.lock();
            if slot.is_some() {
                return;
            }
            *slot = Some(why);
        }
        self.raise(SIGNAL_CLOSE);
    }

    /// Why the driver was asked to close, if it was.
    pub(crate) fn close_request(&self) -> Option<CloseRequest> {
        self.close.lock().clone()
    }
}
