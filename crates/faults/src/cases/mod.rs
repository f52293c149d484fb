//! The fault cases, one function each, registered in [`all`] with the
//! criterion the case checks. Each case builds its own peers and clients
//! and drops them before it returns; the runner then checks for leaked
//! processes and descriptors.

mod check;
mod net;
mod shared;
mod http;
mod stdio;

use crate::runner::Case;

/// Every case, in the order they run.
pub fn all() -> Vec<Case> {
    let mut cases = stdio::cases();
    cases.extend(http::cases());
    cases.extend(net::cases());
    cases
}
