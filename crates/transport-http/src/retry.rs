use std::future::Future;
use std::time::{Duration, Instant};

use mcpwire_transport::{Jitter, TransportError};

use crate::error::Error;

/// The one retry policy of the HTTP transports, shared by SSE reconnects and
/// retryable POSTs.
///
/// Delays grow exponentially from [`initial_delay`](Self::initial_delay) up to
/// [`max_delay`](Self::max_delay), each jittered to between half and all of
/// its nominal value so that clients cut off together do not come back
/// together (the schedule of [`mcpwire_transport::Backoff`], which the
/// client's reconnection shares). A server's SSE `retry:` field replaces the computed delay, and a
/// `Retry-After` header (on 429 and 503) is a floor under it.
///
/// The **budget** counts attempts and time since the last *progress*, where
/// progress means a message (an SSE event with data, or a successful answer)
/// was received. A server that accepts a connection and closes it gracefully
/// without sending anything makes no progress, so a server doing that forever
/// exhausts the budget instead of being polled forever.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    initial_delay: Duration,
    max_delay: Duration,
    max_attempts: u32,
    max_elapsed: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(30),
            max_attempts: 8,
            max_elapsed: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn never() -> Self {
        Self::default().max_attempts(0)
    }

    /// The first backoff delay, before jitter. Default: 250 ms.
    #[must_use]
    pub fn initial_delay(mut self, delay: Duration) -> Self {
        self.initial_delay = delay;
        self
    }

    /// The largest computed backoff delay (the cap). Default: 30 s. A server's
    /// `retry:` or `Retry-After` may ask for longer; the budget still applies.
    #[must_use]
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// How many consecutive attempts may be made without progress. Default: 8.
    #[must_use]
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// How long retrying may go on without progress. Default: 5 minutes.
    #[must_use]
    pub fn max_elapsed(mut self, elapsed: Duration) -> Self {
        self.max_elapsed = elapsed;
        self
    }

    /// The delays, before a server's `retry:` or `Retry-After` and the
    /// budget have their say.
    fn schedule(&self) -> mcpwire_transport::Backoff {
        mcpwire_transport::Backoff::new(self.initial_delay, self.max_delay, Jitter::DOWN_TO_HALF)
    }

    pub(crate) fn backoff(&self) -> Backoff {
        Backoff {
            policy: self.clone(),
            attempts: 0,
            since: Instant::now(),
            server_retry: None,
        }
    }
}

/// The state of one retried operation (one SSE stream, one POST).
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    policy: RetryPolicy,
    attempts: u32,
    since: Instant,
    server_retry: Option<Duration>,
}

impl Backoff {
    /// Records progress: the budget starts over.
    pub(crate) fn progress(&mut self) {
        self.attempts = 0;
        self.since = Instant::now();
    }

    /// Records the server's SSE `retry:` field, which replaces computed delays.
    pub(crate) fn server_retry(&mut self, millis: u64) {
        self.server_retry = Some(Duration::from_millis(millis));
    }

    /// The delay before the next attempt, or `None` when the budget is spent.
    /// `floor` is a `Retry-After` the server asked for.
    pub(crate) fn next_delay(&mut self, floor: Option<Duration>) -> Option<Duration> {
        if self.attempts >= self.policy.max_attempts {
            return None;
        }
        let jittered = self.policy.schedule().delay(self.attempts);
        let delay = self
            .server_retry
            .unwrap_or(jittered)
            .max(floor.unwrap_or_default());
        if self.since.elapsed() + delay > self.policy.max_elapsed {
            return None;
        }
        self.attempts += 1;
        Some(delay)
    }
}

/// What one attempt of a retried operation (reopening a stream) came to.
pub(crate) enum Attempt<T> {
    /// It succeeded.
    Done(T),
    /// It failed in a way that waiting may mend: `error` is what is
    /// reported if the budget runs out first, `floor` the server's
    /// `Retry-After`.
    Again {
        error: Error,
        floor: Option<Duration>,
    },
    /// It failed for good.
    Stop(TransportError),
}

impl<T> Attempt<T> {
    /// An attempt to make after the policy's first delay, as when a stream
    /// has just ended.
    pub(crate) fn after_an_end() -> Self {
        Attempt::Again {
            error: Error::StreamEnded,
            floor: None,
        }
    }
}

/// Why a retried operation gave up.
pub(crate) enum GaveUp {
    /// An attempt failed for good.
    Stopped(TransportError),
    /// The budget ran out; the last attempt's error.
    Exhausted(Error),
}

impl Backoff {
    /// The one reconnect loop of the HTTP transports. `first` is what the
    /// operation's first attempt came to; while an attempt asks to be made
    /// again, waits as the policy says (at least the server's
    /// `Retry-After`) and makes the next with `again`, until one is done,
    /// one stops, or the budget runs out.
    pub(crate) async fn retry<T, Fut>(
        &mut self,
        first: Attempt<T>,
        mut again: impl FnMut() -> Fut,
    ) -> Result<T, GaveUp>
    where
        Fut: Future<Output = Attempt<T>>,
    {
        let mut attempt = first;
        loop {
            let (error, floor) = match attempt {
                Attempt::Done(done) => return Ok(done),
                Attempt::Stop(error) => return Err(GaveUp::Stopped(error)),
                Attempt::Again { error, floor } => (error, floor),
            };
            let Some(delay) = self.next_delay(floor) else {
                return Err(GaveUp::Exhausted(error));
            };
            tokio::time::sleep(delay).await;
            attempt = again().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_with_jitter_under_the_cap_and_the_budget_ends() {
        let policy = RetryPolicy::default()
            .initial_delay(Duration::from_millis(100))
            .max_delay(Duration::from_millis(400))
            .max_attempts(5);
        let mut b = policy.backoff();
        let delays: Vec<_> = std::iter::from_fn(|| b.next_delay(None)).collect();
        assert_eq!(delays.len(), 5);
        let nominal = [100u64, 200, 400, 400, 400];
        for (d, n) in delays.iter().zip(nominal) {
            let n = Duration::from_millis(n);
            assert!(*d >= n / 2 && *d <= n, "{d:?} not within jitter of {n:?}");
        }
    }

    #[test]
    fn progress_resets_the_budget_and_server_values_win() {
        let mut b = RetryPolicy::default().max_attempts(1).backoff();
        assert!(b.next_delay(None).is_some());
        assert!(b.next_delay(None).is_none());
        b.progress();
        b.server_retry(1234);
        assert_eq!(b.next_delay(None), Some(Duration::from_millis(1234)));
        b.progress();
        assert_eq!(
            b.next_delay(Some(Duration::from_secs(3))),
            Some(Duration::from_secs(3))
        );
    }

    #[test]
    fn a_delay_past_the_elapsed_budget_is_refused() {
        let mut b = RetryPolicy::default()
            .max_elapsed(Duration::from_secs(1))
            .backoff();
        assert!(b.next_delay(Some(Duration::from_secs(2))).is_none());
    }
}
