//! Sessions: one connection's life, and the client's across connections.
//! Which era each server speaks, remembered (`era_cache`); what the parts
//! of the live connection share (`live`); the handshake of either era
//! (`lifecycle`); the driver task that owns the transport and reads it
//! (`driver`); requests that take more than one round trip (`rounds`); what
//! the client's handles and its connection task share (`client_core`); the
//! stateless era's notification stream (`listen`); one connection from open
//! to end (`connection`); and the connection task that reconnects
//! (`supervisor`).
//!
//! It uses every layer below (`base`, `observe`, `cache`, `config`,
//! `notify`, `requests`) and the wire types. Of all this, only
//! `TransportFactory` is public.

pub(crate) mod era_cache;
pub(crate) mod live;
pub(crate) mod lifecycle;
pub(crate) mod driver;
pub(crate) mod rounds;
pub(crate) mod client_core;
pub(crate) mod listen;
pub(crate) mod connection;
pub(crate) mod supervisor;
