//! [`Resolver`]: turning a [`ServerEntry`] into a [`ResolvedServer`], a
//! server ready to start, with every variable expanded.
//!
//! Variables are expanded in `command`, `args`, `env` values, `url` and
//! `headers` values, as Claude Code and Windsurf document, and also in the
//! two paths `cwd` and `envFile`, because VS Code's own documentation writes
//! `"envFile": "${workspaceFolder}/.env"`. Nothing else is expanded: not
//! names, not tool lists, not `extra`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::entry::{
    HttpMode, Policy, RemoteEntry, ServerEntry, StdioEntry, Transport, TransportKind,
};
use crate::env_file;
use crate::error::ResolveError;
use crate::expand::{self, Environment, UnsetVariable, Variable, VariableResolver};
use crate::redact;
use crate::warning::{Warning, WarningKind};

/// Expands an entry's variables and checks that it can be started.
///
/// ```
/// use std::collections::HashMap;
/// use mcpwire_config::{Format, LoadOptions, Resolver, ResolvedTransport};
///
/// let config = LoadOptions::new().parse_str(
///     r#"{"mcpServers": {"api": {"type": "http", "url": "${BASE:-https://example.com}/mcp",
///         "headers": {"Authorization": "Bearer ${TOKEN}"}}}}"#,
///     Format::Json,
///     ".mcp.json",
/// )?;
/// let env = HashMap::from([("TOKEN".to_owned(), "t0k".to_owned())]);
/// let server = Resolver::new(&env).resolve(&config.servers[0])?;
/// let ResolvedTransport::Http { remote, .. } = &server.transport else { unreachable!() };
/// assert_eq!(remote.url, "https://example.com/mcp");
/// assert_eq!(remote.headers["Authorization"], "Bearer t0k");
///
/// // Without TOKEN the entry does not resolve (no literal `${TOKEN}` is sent).
/// let empty = HashMap::new();
/// assert!(Resolver::new(&empty).resolve(&config.servers[0]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub struct Resolver<'a> {
    env: &'a dyn Environment,
    vars: &'a dyn VariableResolver,
    unset: UnsetVariable,
    accepted: Vec<TransportKind>,
}

impl fmt::Debug for Resolver<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolver")
            .field("unset", &self.unset)
            .field("accepted", &self.accepted)
            .finish_non_exhaustive()
    }
}

struct NoVariables;

impl VariableResolver for NoVariables {
    fn resolve(&self, _: &Variable<'_>) -> Option<String> {
        None
    }
}

impl<'a> Resolver<'a> {
    /// Reads environment variables from `env`; no other variable has a
    /// value; an unset variable is an error; stdio and HTTP are accepted.
    pub fn new(env: &'a dyn Environment) -> Self {
        Self {
            env,
            vars: &NoVariables,
            unset: UnsetVariable::Error,
            accepted: vec![TransportKind::Stdio, TransportKind::Http],
        }
    }

    /// Where `${workspaceFolder}`, `${userHome}`, `${input:ID}` and other
    /// non-environment variables get their values. Default: nowhere.
    pub fn variables(mut self, vars: &'a dyn VariableResolver) -> Self {
        self.vars = vars;
        self
    }

    /// What an unset variable without a default does. Default:
    /// [`UnsetVariable::Error`].
    pub fn unset(mut self, unset: UnsetVariable) -> Self {
        self.unset = unset;
        self
    }

    /// Accepts servers of `kind` as well: the `mcpwire` facade's
    /// `config_resolver` accepts `TransportKind::WebSocket` when its `ws`
    /// feature (the `mcpwire-ws` transport) is on. Default:
    /// stdio and HTTP.
    pub fn accept(mut self, kind: TransportKind) -> Self {
        if !self.accepted.contains(&kind) {
            self.accepted.push(kind);
        }
        self
    }

    /// Expands `entry`'s variables, reads its env file, copies the
    /// variables it forwards, and turns `env_http_headers` and
    /// `bearer_token_env_var` into headers.
    ///
    /// The env file is the only I/O: a relative `envFile` is read relative
    /// to the directory of the file the entry came from. Its variables are
    /// set first, then forwarded ones, then `env` (which wins).
    pub fn resolve(&self, entry: &ServerEntry) -> Result<ResolvedServer, ResolveError> {
        let kind = entry.transport.kind();
        if !self.accepted.contains(&kind) {
            return Err(ResolveError::UnsupportedTransport {
                origin: entry.origin.clone(),
                server: entry.name.clone(),
                kind,
            });
        }
        let mut cx = Cx {
            resolver: self,
            entry,
            warnings: Vec::new(),
        };
        let transport = match &entry.transport {
            Transport::Stdio(stdio) => ResolvedTransport::Stdio(cx.stdio(stdio)?),
            Transport::Http { remote, mode } => ResolvedTransport::Http {
                remote: cx.remote(remote)?,
                mode: *mode,
            },
            Transport::WebSocket(remote) => ResolvedTransport::WebSocket(cx.remote(remote)?),
        };
        Ok(ResolvedServer {
            name: entry.name.clone(),
            origin: entry.origin.clone(),
            transport,
            policy: entry.policy.clone(),
            description: entry.description.clone(),
            warnings: cx.warnings,
        })
    }
}

struct Cx<'r, 'a> {
    resolver: &'r Resolver<'a>,
    entry: &'r ServerEntry,
    warnings: Vec<Warning>,
}

impl Cx<'_, '_> {
    /// `template` expanded; `field` names it in messages (`args[2]`), and
    /// `located` is the normalized field whose position is reported.
    fn expand(
        &mut self,
        template: &str,
        field: &str,
        located: &str,
    ) -> Result<String, ResolveError> {
        let r = self.resolver;
        let expanded = expand::expand(template, r.env, r.vars, r.unset);
        let position = self.entry.field_position(located);
        if expanded.malformed {
            self.warn(field, position, WarningKind::MalformedVariable);
        }
        for variable in expanded.unset {
            if r.unset == UnsetVariable::Error {
                return Err(self.unset_error(field, position, variable));
            }
            self.warn(field, position, WarningKind::UnsetVariable { variable });
        }
        Ok(expanded.text)
    }

    fn unset_error(
        &self,
        field: &str,
        position: Option<crate::Position>,
        variable: String,
    ) -> ResolveError {
        ResolveError::UnsetVariable {
            origin: self.entry.origin.clone(),
            server: self.entry.name.clone(),
            field: field.to_owned(),
            position,
            variable,
        }
    }

    fn warn(&mut self, field: &str, position: Option<crate::Position>, kind: WarningKind) {
        self.warnings.push(Warning {
            origin: self.entry.origin.clone(),
            server: Some(self.entry.name.clone()),
            field: Some(field.to_owned()),
            position,
            kind,
        });
    }

    fn stdio(&mut self, stdio: &StdioEntry) -> Result<ResolvedStdio, ResolveError> {
        let command = self.expand(&stdio.command, "command", "command")?;
        let mut args = Vec::with_capacity(stdio.args.len());
        for (i, arg) in stdio.args.iter().enumerate() {
            args.push(self.expand(arg, &format!("args[{i}]"), "args")?);
        }
        let mut env = BTreeMap::new();
        if let Some(path) = &stdio.env_file {
            let expanded = self.expand(path, "envFile", "envFile")?;
            let path = self.path(&expanded);
            let text = std::fs::read_to_string(&path).map_err(|source| ResolveError::EnvFile {
                origin: self.entry.origin.clone(),
                server: self.entry.name.clone(),
                path: path.clone(),
                source,
            })?;
            env.extend(
                env_file::parse(&text)
                    .into_iter()
                    .map(|(k, v)| (k, Some(v))),
            );
        }
        for name in &stdio.forward_env {
            if let Some(value) = self.resolver.env.var(name) {
                env.insert(name.clone(), Some(value));
            }
        }
        for (key, value) in &stdio.env {
            let value = match value {
                Some(v) => Some(self.expand(v, &format!("env.{key}"), "env")?),
                None => None,
            };
            env.insert(key.clone(), value);
        }
        let cwd = match &stdio.cwd {
            Some(cwd) => Some(PathBuf::from(self.expand(cwd, "cwd", "cwd")?)),
            None => None,
        };
        Ok(ResolvedStdio {
            command,
            args,
            env,
            cwd,
        })
    }

    /// A relative path is taken relative to the configuration file's folder.
    fn path(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        match self.entry.origin.parent() {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path.to_owned(),
        }
    }

    fn remote(&mut self, remote: &RemoteEntry) -> Result<ResolvedRemote, ResolveError> {
        let url = self.expand(&remote.url, "url", "url")?;
        let mut headers = BTreeMap::new();
        for (name, value) in &remote.headers {
            headers.insert(
                name.clone(),
                self.expand(value, &format!("headers.{name}"), "headers")?,
            );
        }
        for (name, variable) in &remote.env_headers {
            if let Some(value) = self.variable(variable, &format!("env_http_headers.{name}"))? {
                headers.insert(name.clone(), value);
            }
        }
        if let Some(variable) = &remote.bearer_token_env_var {
            let has_auth = headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("authorization"));
            if let Some(token) = self.variable(variable, "bearer_token_env_var")?
                && !has_auth
            {
                headers.insert("Authorization".to_owned(), format!("Bearer {token}"));
            }
        }
        Ok(ResolvedRemote { url, headers })
    }

    /// The value of the variable named `name`; when unset, an error or (when
    /// lenient) `None` with a warning: a header is left out rather than sent
    /// empty or with a variable's name in it.
    fn variable(&mut self, name: &str, field: &str) -> Result<Option<String>, ResolveError> {
        if let Some(value) = self.resolver.env.var(name) {
            return Ok(Some(value));
        }
        if self.resolver.unset == UnsetVariable::Error {
            return Err(self.unset_error(field, None, name.to_owned()));
        }
        self.warn(
            field,
            None,
            WarningKind::UnsetVariable {
                variable: name.to_owned(),
            },
        );
        Ok(None)
    }
}

/// A server with every variable expanded, ready to start.
///
/// `Debug` hides secrets, as [`ServerEntry::redacted`] describes.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct ResolvedServer {
    /// The server's name.
    pub name: String,
    /// The file it was read from.
    pub origin: PathBuf,
    /// How to start it.
    pub transport: ResolvedTransport,
    /// Whether to start it and what it may do.
    pub policy: Policy,
    /// Its description.
    pub description: Option<String>,
    /// What resolving it found (variables left unset under a lenient
    /// policy, malformed references).
    pub warnings: Vec<Warning>,
}

impl fmt::Debug for ResolvedServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedServer")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .field("transport", &self.transport)
            .field("policy", &self.policy)
            .field("description", &self.description)
            .field("warnings", &self.warnings.len())
            .finish()
    }
}

/// How to start a resolved server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResolvedTransport {
    /// Spawn a process.
    Stdio(ResolvedStdio),
    /// Connect over HTTP.
    Http {
        /// Where, with which headers.
        remote: ResolvedRemote,
        /// Which HTTP transport.
        mode: HttpMode,
    },
    /// Connect over WebSocket (only when [accepted](Resolver::accept)).
    WebSocket(ResolvedRemote),
}

/// A process to spawn.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct ResolvedStdio {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables to set (`Some`) or remove (`None`): the env file's, then
    /// the forwarded ones, then `env`'s.
    pub env: BTreeMap<String, Option<String>>,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
}

impl fmt::Debug for ResolvedStdio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: BTreeMap<&String, Option<&str>> = self
            .env
            .iter()
            .map(|(k, v)| (k, v.as_ref().map(|_| redact::REDACTED)))
            .collect();
        f.debug_struct("ResolvedStdio")
            .field("command", &self.command)
            .field("args", &redact::args(&self.args))
            .field("env", &env)
            .field("cwd", &self.cwd)
            .finish()
    }
}

/// A URL to connect to, with its headers.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct ResolvedRemote {
    /// The URL.
    pub url: String,
    /// Headers for every request, credentials included.
    pub headers: BTreeMap<String, String>,
}

impl fmt::Debug for ResolvedRemote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: BTreeMap<&String, String> = self
            .headers
            .iter()
            .map(|(k, v)| (k, redact::header_value(k, v)))
            .collect();
        f.debug_struct("ResolvedRemote")
            .field("url", &redact::url(&self.url))
            .field("headers", &headers)
            .finish()
    }
}
