//! A scripted HTTP server for transport and fault tests: hyper, HTTP/1.1
//! and HTTP/2, optional TLS with a test CA, scripted bodies with delays,
//! aborts, holds and live feeds. Behind the `http` feature.
//!
//! The server records every request it received ([`Server::seen`]) and
//! answers each with what the test's handler returns ([`Reply`]). Dropping
//! it stops accepting and ends every connection it served, so a test can
//! restart a server on the same port ([`Server::start_on`]).

mod tls;
mod server;

pub use server::{ChanBody, Chunk, Generator, Reply, Seen, Server};
pub use tls::{TestCert, TestTls};
