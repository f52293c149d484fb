//! [`SavedCatalogue`]: what each server offered when last listed, kept in a
//! file so a lazy server's tools can be advertised before it is started.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use mcpwire_client::types::{Prompt, Resource, ResourceTemplate, Tool};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The format version written by this crate.
const VERSION: u32 = 1;

/// Every server's lists as last read, unfiltered (filters are applied when
/// the catalogue is built, so a changed filter takes effect on a saved
/// catalogue too).
///
/// [`Manager::save_catalogue`](crate::Manager::save_catalogue) makes one;
/// [`ManagerBuilder::saved_catalogue`](crate::ManagerBuilder::saved_catalogue)
/// seeds the lazy servers with it. It is JSON: the MCP types as the servers
/// sent them, members this version does not know included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedCatalogue {
    /// The format version (1).
    pub version: u32,
    /// By server name.
    pub servers: BTreeMap<String, ServerCatalogue>,
}

impl Default for SavedCatalogue {
    fn default() -> Self {
        Self {
            version: VERSION,
            servers: BTreeMap::new(),
        }
    }
}

/// One server's lists.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerCatalogue {
    /// Its tools.
    #[serde(default)]
    pub tools: Vec<Tool>,
    /// Its prompts.
    #[serde(default)]
    pub prompts: Vec<Prompt>,
    /// Its resources.
    #[serde(default)]
    pub resources: Vec<Resource>,
    /// Its resource templates.
    #[serde(default, rename = "resourceTemplates")]
    pub resource_templates: Vec<ResourceTemplate>,
}

impl SavedCatalogue {
    /// An empty catalogue.
    pub fn new() -> Self {
        Self::default()
    }

    /// As pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Every member is a JSON value already: this cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// From JSON text.
    pub fn from_json(text: &str) -> Result<Self, Error> {
        Self::parse(text, Path::new(""))
    }

    /// Reads the file at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| failed(path, e))?;
        Self::parse(&text, path)
    }

    /// Writes the file at `path`: to a temporary file beside it first, then
    /// renamed over it, so a reader never sees half a file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        std::fs::write(&tmp, self.to_json()).map_err(|e| failed(path, e))?;
        std::fs::rename(&tmp, path).map_err(|e| failed(path, e))
    }

    fn parse(text: &str, path: &Path) -> Result<Self, Error> {
        let saved: SavedCatalogue = serde_json::from_str(text).map_err(|e| failed(path, e))?;
        if saved.version != VERSION {
            return Err(failed(path, UnknownVersion(saved.version)));
        }
        Ok(saved)
    }
}

fn failed(path: &Path, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::SavedCatalogue {
        path: path.to_owned(),
        source: Arc::new(e),
    }
}

#[derive(Debug)]
struct UnknownVersion(u32);

impl std::fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "format version {} is not known (1 is)", self.0)
    }
}

impl std::error::Error for UnknownVersion {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_a_file_keeping_unknown_members() {
        let tool: Tool = serde_json::from_value(serde_json::json!({
            "name": "read", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}
        }))
        .unwrap();
        let mut saved = SavedCatalogue::new();
        saved.servers.insert(
            "fs".into(),
            ServerCatalogue {
                tools: vec![tool],
                ..ServerCatalogue::default()
            },
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalogue.json");
        saved.save(&path).unwrap();
        let back = SavedCatalogue::load(&path).unwrap();
        assert_eq!(back, saved);
        assert!(back.to_json().contains("taskSupport"));

        let err = SavedCatalogue::from_json(r#"{"version": 2, "servers": {}}"#).unwrap_err();
        let cause = std::error::Error::source(&err).unwrap().to_string();
        assert!(cause.contains("version 2"), "{cause}");
        let err = SavedCatalogue::load(dir.path().join("missing.json")).unwrap_err();
        assert!(matches!(err, Error::SavedCatalogue { .. }));
    }
}
