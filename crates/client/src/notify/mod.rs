//! Server notifications: the vocabulary of the stateless era's
//! notification stream, `subscriptions/listen` (`subscription`), and the
//! bounded lanes every notification is routed into, which also invalidate
//! what `cache` holds when a list changes (`lanes`).
//!
//! It uses `base`, `cache` and the wire types; the driver task and the
//! listen stream (`session`) feed it.

pub(crate) mod subscription;
pub(crate) mod lanes;
