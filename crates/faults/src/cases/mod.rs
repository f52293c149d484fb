//! The fault cases, one function each, registered in [`all`] with the
//! criterion the case checks. Each case builds its own peers and clients
//! and drops them before it returns; the runner then checks for leaked
//! processes and descriptors.

mod http;
mod net;
mod shared;
mod stdio;

use std::error::Error as StdError;
use std::future::Future;
use std::time::{Duration, Instant};

use mcpwire_client::{Error, ErrorKind};

use crate::runner::Case;

/// Every case, in the order they run.
pub fn all() -> Vec<Case> {
    let mut cases = stdio::cases();
    cases.extend(http::cases());
    cases.extend(net::cases());
    cases
}

/// Fails unless `f` finishes within `bound`; returns its output and the
/// time it took.
async fn within<F: Future>(
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
fn expect_err<T: std::fmt::Debug>(
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
fn chain(e: &(dyn StdError + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        parts.push(s.to_string());
        cur = s.source();
    }
    parts.join(": ")
}

/// The first `io::Error` in `e`'s chain of causes.
fn io_cause<'a>(e: &'a (dyn StdError + 'static)) -> Option<&'a std::io::Error> {
    let mut cur: Option<&'a (dyn StdError + 'static)> = Some(e);
    while let Some(s) = cur {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        cur = s.source();
    }
    None
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

/// `<kind> after <n> ms: <error and causes>`.
fn describe(e: &Error, took: Duration) -> String {
    format!("{:?} after {} ms: {}", e.kind(), ms(took), chain(e))
}
