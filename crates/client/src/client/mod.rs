//! The handle a user holds: the [`Client`](crate::Client) itself
//! (`handle`: connecting, its state, what the server said of itself,
//! closing) and the [`Call`](crate::Call) every typed request is (`call`:
//! a builder that takes `RequestOptions` and runs when awaited), with the
//! option setters every request builder shares (`setters`).
//!
//! It uses `session` to run the connections. The requests a call runs are
//! in `crate::ops`, the client's methods that make them in `crate::api`.

// The macro first: it is in scope for the modules after it.
#[macro_use]
mod setters;
pub(crate) mod handle;
pub(crate) mod call;
