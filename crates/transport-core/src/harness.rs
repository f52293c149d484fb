//! [`GrantHarness`]: a test driver that checks the active-once contract.

use std::time::Duration;

use bytes::Bytes;

use crate::{Active, CloseReason, Transport, TransportEvent, TransportExt};

/// Drives any [`Transport`] one grant at a time and checks that nothing is
/// delivered without one, in the spirit of tower-test's `allow(n)`.
///
/// Every check is behavioural: the harness never looks inside the transport.
/// Before each grant it polls the transport for a quiet period and fails if a
/// frame arrives; after the granted frame it polls again, with the grant used
/// up, and fails if a second one arrives. Other events (stderr lines,
/// non-fatal errors, undelivered frames) are collected for the test to
/// inspect. Test code only: the quiet periods cost real time.
#[derive(Debug)]
pub struct GrantHarness<T> {
    transport: T,
    events: Vec<TransportEvent>,
    closed: Option<CloseReason>,
    quiet: Duration,
    timeout: Duration,
}

/// How the transport broke the contract, or why the harness gave up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// A frame arrived while no grant was outstanding.
    #[error("a frame was delivered without a grant")]
    FrameWithoutGrant(Bytes),
    /// No frame arrived within the timeout although a grant was outstanding.
    #[error("no frame arrived within the timeout")]
    Timeout,
    /// The transport reported `Closed` (kept in [`GrantHarness::closed`]).
    #[error("the transport closed")]
    Closed,
    /// The transport returned an event after `Closed`, or `None` before it.
    #[error("the transport broke the closing contract")]
    BadClose,
}

impl<T: Transport> GrantHarness<T> {
    /// Wraps a transport, which must be new (paused by contract); the harness
    /// grants nothing until asked. Quiet period 50 ms, timeout 10 s.
    pub fn new(transport: T) -> Self {
        Self {
            transport,
            events: Vec::new(),
            closed: None,
            quiet: Duration::from_millis(50),
            timeout: Duration::from_secs(10),
        }
    }

    /// How long to watch for an ungranted frame at each check.
    #[must_use]
    pub fn quiet_period(mut self, quiet: Duration) -> Self {
        self.quiet = quiet;
        self
    }

    /// How long to wait for a granted frame.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Polls without granting for the quiet period; fails if a frame arrives.
    pub async fn assert_no_frame(&mut self) -> Result<(), HarnessError> {
        let deadline = tokio::time::Instant::now() + self.quiet;
        while self.closed.is_none() {
            match tokio::time::timeout_at(deadline, self.transport.next_event()).await {
                Err(_) => break,
                Ok(event) => {
                    if let Some(frame) = self.record(event)? {
                        return Err(HarnessError::FrameWithoutGrant(frame));
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks that nothing arrives without a grant, grants exactly one frame,
    /// waits for it, and checks that the grant is used up (no second frame
    /// arrives during the quiet period).
    pub async fn next_frame(&mut self) -> Result<Bytes, HarnessError> {
        self.assert_no_frame().await?;
        if self.closed.is_some() {
            return Err(HarnessError::Closed);
        }
        self.transport.set_active(Active::Once);
        let deadline = tokio::time::Instant::now() + self.timeout;
        let frame = loop {
            if self.closed.is_some() {
                return Err(HarnessError::Closed);
            }
            match tokio::time::timeout_at(deadline, self.transport.next_event()).await {
                Err(_) => return Err(HarnessError::Timeout),
                Ok(event) => {
                    if let Some(frame) = self.record(event)? {
                        break frame;
                    }
                }
            }
        };
        self.assert_no_frame().await?;
        Ok(frame)
    }

    /// Waits (granting nothing) for `Closed` and returns its reason.
    pub async fn closed_reason(&mut self) -> Result<CloseReason, HarnessError> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            if let Some(reason) = &self.closed {
                return Ok(reason.clone());
            }
            match tokio::time::timeout_at(deadline, self.transport.next_event()).await {
                Err(_) => return Err(HarnessError::Timeout),
                Ok(event) => {
                    if let Some(frame) = self.record(event)? {
                        return Err(HarnessError::FrameWithoutGrant(frame));
                    }
                }
            }
        }
    }

    /// The `Closed` reason, once reported.
    pub fn closed(&self) -> Option<&CloseReason> {
        self.closed.as_ref()
    }

    /// Takes the non-frame events collected so far.
    pub fn take_events(&mut self) -> Vec<TransportEvent> {
        std::mem::take(&mut self.events)
    }

    /// The transport, to send frames or close it.
    pub fn transport(&mut self) -> &mut T {
        &mut self.transport
    }

    /// Gives the transport back.
    pub fn into_inner(self) -> T {
        self.transport
    }

    /// Files one event; returns the frame if it was one.
    fn record(&mut self, event: Option<TransportEvent>) -> Result<Option<Bytes>, HarnessError> {
        match event {
            None => Err(HarnessError::BadClose),
            Some(_) if self.closed.is_some() => Err(HarnessError::BadClose),
            Some(TransportEvent::Frame(frame)) => Ok(Some(frame)),
            Some(TransportEvent::Closed(reason)) => {
                self.closed = Some(reason);
                Ok(None)
            }
            Some(other) => {
                self.events.push(other);
                Ok(None)
            }
        }
    }
}
