//! [`Warning`]: something in a configuration that works but is probably not
//! what its author meant. Returned with the result, never printed.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::EntryError;
use crate::name::NameError;
use crate::position::Position;

/// One warning: where, and what.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Warning {
    /// The file.
    pub origin: PathBuf,
    /// The server, when the warning is about one.
    pub server: Option<String>,
    /// The field, as spelled in the file, when the warning is about one.
    pub field: Option<String>,
    /// Where the field (or entry) starts.
    pub position: Option<Position>,
    /// What is wrong.
    pub kind: WarningKind,
}

/// What a [`Warning`] is about.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WarningKind {
    /// A URL without a `type`: Streamable HTTP is tried first, then the
    /// legacy HTTP+SSE transport. Setting `type` avoids the extra request.
    UrlWithoutType,
    /// An `args` element holds a space: probably several arguments written
    /// as one (`"-y @pkg/server"`); fine if it is one path with a space.
    ArgWithSpaces {
        /// Its index in `args`.
        index: usize,
    },
    /// The `command` holds a space and there are no `args`: probably a whole
    /// command line where only the program belongs (no shell is used).
    CommandWithSpaces,
    /// The `type` (or `transport`) is not one this crate knows; the
    /// transport was inferred from the other fields instead.
    UnknownType {
        /// The value given.
        value: String,
    },
    /// A field that its format has replaced.
    DeprecatedField {
        /// What to write instead.
        replacement: &'static str,
    },
    /// A timeout under one second: probably seconds written where
    /// milliseconds are expected (Gemini's `timeout` is in milliseconds).
    SubSecondTimeout {
        /// The timeout as read.
        timeout: Duration,
    },
    /// Two fields say the same thing; the first named wins.
    ConflictingFields {
        /// The field used.
        used: &'static str,
        /// The field ignored.
        ignored: &'static str,
    },
    /// A field that does not apply to this transport (`args` on an HTTP
    /// server); it is kept in `extra`.
    IgnoredField,
    /// The server's name cannot prefix tool names as `{server}__{tool}`
    /// (see [`validate_server_name`](crate::validate_server_name)).
    InvalidServerName(NameError),
    /// The file holds a second server table that was not read (for example
    /// both `mcpServers` and `servers`); only the first is used.
    IgnoredServerTable {
        /// The key of the table used.
        used: &'static str,
    },
    /// A server defined again replaced an earlier one, under
    /// [`Duplicates::LaterWins`](crate::Duplicates::LaterWins).
    ReplacedServer {
        /// The file of the definition replaced.
        replaced: PathBuf,
    },
    /// An unusable server was left out, under
    /// [`LoadOptions::skip_invalid`](crate::LoadOptions::skip_invalid).
    SkippedServer(EntryError),
    /// A variable had no value and was left as written or made empty, under
    /// a lenient [`UnsetVariable`](crate::UnsetVariable) policy.
    UnsetVariable {
        /// The variable as written between `${` and `}`.
        variable: String,
    },
    /// A `${` with no closing `}`, or `${}`: left as written.
    MalformedVariable,
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WarningKind::UrlWithoutType => f.write_str(
                "a URL without \"type\": Streamable HTTP is tried, then HTTP+SSE; set \"type\" to say which",
            ),
            WarningKind::ArgWithSpaces { index } => write!(
                f,
                "args[{index}] holds a space; each argument must be its own element (ignore this for a path with a space)"
            ),
            WarningKind::CommandWithSpaces => f.write_str(
                "the command holds a space; no shell is used, so put the arguments in \"args\"",
            ),
            WarningKind::UnknownType { value } => write!(
                f,
                "unknown transport type {value:?}; inferred from the other fields instead"
            ),
            WarningKind::DeprecatedField { replacement } => {
                write!(f, "deprecated; use {replacement} instead")
            }
            WarningKind::SubSecondTimeout { timeout } => write!(
                f,
                "a timeout of {timeout:?} is under one second; was a number of seconds written where milliseconds are expected?"
            ),
            WarningKind::ConflictingFields { used, ignored } => {
                write!(f, "both {used:?} and {ignored:?} are given; {ignored:?} is ignored")
            }
            WarningKind::IgnoredField => {
                f.write_str("does not apply to this server's transport; ignored")
            }
            WarningKind::InvalidServerName(reason) => {
                write!(f, "the name cannot prefix tool names: {reason}")
            }
            WarningKind::IgnoredServerTable { used } => {
                write!(f, "a second server table; only {used:?} is read")
            }
            WarningKind::ReplacedServer { replaced } => {
                write!(f, "replaces the server of the same name in {}", replaced.display())
            }
            WarningKind::SkippedServer(error) => write!(f, "left out: {error}"),
            WarningKind::UnsetVariable { variable } => {
                write!(f, "variable {variable:?} is not set")
            }
            WarningKind::MalformedVariable => {
                f.write_str("a malformed variable reference (\"${\" without \"}\", or \"${}\"); left as written")
            }
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin.display())?;
        if let Some(p) = self.position {
            write!(f, ":{p}")?;
        }
        if let Some(server) = &self.server {
            write!(f, ": server {server:?}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ", field {field:?}")?;
        }
        write!(f, ": {}", self.kind)
    }
}
