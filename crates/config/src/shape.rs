//! [`Shape`]: where in a file its servers are, and finding them.

use std::fmt;
use std::path::Path;

use crate::document::{Member, Node};
use crate::error::LoadError;
use crate::warning::{Warning, WarningKind};

/// Where a file keeps its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Shape {
    /// `{"mcpServers": {NAME: {...}}}`: Claude Desktop, Claude Code
    /// (`.mcp.json`, `~/.claude.json`), Cursor, Windsurf, Gemini CLI.
    McpServers,
    /// `{"servers": {NAME: {...}}, "inputs": [...]}`: VS Code's `mcp.json`.
    Servers,
    /// `[mcp_servers.NAME]`: Codex's `config.toml`.
    McpServersSnakeCase,
    /// `{NAME: {...}}`: the servers alone, at the top level.
    Bare,
}

impl Shape {
    /// The key holding the servers, or `None` for [`Shape::Bare`].
    pub fn key(self) -> Option<&'static str> {
        match self {
            Shape::McpServers => Some("mcpServers"),
            Shape::Servers => Some("servers"),
            Shape::McpServersSnakeCase => Some("mcp_servers"),
            Shape::Bare => None,
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key().unwrap_or("a bare map of servers"))
    }
}

/// The shapes with a key, in the order they are looked for.
const KEYED: [Shape; 3] = [
    Shape::McpServers,
    Shape::Servers,
    Shape::McpServersSnakeCase,
];

/// The fields whose presence marks an object as a server, for telling a bare
/// map of servers from any other file.
const SERVER_MARKERS: [&str; 6] = [
    "command",
    "url",
    "httpUrl",
    "serverUrl",
    "type",
    "transport",
];

/// The servers found in a document.
pub(crate) struct Found<'a> {
    pub(crate) shape: Shape,
    pub(crate) servers: &'a [Member],
    /// VS Code's top-level `inputs`, if any.
    pub(crate) inputs: Option<&'a Node>,
}

/// Finds the server table in `root`. A second table (another shape's key, or
/// the same key twice) is reported in `warnings` and not read.
pub(crate) fn find<'a>(
    root: Option<&'a Node>,
    origin: &Path,
    warnings: &mut Vec<Warning>,
) -> Result<Found<'a>, LoadError> {
    let no_servers = || LoadError::NoServers {
        origin: origin.to_owned(),
    };
    let members = root.and_then(Node::as_object).ok_or_else(no_servers)?;
    let inputs = members
        .iter()
        .rev()
        .find(|m| m.key == "inputs")
        .map(|m| &m.value);

    let mut tables = KEYED.iter().flat_map(|shape| {
        members
            .iter()
            .filter(move |m| Some(m.key.as_str()) == shape.key())
            .map(move |m| (*shape, m))
    });
    if let Some((shape, table)) = tables.next() {
        for (_, other) in tables {
            warnings.push(Warning {
                origin: origin.to_owned(),
                server: None,
                field: Some(other.key.clone()),
                position: Some(other.at),
                kind: WarningKind::IgnoredServerTable {
                    used: shape.key().unwrap_or_default(),
                },
            });
        }
        let servers = table
            .value
            .as_object()
            .ok_or_else(|| LoadError::ServerTable {
                origin: origin.to_owned(),
                key: table.key.clone(),
                position: Some(table.value.at),
                found: table.value.type_name(),
            })?;
        return Ok(Found {
            shape,
            servers,
            inputs,
        });
    }

    let is_bare = !members.is_empty()
        && members.iter().all(|m| m.value.as_object().is_some())
        && members.iter().any(|m| {
            m.value.as_object().is_some_and(|fields| {
                fields
                    .iter()
                    .any(|f| SERVER_MARKERS.contains(&f.key.as_str()))
            })
        });
    if is_bare {
        Ok(Found {
            shape: Shape::Bare,
            servers: members,
            inputs: None,
        })
    } else {
        Err(no_servers())
    }
}
