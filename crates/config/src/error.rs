//! The errors of loading ([`LoadError`], [`EntryError`]) and of resolving
//! ([`ResolveError`]) a configuration.

use std::fmt;
use std::path::PathBuf;

use crate::entry::TransportKind;
use crate::format::Format;
use crate::position::Position;

/// A configuration file could not be used.
///
/// Every variant names the file; those about one server name it and the
/// field too, with the line and column where the parser gives them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`LoadOptions::max_file_len`](crate::LoadOptions::max_file_len).
    #[error("{} is larger than {limit} bytes; is it really a configuration file?", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("{} is not UTF-8 text", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Where the first invalid byte is.
        #[source]
        source: std::str::Utf8Error,
    },
    /// The file is not valid JSON (with comments) or TOML.
    #[error("{}{}: not valid {format}", origin.display(), at(*position))]
    Syntax {
        /// The file.
        origin: PathBuf,
        /// The syntax it was read as.
        format: Format,
        /// Where the parser stopped.
        position: Option<Position>,
        /// The parser's own error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The file holds no server table: none of `mcpServers`, `servers` and
    /// `mcp_servers`, and its top level is not a map of servers.
    #[error(
        "{}: no MCP servers found (expected \"mcpServers\", \"servers\", \"mcp_servers\" or a map of servers)",
        origin.display()
    )]
    NoServers {
        /// The file.
        origin: PathBuf,
    },
    /// The server table (`mcpServers`, `servers`, `mcp_servers`) is not an
    /// object of servers.
    #[error("{}{}: {key:?} must map server names to servers, found {found}", origin.display(), at(*position))]
    ServerTable {
        /// The file.
        origin: PathBuf,
        /// The table's key.
        key: String,
        /// Where its value starts.
        position: Option<Position>,
        /// What it is instead.
        found: &'static str,
    },
    /// A server's entry is unusable.
    #[error(transparent)]
    Entry(Box<EntryError>),
    /// Two servers have the same name (in one file, or across the files of
    /// [`LoadOptions::load_files`](crate::LoadOptions::load_files) when
    /// [`Duplicates::Error`](crate::Duplicates::Error) is chosen).
    #[error(
        "server {name:?} is defined twice: in {}{} and in {}{}; rename one",
        first.display(), at(*first_position), second.display(), at(*second_position)
    )]
    DuplicateServer {
        /// The server's name.
        name: String,
        /// The file of the first definition.
        first: PathBuf,
        /// Where the first definition starts.
        first_position: Option<Position>,
        /// The file of the second definition.
        second: PathBuf,
        /// Where the second definition starts.
        second_position: Option<Position>,
    },
}

impl From<EntryError> for LoadError {
    fn from(error: EntryError) -> Self {
        LoadError::Entry(Box::new(error))
    }
}

impl From<Box<EntryError>> for LoadError {
    fn from(error: Box<EntryError>) -> Self {
        LoadError::Entry(error)
    }
}

/// One server's entry is unusable: the file, the server, the field, where,
/// and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: server {server:?}{}: {problem}", origin.display(), at(*position), field_part(field))]
#[non_exhaustive]
pub struct EntryError {
    /// The file.
    pub origin: PathBuf,
    /// The server's name.
    pub server: String,
    /// The field at fault, as spelled in the file, if one is.
    pub field: Option<String>,
    /// Where the field (or the entry) starts.
    pub position: Option<Position>,
    /// What is wrong.
    pub problem: EntryProblem,
}

/// What is wrong with a server's entry.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EntryProblem {
    /// The entry is not an object.
    NotAnObject {
        /// What it is instead ("a string", "an array"...).
        found: &'static str,
    },
    /// A known field has the wrong type.
    WrongType {
        /// What it must be.
        expected: &'static str,
        /// What it is.
        found: &'static str,
    },
    /// The entry has no `command` and no URL (`url`, `httpUrl`,
    /// `serverUrl`), so there is no way to reach the server.
    NoTransport,
    /// The entry's `type` needs a field it lacks (`stdio` without
    /// `command`, `http` without `url`).
    MissingField {
        /// The field needed.
        field: &'static str,
    },
    /// A timeout is negative, not a number, or too large.
    InvalidTimeout,
}

impl fmt::Display for EntryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryProblem::NotAnObject { found } => {
                write!(f, "expected an object describing the server, found {found}")
            }
            EntryProblem::WrongType { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            EntryProblem::NoTransport => f.write_str(
                "no \"command\" and no \"url\"; give a command to start or a URL to connect to",
            ),
            EntryProblem::MissingField { field } => {
                write!(f, "its type needs \"{field}\", which is missing")
            }
            EntryProblem::InvalidTimeout => {
                f.write_str("a timeout must be a finite, non-negative number")
            }
        }
    }
}

/// A server's entry could not be turned into something to start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// A variable has no value and no default, and
    /// [`UnsetVariable::Error`](crate::UnsetVariable::Error) is in force (a
    /// literal `${TOKEN}` sent as a header makes an endless 401 loop).
    #[error(
        "{}{}: server {server:?}, field {field:?}: variable {variable:?} is not set and has no default",
        origin.display(), at(*position)
    )]
    UnsetVariable {
        /// The file.
        origin: PathBuf,
        /// The server.
        server: String,
        /// The normalized field (`args[1]`, `env.API_KEY`, `headers.Authorization`, ...).
        field: String,
        /// Where the field starts.
        position: Option<Position>,
        /// The variable as written between `${` and `}` (`TOKEN`,
        /// `input:api-key`, `workspaceFolder`).
        variable: String,
    },
    /// The server uses a transport this build cannot start.
    #[error(
        "{}: server {server:?} uses the {kind} transport, which is not supported yet",
        origin.display()
    )]
    UnsupportedTransport {
        /// The file.
        origin: PathBuf,
        /// The server.
        server: String,
        /// The transport.
        kind: TransportKind,
    },
    /// The server's `envFile` could not be read.
    #[error("{}: server {server:?}: cannot read its env file {}", origin.display(), path.display())]
    EnvFile {
        /// The file.
        origin: PathBuf,
        /// The server.
        server: String,
        /// The env file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

fn at(position: Option<Position>) -> String {
    position.map(|p| format!(":{p}")).unwrap_or_default()
}

fn field_part(field: &Option<String>) -> String {
    field
        .as_ref()
        .map(|f| format!(", field {f:?}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_file_server_field_and_place() {
        let err = EntryError {
            origin: "a/.mcp.json".into(),
            server: "gh".into(),
            field: Some("args".into()),
            position: Some(Position { line: 4, column: 7 }),
            problem: EntryProblem::WrongType {
                expected: "an array of strings",
                found: "a string",
            },
        };
        assert_eq!(
            err.to_string(),
            "a/.mcp.json:4:7: server \"gh\", field \"args\": expected an array of strings, found a string"
        );
        let load: LoadError = err.into();
        assert!(load.to_string().contains("field \"args\""));
    }
}
