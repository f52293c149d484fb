//! What the cases check with: bounded waits, expected error kinds, the
//! chain of causes.

use std::error::Error as StdError;
use std::future::Future;
use std::time::{Duration, Instant};

use mcpwire_client::{Error, ErrorKind};

/// Fails unless `f` finishes within `bound`; returns its output and the
/// time it took.
pub(super) async fn within<F: Future>(
    bound: Duration,
    what: &str,
    f: F,
) -> Result<(F::Output, Duration), String> {
    let started = Instant::now();
    match tokio::time::timeout(bound, f).await {
        Ok(out) => Ok((out, started.elapsed())),
        Err(_) => Err(format!("{what} did not finish within {bound:?}")),
    }
}

/// Fails unless `result` is an error of `kind`; returns the error.
pub(super) fn expect_err<T: std::fmt::Debug>(
    result: Result<T, Error>,
    kind: ErrorKind,
    what: &str,
) -> Result<Error, String> {
    match result {
        Ok(v) => Err(format!(
            "{what} succeeded ({v:?}); expected a {kind:?} error"
        )),
        Err(e) if e.kind() == kind => Ok(e),
        Err(e) => Err(format!(
            "{what} failed with {:?} ({}); expected {kind:?}",
            e.kind(),
            chain(&e)
        )),
    }
}

/// The error and its causes, one level each, joined with `: `.
pub(super) fn chain(e: &(dyn StdError + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        parts.push(s.to_string());
        cur = s.source();
    }
    parts.join(": ")
}

/// The first `io::Error` in `e`'s chain of causes.
pub(super) fn io_cause<'a>(e: &'a (dyn StdError + 'static)) -> Option<&'a std::io::Error> {
    let mut cur: Option<&'a (dyn StdError + 'static)> = Some(e);
    while let Some(s) = cur {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        cur = s.source();
    }
    None
}

pub(super) fn ms(d: Duration) -> u128 {
    d.as_millis()
}

/// `<kind> after <n> ms: <error and causes>`.
pub(super) fn describe(e: &Error, took: Duration) -> String {
    format!("{:?} after {} ms: {}", e.kind(), ms(took), chain(e))
}
