//! Message taps: an observer of every frame a transport sends and
//! receives, with the header fields it sends them with, that changes
//! nothing of what goes over the wire.
//!
//! This module is the vocabulary; `crate::tapped` puts a tap on a
//! transport.

use std::fmt;

/// Which way a tapped frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Direction {
    /// From us to the peer.
    Sent,
    /// From the peer to us.
    Received,
}

/// One frame, as a [`Tap`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Tapped<'a> {
    /// Which way it went.
    pub direction: Direction,
    /// The frame: one JSON-RPC message, as sent or received.
    pub frame: &'a [u8],
    /// The header fields sent with it, in order, for transports whose
    /// messages have headers (HTTP): the MCP headers, the session's, the
    /// content negotiation and the user's own (not the framing fields the
    /// HTTP library writes as it sends: `Host`, `Content-Length`). Credentials
    /// (`Authorization`, `Proxy-Authorization`, `DPoP`, `Cookie`) are
    /// shown as [`REDACTED`], so a tap that logs cannot leak them. Empty
    /// for other transports and for received frames.
    pub headers: &'a [(&'a str, &'a str)],
}

impl<'a> Tapped<'a> {
    /// A frame with no header fields.
    pub fn new(direction: Direction, frame: &'a [u8]) -> Self {
        Self {
            direction,
            frame,
            headers: &[],
        }
    }

    /// The same frame with `headers`.
    #[must_use]
    pub fn with_headers(mut self, headers: &'a [(&'a str, &'a str)]) -> Self {
        self.headers = headers;
        self
    }
}

/// What a [`Tap`] is shown instead of a credential header's value.
pub const REDACTED: &str = "[redacted]";

/// True for header fields whose values are credentials, never shown to a
/// tap: `Authorization`, `Proxy-Authorization`, `DPoP`, `Cookie`, and any
/// field whose name speaks of an auth, a token, a key, a secret or a
/// password (`X-Api-Key`, `X-Auth-Token`...), as users' own headers do.
pub fn is_credential_header(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    folded == "dpop"
        || folded == "cookie"
        || ["auth", "token", "apikey", "secret", "password"]
            .iter()
            .any(|word| folded.contains(word))
}

/// An observer of frames. Called on the task that sends or receives the
/// frame: it must not block or wait, and should be cheap (a wire log
/// formats and writes a line; a metrics tap counts). It cannot change the
/// frame, delay it, or stop it.
pub trait Tap: Send + Sync + fmt::Debug + 'static {
    /// Sees one frame.
    fn frame(&self, tapped: &Tapped<'_>);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_headers_are_known_by_any_case() {
        for name in [
            "Authorization",
            "proxy-authorization",
            "DPoP",
            "Cookie",
            "X-API-Key",
            "x_auth_token",
        ] {
            assert!(is_credential_header(name), "{name}");
        }
        for name in [
            "Mcp-Method",
            "MCP-Protocol-Version",
            "Mcp-Session-Id",
            "Accept",
            "Content-Type",
            "Last-Event-ID",
        ] {
            assert!(!is_credential_header(name), "{name}");
        }
    }
}
