//! What the era puts on every request: the `_meta` members of the stateless
//! revision (protocol version, client capabilities and info, log level) and
//! the header fields a transport with headers sends beside the frame
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
//!
//! The engine applies whatever [`Stamp`] the lifecycle set, without knowing
//! which era made it: the `initialize` era's is empty.

use std::sync::Arc;

use mcpwire_transport::FrameMeta;
use serde_json::{Map, Value};

use crate::base::headers::encode_value;

/// The `_meta` key of the protocol version.
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client's capabilities.
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the client's identity.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of the log level a request asks for.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// What one request adds to the standard headers: the `Mcp-Name` source
/// (`params.name` or `params.uri`) and the tool parameters annotated with
/// `x-mcp-header`, as `(name, encoded value)`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Route {
    pub(crate) name: Option<String>,
    pub(crate) params: Vec<(String, String)>,
}

/// Added to every request of a connection.
#[derive(Debug, Default)]
pub(crate) struct Stamp {
    /// The protocol version every request declares; `None` in the
    /// `initialize` era, whose transport remembers it per session.
    version: Option<String>,
    /// Members merged into every request's `params._meta` (the caller's own
    /// members win).
    meta: Map<String, Value>,
}

impl Stamp {
    /// Nothing: the `initialize` era.
    pub(crate) fn none() -> Arc<Stamp> {
        Arc::new(Stamp::default())
    }

    /// The stateless era at `version`.
    pub(crate) fn modern(
        version: &str,
        capabilities: Value,
        client_info: Value,
        log_level: Option<Value>,
    ) -> Arc<Stamp> {
        let mut meta = Map::new();
        meta.insert(META_VERSION.into(), Value::from(version));
        meta.insert(META_CAPABILITIES.into(), capabilities);
        meta.insert(META_CLIENT_INFO.into(), client_info);
        if let Some(level) = log_level {
            meta.insert(META_LOG_LEVEL.into(), level);
        }
        Arc::new(Stamp {
            version: Some(version.to_owned()),
            meta,
        })
    }

    /// The same stamp at another version (after the server named the
    /// versions it supports).
    pub(crate) fn at_version(&self, version: &str) -> Arc<Stamp> {
        let mut meta = self.meta.clone();
        meta.insert(META_VERSION.into(), Value::from(version));
        Arc::new(Stamp {
            version: Some(version.to_owned()),
            meta,
        })
    }

    /// The same stamp asking for log messages at `level` (the stateless
    /// era's `logging/setLevel`).
    pub(crate) fn with_log_level(&self, level: Value) -> Arc<Stamp> {
        let mut meta = self.meta.clone();
        meta.insert(META_LOG_LEVEL.into(), level);
        Arc::new(Stamp {
            version: self.version.clone(),
            meta,
        })
    }

    /// The version requests declare, if any.
    pub(crate) fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The `_meta` members every request gets.
    pub(crate) fn meta(&self) -> &Map<String, Value> {
        &self.meta
    }

    /// The header fields of a `method` request: none in the `initialize`
    /// era; in the stateless one the version (equal to the `_meta` one),
    /// the method, and the route's name and parameters.
    pub(crate) fn frame_meta(&self, method: &str, route: Option<&Route>) -> Option<Arc<FrameMeta>> {
        let version = self.version.as_deref()?;
        let mut meta = FrameMeta::new()
            .header("MCP-Protocol-Version", version)
            .header("Mcp-Method", method);
        if let Some(route) = route {
            if let Some(name) = &route.name {
                meta.push("Mcp-Name", encode_value(name));
            }
            for (name, value) in &route.params {
                meta.push(format!("Mcp-Param-{name}"), value.clone());
            }
        }
        Some(Arc::new(meta))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_initialize_era_adds_nothing() {
        let s = Stamp::none();
        assert!(s.meta().is_empty());
        assert!(s.frame_meta("tools/call", None).is_none());
    }

    #[test]
    fn the_stateless_era_declares_its_version_twice_and_routes() {
        let s = Stamp::modern(
            "2026-07-28",
            json!({}),
            json!({"name": "c", "version": "1"}),
            None,
        );
        assert_eq!(s.meta()[META_VERSION], "2026-07-28");
        let route = Route {
            name: Some("café".into()),
            params: vec![("Region".into(), "eu".into())],
        };
        let m = s.frame_meta("tools/call", Some(&route)).unwrap();
        assert_eq!(m.get("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(m.get("mcp-method"), Some("tools/call"));
        assert_eq!(m.get("mcp-name"), Some("=?base64?Y2Fmw6k=?="));
        assert_eq!(m.get("mcp-param-region"), Some("eu"));
        let older = s.at_version("2026-01-01");
        assert_eq!(older.meta()[META_VERSION], "2026-01-01");
        assert_eq!(older.version(), Some("2026-01-01"));
    }
}
