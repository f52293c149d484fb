//! Moving a value out of its box so the allocation is freed at once.
//!
//! `let x = *boxed;` moves the value but keeps the box's allocation until
//! `boxed` goes out of scope; in an `async` block that is the end of the
//! block, so a connect future would hold its boxed configuration through
//! the whole handshake. Passing the box to [`unbox`] frees it on return.

/// The value out of `boxed`, its allocation freed now.
#[expect(
    clippy::boxed_local,
    reason = "taking the box is the point: it is freed on return"
)]
pub(crate) fn unbox<T>(boxed: Box<T>) -> T {
    *boxed
}
