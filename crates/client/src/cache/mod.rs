//! What the client keeps of the server's answers: the response cache's
//! entries, in a store shared between clients or a client's own (`store`);
//! one client's view of that store: which store, which server, whose
//! private answers it may see, how long an answer is kept (`view`); and each
//! tool's output schema, compiled once (`schema`).
//!
//! It uses `base` and the wire types. What invalidates an entry (a
//! notification, a new session) is decided above, in `notify` and
//! `session`.

pub(crate) mod store;
pub(crate) mod view;
pub(crate) mod schema;
