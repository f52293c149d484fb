//! An outbound message as its sender hands it to a transport: the frame,
//! what the sender knows it is, and header fields for transports whose
//! messages have headers.
//!
//! Why the sender says what the frame is: the one who encoded a request
//! knows its id and method; a transport that needs them (HTTP posts a
//! request and waits for its answer, but only posts a notification) would
//! otherwise scan the JSON again. A frame handed over as bare bytes
//! ([`FrameKind::Unknown`]) is still read by such a transport.
//!
//! The frame stays the whole message; [`FrameMeta`] only mirrors what a
//! peer's intermediaries want to read without parsing the body (an HTTP
//! load balancer routing on `Mcp-Method`). A transport without headers
//! (stdio) ignores both.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use mcpwire_codec::jsonrpc::Id;

/// One outbound message: see the [module](self) documentation. Made from
/// [`Bytes`] alone (`Outgoing::from`), or with what it is
/// ([`request`](Self::request), [`notification`](Self::notification),
/// [`response`](Self::response)).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Outgoing {
    /// The whole message, as it is written or posted.
    pub frame: Bytes,
    /// What the sender says it is.
    pub kind: FrameKind,
    /// Header fields to send with it, where the transport has headers.
    pub meta: Option<Arc<FrameMeta>>,
}

/// What an [`Outgoing`] frame is, as its sender says. A transport trusts
/// it: a sender that says a frame is a request with id 7 gets the answer to
/// id 7 waited for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FrameKind {
    /// Not said: a transport that needs to know reads the frame.
    #[default]
    Unknown,
    /// A JSON-RPC request.
    Request {
        /// Its `id`.
        id: Id,
        /// Its `method`.
        method: Cow<'static, str>,
    },
    /// A JSON-RPC notification.
    Notification {
        /// Its `method`.
        method: Cow<'static, str>,
    },
    /// A JSON-RPC response (a result or an error).
    Response {
        /// The `id` it answers.
        id: Id,
    },
}

impl Outgoing {
    /// A request with `id` and `method`, encoded in `frame`.
    pub fn request(frame: Bytes, id: Id, method: impl Into<Cow<'static, str>>) -> Self {
        Self::of_kind(
            frame,
            FrameKind::Request {
                id,
                method: method.into(),
            },
        )
    }

    /// A notification of `method`, encoded in `frame`.
    pub fn notification(frame: Bytes, method: impl Into<Cow<'static, str>>) -> Self {
        Self::of_kind(
            frame,
            FrameKind::Notification {
                method: method.into(),
            },
        )
    }

    /// A response to the request `id`, encoded in `frame`.
    pub fn response(frame: Bytes, id: Id) -> Self {
        Self::of_kind(frame, FrameKind::Response { id })
    }

    fn of_kind(frame: Bytes, kind: FrameKind) -> Self {
        Self {
            frame,
            kind,
            meta: None,
        }
    }

    /// The same message with header fields `meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: Option<Arc<FrameMeta>>) -> Self {
        self.meta = meta;
        self
    }
}

/// What an [`Outgoing`] says besides its bytes, kept aside while the bytes
/// alone go through a byte-stream transport's queue, so that a frame the
/// queue refuses comes back whole.
pub(crate) struct Said {
    kind: FrameKind,
    meta: Option<Arc<FrameMeta>>,
}

impl Outgoing {
    /// The bytes, and what is said of them.
    pub(crate) fn split(self) -> (Bytes, Said) {
        let Self { frame, kind, meta } = self;
        (frame, Said { kind, meta })
    }
}

impl Said {
    /// The message again, with `frame` as its bytes.
    pub(crate) fn join(self, frame: Bytes) -> Outgoing {
        Outgoing {
            frame,
            kind: self.kind,
            meta: self.meta,
        }
    }
}

impl From<Bytes> for Outgoing {
    fn from(frame: Bytes) -> Self {
        Self::of_kind(frame, FrameKind::Unknown)
    }
}

/// Shows the kind, the length and the header names: a frame's bytes and
/// header values may carry secrets.
impl fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outgoing")
            .field("kind", &self.kind)
            .field("len", &self.frame.len())
            .field(
                "headers",
                &self
                    .meta
                    .iter()
                    .flat_map(|m| m.headers().map(|(n, _)| n))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Header fields (name, value) sent with one frame, in order. Names are
/// compared case-insensitively by whoever reads them; values must already be
/// valid field values (a transport drops a field it cannot send, never the
/// frame).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameMeta {
    headers: Vec<(String, String)>,
}

impl FrameMeta {
    /// No fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.push(name, value);
        self
    }

    /// Adds a field in place.
    pub fn push(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.headers.push((name.into(), value.into()));
    }

    /// The fields, in the order they were added.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// True if there is no field.
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_what_a_frame_is_but_neither_its_bytes_nor_header_values() {
        let meta = FrameMeta::new().header("Mcp-Name", "secret-tool-arg");
        let out = Outgoing::request(
            Bytes::from_static(br#"{"token":"hunter2"}"#),
            Id::Number(7),
            "tools/call",
        )
        .with_meta(Some(Arc::new(meta)));
        let shown = format!("{out:?}");
        for want in ["Request", "7", "tools/call", "len: 19", "Mcp-Name"] {
            assert!(shown.contains(want), "{want} in {shown}");
        }
        for secret in ["hunter2", "secret-tool-arg"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }

    #[test]
    fn fields_keep_their_order_and_are_found_by_any_case() {
        let meta = FrameMeta::new()
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "echo");
        assert_eq!(meta.get("mcp-method"), Some("tools/call"));
        assert_eq!(meta.get("MCP-NAME"), Some("echo"));
        assert_eq!(meta.get("Mcp-Param-X"), None);
        let names: Vec<_> = meta.headers().map(|(n, _)| n).collect();
        assert_eq!(names, ["Mcp-Method", "Mcp-Name"]);
        assert!(!meta.is_empty());
        assert!(FrameMeta::new().is_empty());
    }
}
