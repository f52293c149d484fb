//! Frame metadata: header fields that travel beside a frame, for transports
//! whose messages have headers (HTTP), and ignored by the others (stdio).
//!
//! The frame stays the whole message; metadata only mirrors what a peer's
//! intermediaries want to read without parsing the body (an HTTP load
//! balancer routing on `Mcp-Method`). A sender hands it over with
//! [`FrameSender::send_with`](crate::FrameSender::send_with); a transport
//! that wants it installs a [`FrameMetaSink`] on its sender
//! ([`FrameSender::meta_sink`](crate::FrameSender::meta_sink)). Without a
//! sink, `send_with` is `send`.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

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

/// A transport's receiver of frame metadata. `attach` is called with the
/// frame just before the frame itself is offered or queued, on the sender's
/// task: it must not block. A transport that cannot use a frame's metadata
/// (it is not a request, or it is never sent) simply forgets it; whatever it
/// keeps must be bounded.
pub trait FrameMetaSink: Send + Sync + fmt::Debug {
    /// Metadata for `frame`, which follows.
    fn attach(&self, frame: &Bytes, meta: Arc<FrameMeta>);
}

#[cfg(test)]
mod tests {
    use super::*;

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
