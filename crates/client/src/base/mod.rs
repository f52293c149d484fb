//! The vocabulary every layer of the client names: the one lock helper, the
//! protocol versions and their eras, the HTTP header encodings of the
//! 2026-07-28 revision and what an era stamps on each request, `SKILL.md`
//! frontmatter, the close signal to the driver task, the error type, the
//! connection state, per-request options, and the handler traits for the
//! requests a server sends.
//!
//! It uses only the wire types (`crate::types`) and other crates: nothing
//! here knows of a connection, so every layer above may use all of it.

// Lowest layer first, like every `mod` list of this crate.
pub(crate) mod lock;
pub(crate) mod boxed;
pub(crate) mod version;
pub(crate) mod headers;
pub(crate) mod stamp;
pub(crate) mod frontmatter;
pub(crate) mod signal;
pub(crate) mod error;
pub(crate) mod state;
pub(crate) mod options;
pub(crate) mod handler;
