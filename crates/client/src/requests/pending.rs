//! The pending table: every request sent and not yet answered, with its
//! deadline, and the bookkeeping of the driver's one timer.
//!
//! Timeouts cost no timer per request. Each entry carries its deadline, and
//! the driver keeps one timer, armed for the earliest deadline it has been
//! told about. A caller wakes the driver only when its deadline is earlier
//! than the armed one, which with the usual single timeout never happens
//! while requests flow: deadlines then only grow. The timer is lazy: when it
//! fires the driver sweeps the table, fails what expired, and re-arms for the
//! earliest deadline left. Registering and removing a tokio timer per call
//! locked the runtime's timer wheel twice per call; this costs one
//! comparison under the lock the call takes anyway.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Duration;

use mcpwire_codec::jsonrpc::Payload;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use crate::base::error::Error;
use crate::base::lock::Mutex;
use crate::base::options::Deadline;
use crate::types::Progress;

/// Whether the server is told (`notifications/cancelled`) when a request is
/// given up: never for `initialize`, as the specification requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cancel {
    Notify,
    Silent,
}

/// Where an answer goes.
pub(crate) type Answer = oneshot::Sender<Result<Payload, Error>>;

/// One request waiting for its answer.
pub(crate) struct Pending {
    pub(crate) tx: Answer,
    pub(crate) progress: Option<watch::Sender<Option<Progress>>>,
    pub(crate) method: Cow<'static, str>,
    /// May be sent again after its session expired.
    pub(crate) replayable: bool,
    /// Set once the request is on its way: the timeout runs from then on.
    pub(crate) timer: Option<Timer>,
}

/// When a sent request times out, and how its deadline moves.
pub(crate) struct Timer {
    deadline: Instant,
    timeout: Duration,
    /// `max_total`: the deadline never moves past `start + max_total`.
    hard: Option<(Instant, Duration)>,
    rule: Deadline,
    cancel: Cancel,
}

impl Timer {
    /// A timer started `now`.
    pub(crate) fn start(
        now: Instant,
        timeout: Duration,
        max_total: Option<Duration>,
        rule: Deadline,
        cancel: Cancel,
    ) -> Self {
        let hard = max_total.map(|m| (after(now, m), m));
        let mut timer = Timer {
            deadline: now,
            timeout,
            hard,
            rule,
            cancel,
        };
        timer.deadline = timer.cap(after(now, timeout));
        timer
    }

    fn cap(&self, t: Instant) -> Instant {
        self.hard.map_or(t, |(h, _)| t.min(h))
    }

    /// What the timeout error reports: `max_total` once it is the bound
    /// that was hit, the timeout otherwise.
    fn after(&self, now: Instant) -> Duration {
        match self.hard {
            Some((h, max)) if now >= h => max,
            _ => self.timeout,
        }
    }
}

/// A request that timed out, taken out of the table by a sweep.
pub(crate) struct Expired {
    pub(crate) id: i64,
    pub(crate) tx: Answer,
    pub(crate) after: Duration,
    pub(crate) cancel: Cancel,
}

/// Hashes request ids (sequential integers) with one multiplication, which
/// spreads them over the whole word as the table's probing wants. SipHash,
/// the default, guards against chosen keys; our keys are our own ids.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap<V> = HashMap<i64, V, BuildHasherDefault<IdHasher>>;

struct Table {
    map: IdMap<Pending>,
    /// Set once the connection ended: later callers fail at once.
    closed: Option<Error>,
    /// The instant the driver's timer is armed for (or asked to be); `None`
    /// when it is not armed. Never later than the earliest deadline.
    armed: Option<Instant>,
}

/// The pending table of one connection; each method takes its lock once,
/// briefly, and never across an await.
pub(crate) struct PendingTable {
    table: Mutex<Table>,
}

impl PendingTable {
    pub(crate) fn new() -> Self {
        Self {
            table: Mutex::new(Table {
                map: IdMap::default(),
                closed: None,
                armed: None,
            }),
        }
    }

    /// Adds a request; fails with the close error once the connection ended.
    pub(crate) fn insert(&self, id: i64, entry: Pending) -> Result<(), Error> {
        let mut table = self.table.lock();
        if let Some(e) = &table.closed {
            return Err(e.clone());
        }
        table.map.insert(id, entry);
        Ok(())
    }

    /// Starts the timeout of the sent request `id`. True if the driver's
    /// timer must be re-armed for this earlier deadline.
    pub(crate) fn start_timer(&self, id: i64, timer: Timer) -> bool {
        let deadline = timer.deadline;
        let mut table = self.table.lock();
        // Already answered (or failed): nothing to time.
        let Some(entry) = table.map.get_mut(&id) else {
            return false;
        };
        entry.timer = Some(timer);
        let earlier = table.armed.is_none_or(|a| deadline < a);
        if earlier {
            table.armed = Some(deadline);
        }
        earlier
    }

    /// When the driver's timer should fire next, if at all.
    pub(crate) fn armed(&self) -> Option<Instant> {
        self.table.lock().armed
    }

    /// Takes out every request whose deadline has passed; also returns when
    /// the timer should fire next.
    pub(crate) fn sweep(&self, now: Instant) -> (Vec<Expired>, Option<Instant>) {
        let mut table = self.table.lock();
        let mut due = Vec::new();
        let mut next: Option<Instant> = None;
        for (id, p) in &table.map {
            if let Some(t) = &p.timer {
                if t.deadline <= now {
                    due.push(*id);
                } else if next.is_none_or(|n| t.deadline < n) {
                    next = Some(t.deadline);
                }
            }
        }
        let mut expired = Vec::with_capacity(due.len());
        for id in due {
            let Some(p) = table.map.remove(&id) else {
                continue;
            };
            if let Some(t) = p.timer {
                expired.push(Expired {
                    id,
                    tx: p.tx,
                    after: t.after(now),
                    cancel: t.cancel,
                });
            }
        }
        table.armed = next;
        (expired, next)
    }

    /// Takes out the request `id`, if it still waits.
    pub(crate) fn remove(&self, id: i64) -> Option<Pending> {
        self.table.lock().map.remove(&id)
    }

    /// Routes progress to the request whose token it carries, moving its
    /// deadline if it asked for that.
    pub(crate) fn progress(&self, token: i64, progress: Progress) {
        let mut table = self.table.lock();
        let Some(entry) = table.map.get_mut(&token) else {
            return;
        };
        // The deadline only moves later, so the driver's timer (armed no
        // later than the old one) needs no re-arming: it fires, finds
        // nothing due, and re-arms for the new deadline.
        if let Some(t) = entry
            .timer
            .as_mut()
            .filter(|t| t.rule == Deadline::ResetOnProgress)
        {
            t.deadline = t.cap(after(Instant::now(), t.timeout));
        }
        if let Some(tx) = &entry.progress {
            // `send_replace` never blocks: progress for one token coalesces.
            tx.send_replace(Some(progress));
        }
    }

    /// Whether the pending request `id` may be sent again, and its method.
    pub(crate) fn replay_info(&self, id: i64) -> Option<(bool, Cow<'static, str>)> {
        let table = self.table.lock();
        table.map.get(&id).map(|p| (p.replayable, p.method.clone()))
    }

    /// Takes out every request and refuses new ones with `error`.
    pub(crate) fn close(&self, error: Error) -> Vec<Pending> {
        let mut table = self.table.lock();
        table.closed = Some(error);
        table.armed = None;
        table.map.drain().map(|(_, p)| p).collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.table.lock().map.len()
    }
}

/// `t + d`, or about thirty years from `t` when that overflows (a timeout
/// of `Duration::MAX` means "never").
pub(crate) fn after(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .unwrap_or_else(|| t + Duration::from_secs(86_400 * 365 * 30))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_timeout_does_not_overflow() {
        let now = Instant::now();
        assert!(after(now, Duration::MAX) > now + Duration::from_secs(86_400 * 365));
        assert_eq!(
            after(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
    }
}
