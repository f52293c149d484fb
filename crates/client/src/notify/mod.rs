//! Server notifications: the vocabulary of the stateless era's
//! notification stream, `subscriptions/listen` (`subscription`), and the
//! inbox where every notification arrives, routed into bounded lanes and
//! invalidating what `cache` holds when a list changes (`inbox`).
//!
//! It uses `base`, `cache` and the wire types; the driver task and the
//! listen stream (`session`) feed it.

pub(crate) mod subscription;
pub(crate) mod inbox;
