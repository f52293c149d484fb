//! The one delay schedule of every retry in mcpwire: an HTTP transport's
//! retried POSTs and SSE reconnects, and the client's reconnection after a
//! lost connection.
//!
//! Each keeps its own budget (how many attempts, for how long, what counts
//! as progress); the delays themselves grow and spread the same way here.

use std::time::Duration;

/// Doublings after which the delay stops growing even below the cap:
/// 2^20 times the first delay is far past any useful wait, and the bound
/// keeps the shift from overflowing.
const MAX_DOUBLINGS: u32 = 20;

/// Exponential backoff: the delay before retry `n` (0 for the first) is
/// `initial_delay × 2ⁿ`, capped at `max_delay`, then spread by [`Jitter`]
/// so that clients cut off together do not come back together.
///
/// Stability: for mcpwire's own transports and client; it may change with
/// them before 1.0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    initial_delay: Duration,
    max_delay: Duration,
    jitter: Jitter,
}

impl Backoff {
    /// Delays from `initial_delay`, doubling up to `max_delay`, spread by
    /// `jitter`.
    pub const fn new(initial_delay: Duration, max_delay: Duration, jitter: Jitter) -> Self {
        Self {
            initial_delay,
            max_delay,
            jitter,
        }
    }

    /// The delay before retry `retry` (0 for the first), before jitter.
    pub fn nominal(&self, retry: u32) -> Duration {
        self.initial_delay
            .saturating_mul(1u32 << retry.min(MAX_DOUBLINGS))
            .min(self.max_delay)
    }

    /// The delay before retry `retry` (0 for the first), jittered.
    pub fn delay(&self, retry: u32) -> Duration {
        self.jitter.spread(self.nominal(retry))
    }
}

/// How far a delay is spread at random: between two fractions of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Jitter {
    low: f64,
    high: f64,
}

impl Jitter {
    /// Between half and all of the delay: never longer than asked for
    /// (the HTTP transports' retries).
    pub const DOWN_TO_HALF: Jitter = Jitter {
        low: 0.5,
        high: 1.0,
    };

    /// Between `1 - fraction` and `1 + fraction` of the delay; `fraction`
    /// is taken between 0 and 1 (a NaN as 0).
    pub fn around(fraction: f64) -> Self {
        let fraction = if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        };
        Jitter {
            low: 1.0 - fraction,
            high: 1.0 + fraction,
        }
    }

    /// `delay` spread at random within these bounds.
    pub fn spread(&self, delay: Duration) -> Duration {
        delay.mul_f64(self.low + (self.high - self.low) * fastrand::f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_nominal_delay_doubles_from_the_first_up_to_the_cap() {
        let b = Backoff::new(100 * MS, 700 * MS, Jitter::DOWN_TO_HALF);
        let nominal: Vec<_> = (0..5).map(|n| b.nominal(n)).collect();
        assert_eq!(nominal, [100 * MS, 200 * MS, 400 * MS, 700 * MS, 700 * MS]);
        // Far past the doublings: capped, no overflow.
        assert_eq!(b.nominal(u32::MAX), 700 * MS);
        let uncapped = Backoff::new(MS, Duration::MAX, Jitter::around(0.0));
        assert_eq!(uncapped.nominal(40), MS * (1 << MAX_DOUBLINGS));
    }

    #[test]
    fn jitter_keeps_each_delay_within_its_bounds_and_spreads_them() {
        let down = Backoff::new(400 * MS, Duration::MAX, Jitter::DOWN_TO_HALF);
        let around = Backoff::new(400 * MS, Duration::MAX, Jitter::around(0.25));
        let (mut downs, mut arounds) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            downs.push(down.delay(0));
            arounds.push(around.delay(0));
        }
        assert!(downs.iter().all(|d| (200 * MS..=400 * MS).contains(d)));
        assert!(arounds.iter().all(|d| (300 * MS..=500 * MS).contains(d)));
        // Spread over the range, not one value: some in each half of it.
        assert!(downs.iter().any(|d| *d < 300 * MS) && downs.iter().any(|d| *d > 300 * MS));
        assert!(arounds.iter().any(|d| *d < 400 * MS) && arounds.iter().any(|d| *d > 400 * MS));
    }

    #[test]
    fn a_fraction_out_of_range_is_taken_within_it() {
        assert_eq!(Jitter::around(2.0), Jitter::around(1.0));
        assert_eq!(Jitter::around(-1.0), Jitter::around(0.0));
        assert_eq!(Jitter::around(f64::NAN), Jitter::around(0.0));
        assert_eq!(Jitter::around(0.0).spread(250 * MS), 250 * MS);
    }
}
