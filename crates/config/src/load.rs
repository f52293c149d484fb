//! Loading: [`LoadOptions`], [`Config`], and merging several files.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::document;
use crate::entry::ServerEntry;
use crate::error::LoadError;
use crate::format::Format;
use crate::input::{self, Input};
use crate::normalize;
use crate::shape::{self, Shape};
use crate::warning::{Warning, WarningKind};

/// What to do when two servers have the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Duplicates {
    /// Fail with [`LoadError::DuplicateServer`], naming both places. The
    /// default: a silently replaced server is a server silently dropped.
    #[default]
    Error,
    /// The later definition replaces the earlier one, in the earlier one's
    /// place in the list, with a [`WarningKind::ReplacedServer`] warning.
    /// For layering a project file over a user file.
    LaterWins,
}

/// How to load configuration files. The defaults suit a user's own files.
///
/// ```
/// use mcpwire_config::{Duplicates, Format, LoadOptions};
///
/// let config = LoadOptions::new()
///     .duplicates(Duplicates::LaterWins)
///     .parse_str(r#"{"mcpServers": {"a": {"command": "x"}}}"#, Format::Json, "inline.json")?;
/// assert_eq!(config.servers[0].name, "a");
/// # Ok::<(), mcpwire_config::LoadError>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct LoadOptions {
    skip_invalid: bool,
    duplicates: Duplicates,
    max_file_len: u64,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl LoadOptions {
    /// Fail on any unusable server, fail on duplicate names, read files of
    /// up to 4 MiB.
    pub fn new() -> Self {
        Self {
            skip_invalid: false,
            duplicates: Duplicates::Error,
            max_file_len: 4 << 20,
        }
    }

    /// Leave out an unusable server (reported as a
    /// [`WarningKind::SkippedServer`]) instead of failing the whole file.
    /// Default: false. Syntax errors still fail the file.
    pub fn skip_invalid(mut self, skip: bool) -> Self {
        self.skip_invalid = skip;
        self
    }

    /// What to do with two servers of the same name, in one file or across
    /// files. Default: [`Duplicates::Error`].
    pub fn duplicates(mut self, duplicates: Duplicates) -> Self {
        self.duplicates = duplicates;
        self
    }

    /// The largest file read, in bytes. Default: 4 MiB, far above any real
    /// configuration; the bound keeps a wrong path (a log, a device) from
    /// being read into memory whole.
    pub fn max_file_len(mut self, bytes: u64) -> Self {
        self.max_file_len = bytes;
        self
    }

    /// Reads and parses one file; its extension picks the
    /// [`Format`](Format::from_path).
    pub fn load_file(&self, path: impl AsRef<Path>) -> Result<Config, LoadError> {
        let path = path.as_ref();
        let read_error = |source| LoadError::Read {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(read_error)?;
        let mut bytes = Vec::new();
        file.take(self.max_file_len.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(read_error)?;
        if bytes.len() as u64 > self.max_file_len {
            return Err(LoadError::TooLarge {
                path: path.to_owned(),
                limit: self.max_file_len,
            });
        }
        let text = std::str::from_utf8(&bytes).map_err(|source| LoadError::NotUtf8 {
            path: path.to_owned(),
            source,
        })?;
        // A byte-order mark is legal in a UTF-8 file and meaningless here.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        self.parse_str(text, Format::from_path(path), path)
    }

    /// Parses `text` as `format`; `origin` names it in entries, errors and
    /// warnings.
    pub fn parse_str(
        &self,
        text: &str,
        format: Format,
        origin: impl AsRef<Path>,
    ) -> Result<Config, LoadError> {
        let origin = origin.as_ref();
        let root = document::parse(text, format).map_err(|e| LoadError::Syntax {
            origin: origin.to_owned(),
            format,
            position: e.position,
            source: e.source,
        })?;
        let mut warnings = Vec::new();
        let found = shape::find(root.as_ref(), origin, &mut warnings)?;
        let mut config = Config {
            inputs: input::read(found.inputs),
            sources: vec![Source {
                path: origin.to_owned(),
                format,
                shape: found.shape,
            }],
            ..Config::default()
        };
        for member in found.servers {
            match normalize::entry(member, origin, found.shape, &mut warnings) {
                Ok(entry) => config.add(entry, self.duplicates, &mut warnings)?,
                Err(error) if self.skip_invalid => warnings.push(Warning {
                    origin: origin.to_owned(),
                    server: Some(error.server.clone()),
                    field: error.field.clone(),
                    position: error.position,
                    kind: WarningKind::SkippedServer(*error),
                }),
                Err(error) => return Err(error.into()),
            }
        }
        config.warnings = warnings;
        Ok(config)
    }

    /// Loads several files (a CLI's repeated `--config FILE`) into one
    /// [`Config`], in order; two servers of the same name are handled by
    /// [`duplicates`](Self::duplicates).
    pub fn load_files<I, P>(&self, paths: I) -> Result<Config, LoadError>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let mut config = Config::default();
        for path in paths {
            config.merge(self.load_file(path)?, self.duplicates)?;
        }
        Ok(config)
    }
}

/// Loads one file with the default [`LoadOptions`].
pub fn load_file(path: impl AsRef<Path>) -> Result<Config, LoadError> {
    LoadOptions::new().load_file(path)
}

/// Where a [`Config`]'s servers came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Source {
    /// The file (or the label given to
    /// [`parse_str`](LoadOptions::parse_str)).
    pub path: PathBuf,
    /// Its syntax.
    pub format: Format,
    /// Where in it the servers were.
    pub shape: Shape,
}

/// The servers of one or more files, with what was found on the way.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Config {
    /// The servers, in file order (and file by file when merged).
    pub servers: Vec<ServerEntry>,
    /// VS Code's `inputs`, for answering `${input:ID}`.
    pub inputs: Vec<Input>,
    /// Everything that works but probably is not what was meant.
    pub warnings: Vec<Warning>,
    /// The files read, in order.
    pub sources: Vec<Source>,
}

impl Config {
    /// The server named `name`.
    pub fn get(&self, name: &str) -> Option<&ServerEntry> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Adds `other`'s servers, inputs, warnings and sources after this
    /// one's; a server whose name is taken is handled by `duplicates`.
    pub fn merge(&mut self, other: Config, duplicates: Duplicates) -> Result<(), LoadError> {
        let mut warnings = other.warnings;
        for entry in other.servers {
            self.add(entry, duplicates, &mut warnings)?;
        }
        self.warnings.append(&mut warnings);
        self.inputs.extend(other.inputs);
        self.sources.extend(other.sources);
        Ok(())
    }

    fn add(
        &mut self,
        entry: ServerEntry,
        duplicates: Duplicates,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), LoadError> {
        let Some(slot) = self.servers.iter_mut().find(|s| s.name == entry.name) else {
            self.servers.push(entry);
            return Ok(());
        };
        match duplicates {
            Duplicates::Error => Err(LoadError::DuplicateServer {
                second_position: entry.position(),
                name: entry.name,
                first: slot.origin.clone(),
                first_position: slot.position(),
                second: entry.origin,
            }),
            Duplicates::LaterWins => {
                warnings.push(Warning {
                    origin: entry.origin.clone(),
                    server: Some(entry.name.clone()),
                    field: None,
                    position: entry.position(),
                    kind: WarningKind::ReplacedServer {
                        replaced: slot.origin.clone(),
                    },
                });
                *slot = entry;
                Ok(())
            }
        }
    }
}
