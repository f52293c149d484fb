//! Requests in both directions over one connection. Ours: the table of
//! requests waiting for their answer, with the one timer of their deadlines
//! (`pending`), and the engine that numbers, encodes, sends and completes
//! them (`engine`). The server's: each request it sends (sampling, roots,
//! elicitation) run on its own task by the user's handler (`dispatch`).
//!
//! It uses `base`, `observe`, `config` and the wire types. It knows nothing
//! of how a session starts or ends: that is `session`'s.

pub(crate) mod pending;
pub(crate) mod engine;
pub(crate) mod dispatch;
