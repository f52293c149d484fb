//! [`ServerEntry`]: one server of a configuration file, normalized.
//!
//! Every format's spelling of the same thing ends up in the same field here
//! (`http_headers` and `headers` in [`RemoteEntry::headers`],
//! `tool_timeout_sec` and `timeout` in [`Policy::request_timeout`]). Values
//! are kept as written: variables such as `${TOKEN}` are expanded only when
//! the entry is [resolved](crate::Resolver::resolve).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::position::Position;
use crate::redact;

/// One configured MCP server, whatever file and format it came from.
///
/// Fields are public to read; build one with [`ServerEntry::new`] and then
/// set fields. `Debug` hides secrets (see [`redacted`](Self::redacted)).
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerEntry {
    /// The server's name: its key in the file.
    pub name: String,
    /// The file it was read from (or the label given to
    /// [`parse_str`](crate::LoadOptions::parse_str)).
    pub origin: PathBuf,
    /// How to reach it.
    pub transport: Transport,
    /// Whether to start it and what it may do.
    pub policy: Policy,
    /// A human description (`description`).
    pub description: Option<String>,
    /// Every field this crate does not interpret, verbatim (`autoApprove`,
    /// `oauth`, `auth`, `dev`, `sandbox`, `scopes`...). Never an error.
    pub extra: Map<String, Value>,
    pub(crate) locations: Locations,
}

/// Where an entry and its fields sit in the file, for messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Locations {
    pub(crate) entry: Option<Position>,
    /// By normalized field name (`command`, `args`, `env`, `url`, `headers`,
    /// `cwd`, `envFile`...).
    pub(crate) fields: BTreeMap<&'static str, Position>,
}

impl ServerEntry {
    /// An entry named `name` with `transport` and the default [`Policy`].
    pub fn new(name: impl Into<String>, transport: Transport) -> Self {
        Self {
            name: name.into(),
            origin: PathBuf::new(),
            transport,
            policy: Policy::default(),
            description: None,
            extra: Map::new(),
            locations: Locations::default(),
        }
    }

    /// Where the entry starts in its file, when it was read from one.
    pub fn position(&self) -> Option<Position> {
        self.locations.entry
    }

    /// Where field `field` (its normalized name: `command`, `args`, `env`,
    /// `envFile`, `cwd`, `url`, `headers`, ...) starts in the file.
    pub fn field_position(&self, field: &str) -> Option<Position> {
        self.locations.fields.get(field).copied()
    }

    /// Whether the tool `name` passes this server's include and exclude
    /// lists; see [`Policy::allows_tool`].
    pub fn allows_tool(&self, name: &str) -> bool {
        self.policy.allows_tool(name)
    }

    /// A copy safe to print: the values of credential-looking headers
    /// (`Authorization`, names containing `token`, `key`, `secret`, `auth`,
    /// `password`, `cookie`), every environment value, secret-looking
    /// arguments (`--api-key=...`, the value after `--token`), a URL's
    /// password and secret query parameters, and secret-looking keys in
    /// `extra` are replaced with `<redacted>`. A value that only refers to
    /// variables (`Bearer ${TOKEN}`) is kept: it names where the secret
    /// comes from without being it.
    #[must_use]
    pub fn redacted(&self) -> ServerEntry {
        let mut copy = self.clone();
        copy.transport = match &self.transport {
            Transport::Stdio(stdio) => Transport::Stdio(stdio.redacted()),
            Transport::Http { remote, mode } => Transport::Http {
                remote: remote.redacted(),
                mode: *mode,
            },
            Transport::WebSocket(remote) => Transport::WebSocket(remote.redacted()),
        };
        copy.extra = redact::extra(&self.extra);
        copy
    }
}

impl fmt::Debug for ServerEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The transport's own Debug already hides its secrets.
        f.debug_struct("ServerEntry")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .field("transport", &self.transport)
            .field("policy", &self.policy)
            .field("description", &self.description)
            .field("extra", &redact::extra(&self.extra))
            .finish_non_exhaustive()
    }
}

/// What kind of connection a server wants, without its details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum TransportKind {
    /// A child process spoken to over stdin and stdout.
    Stdio,
    /// Streamable HTTP, possibly falling back to HTTP+SSE (see [`HttpMode`]).
    Http,
    /// WebSocket (`ws`, `websocket`): [resolving](crate::Resolver::resolve)
    /// it fails unless the caller [accepts](crate::Resolver::accept) it, as
    /// the `mcpwire` facade's `config_resolver` does with its `ws` feature
    /// (the transport is `mcpwire-ws`).
    WebSocket,
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
            TransportKind::WebSocket => "websocket",
        })
    }
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Transport {
    /// Spawn a process.
    Stdio(StdioEntry),
    /// Connect over HTTP.
    Http {
        /// The URL and headers.
        remote: RemoteEntry,
        /// Which HTTP transport to speak.
        mode: HttpMode,
    },
    /// Connect over WebSocket.
    WebSocket(RemoteEntry),
}

impl Transport {
    /// The kind of transport, without its details.
    pub fn kind(&self) -> TransportKind {
        match self {
            Transport::Stdio(_) => TransportKind::Stdio,
            Transport::Http { .. } => TransportKind::Http,
            Transport::WebSocket(_) => TransportKind::WebSocket,
        }
    }
}

/// Which HTTP transport an HTTP server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HttpMode {
    /// Streamable HTTP only: `type` was `http`, `streamable-http`,
    /// `streamable_http` or `streamableHttp`, the URL came from Gemini's
    /// `httpUrl`, or from a Codex `url` (Codex has no `type` and speaks
    /// only Streamable HTTP).
    Streamable,
    /// The legacy HTTP+SSE transport (2024-11-05) only: `type` was `sse` or
    /// `http+sse`.
    Sse,
    /// Streamable HTTP, falling back to HTTP+SSE if the server only speaks
    /// that: no `type` was given (`url`, `serverUrl`), or it was `remote`.
    /// Several clients read a bare `url` as SSE (Gemini CLI, older Cursor),
    /// others as Streamable HTTP (Codex), so only trying both is right for
    /// every file.
    Auto,
}

/// A server started as a child process.
#[derive(Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct StdioEntry {
    /// The program (`command`, or the first element of an argv array).
    pub command: String,
    /// Its arguments (`args`, after the rest of an argv `command`).
    pub args: Vec<String>,
    /// Variables to set (`Some`) or remove (`None`, from a JSON `null`) in
    /// its environment (`env`, `environment`).
    pub env: BTreeMap<String, Option<String>>,
    /// A dotenv file to load variables from (`envFile`, `env_file`); `env`
    /// wins over it.
    pub env_file: Option<String>,
    /// Its working directory (`cwd`).
    pub cwd: Option<String>,
    /// Names of variables to copy from this process's environment (Codex's
    /// `env_vars`).
    pub forward_env: Vec<String>,
}

impl StdioEntry {
    /// Runs `command` with no arguments and no extra environment.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            ..Self::default()
        }
    }

    fn redacted(&self) -> StdioEntry {
        StdioEntry {
            command: self.command.clone(),
            args: redact::args(&self.args),
            env: self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.as_deref().map(redact::hide)))
                .collect(),
            env_file: self.env_file.clone(),
            cwd: self.cwd.clone(),
            forward_env: self.forward_env.clone(),
        }
    }
}

impl fmt::Debug for StdioEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.redacted();
        f.debug_struct("StdioEntry")
            .field("command", &shown.command)
            .field("args", &shown.args)
            .field("env", &shown.env)
            .field("env_file", &shown.env_file)
            .field("cwd", &shown.cwd)
            .field("forward_env", &shown.forward_env)
            .finish()
    }
}

/// A server reached over the network.
#[derive(Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct RemoteEntry {
    /// Its URL (`url`, `httpUrl`, `serverUrl`).
    pub url: String,
    /// Headers sent with every request (`headers`, Codex's `http_headers`).
    pub headers: BTreeMap<String, String>,
    /// Headers whose value is read from an environment variable: header
    /// name to variable name (Codex's `env_http_headers`).
    pub env_headers: BTreeMap<String, String>,
    /// The variable holding a bearer token, sent as
    /// `Authorization: Bearer <token>` (Codex's `bearer_token_env_var`).
    pub bearer_token_env_var: Option<String>,
}

impl RemoteEntry {
    /// Connects to `url` with no extra headers.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            ..Self::default()
        }
    }

    fn redacted(&self) -> RemoteEntry {
        RemoteEntry {
            url: redact::url(&self.url),
            headers: self
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), redact::header_value(k, v)))
                .collect(),
            env_headers: self.env_headers.clone(),
            bearer_token_env_var: self.bearer_token_env_var.clone(),
        }
    }
}

impl fmt::Debug for RemoteEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.redacted();
        f.debug_struct("RemoteEntry")
            .field("url", &shown.url)
            .field("headers", &shown.headers)
            .field("env_headers", &shown.env_headers)
            .field("bearer_token_env_var", &shown.bearer_token_env_var)
            .finish()
    }
}

/// Whether a server is started and what it may do.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Policy {
    /// Start it (Codex's `enabled`, the inverse of `disabled`). Default: true.
    pub enabled: bool,
    /// Its failure to start is fatal rather than reported (Codex's
    /// `required`). Default: false.
    pub required: bool,
    /// How long starting it (spawn or connect, then the handshake) may take
    /// (Codex's `startup_timeout_sec` or `startup_timeout_ms`). Default: none
    /// given, the manager decides.
    pub startup_timeout: Option<Duration>,
    /// How long one request may take (Codex's `tool_timeout_sec`, Gemini's
    /// `timeout` in milliseconds). Default: none given.
    pub request_timeout: Option<Duration>,
    /// Only these tools are offered, if given (`includeTools`,
    /// `enabled_tools`).
    pub include_tools: Option<Vec<String>>,
    /// These tools are never offered, even if included (`excludeTools`,
    /// `disabled_tools`, `disabledTools`).
    pub exclude_tools: Vec<String>,
    /// Calls need no confirmation (Gemini's `trust`). Default: false.
    pub trust: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            enabled: true,
            required: false,
            startup_timeout: None,
            request_timeout: None,
            include_tools: None,
            exclude_tools: Vec::new(),
            trust: false,
        }
    }
}

impl Policy {
    /// Whether tool `name` may be offered and called: it is not excluded,
    /// and it is included when an include list exists. Exclusion wins.
    /// Names are compared exactly (no patterns), as Codex and Gemini do.
    pub fn allows_tool(&self, name: &str) -> bool {
        !self.exclude_tools.iter().any(|t| t == name)
            && self
                .include_tools
                .as_ref()
                .is_none_or(|list| list.iter().any(|t| t == name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusion_wins_over_inclusion() {
        let mut policy = Policy::default();
        assert!(policy.allows_tool("anything"));
        policy.include_tools = Some(vec!["read".into(), "write".into()]);
        policy.exclude_tools = vec!["write".into(), "delete".into()];
        assert!(policy.allows_tool("read"));
        assert!(!policy.allows_tool("write"));
        assert!(!policy.allows_tool("delete"));
        assert!(!policy.allows_tool("list"));
        policy.include_tools = None;
        assert!(policy.allows_tool("list"));
        assert!(!policy.allows_tool("delete"));
    }

    #[test]
    fn debug_hides_secrets_everywhere() {
        let mut stdio = StdioEntry::new("npx");
        stdio.args = vec!["--api-key=sk-live-1".into()];
        stdio
            .env
            .insert("GITHUB_TOKEN".into(), Some("ghp_secret".into()));
        stdio.env.insert("FROM".into(), Some("${HOME}".into()));
        let mut entry = ServerEntry::new("gh", Transport::Stdio(stdio));
        entry.extra.insert(
            "auth".into(),
            serde_json::json!({"CLIENT_SECRET": "cs-secret"}),
        );
        let shown = format!("{entry:?}");
        for secret in ["sk-live-1", "ghp_secret", "cs-secret"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("${HOME}"));

        let mut remote = RemoteEntry::new("https://u:pw-secret@h/mcp");
        remote
            .headers
            .insert("Authorization".into(), "Bearer tok-secret".into());
        remote.headers.insert("X-Region".into(), "eu".into());
        let entry = ServerEntry::new(
            "r",
            Transport::Http {
                remote,
                mode: HttpMode::Auto,
            },
        );
        let shown = format!("{entry:?} {:?}", entry.redacted());
        assert!(!shown.contains("tok-secret") && !shown.contains("pw-secret"));
        assert!(shown.contains("eu"));
    }
}
