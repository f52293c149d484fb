//! The MCP server configuration files users already have, read into one
//! normalized [`ServerEntry`] per server.
//!
//! Reads JSON (with the comments and trailing commas VS Code writes) and
//! TOML, in every shape in use: `mcpServers` (Claude Desktop, Claude Code's
//! `.mcp.json`, Cursor, Windsurf, Gemini CLI's `settings.json`), `servers`
//! (VS Code's `mcp.json`, with its `inputs`), `[mcp_servers.NAME]` (Codex's
//! `config.toml`), or a bare map of servers. Each client's spelling of a
//! field (`headers` or `http_headers`, `timeout` in milliseconds or
//! `tool_timeout_sec` in seconds, `includeTools` or `enabled_tools`) lands in
//! the same place; every field not understood is kept in
//! [`ServerEntry::extra`], never an error. `docs/manager.md` has the whole
//! table.
//!
//! Two steps:
//! 1. **Load** ([`load_file`], [`LoadOptions`]): parse, find the servers,
//!    normalize. Values are kept as written (`${TOKEN}` stays `${TOKEN}`), so
//!    listing servers never needs a secret. Problems that do not stop a
//!    server from working come back as [`Warning`]s, never printed.
//! 2. **Resolve** ([`Resolver`]): expand variables (`${VAR}`,
//!    `${VAR:-default}`, `${env:VAR}`, and `${workspaceFolder}`,
//!    `${userHome}`, `${input:ID}` through a [`VariableResolver`]), read the
//!    env file, and check the transport is supported, giving a
//!    [`ResolvedServer`] ready to start. The environment comes through
//!    [`Environment`], so tests never touch the real one.
//!
//! Also: [`validate_server_name`] (the rules for `{server}__{tool}` names),
//! [`well_known_paths`] (where each client keeps its files, per OS), merging
//! files ([`LoadOptions::load_files`], [`Duplicates`]) and secret-safe
//! printing ([`ServerEntry::redacted`]; every `Debug` hides secrets).
//!
//! What it does **not** do: start servers, know the transport crates (the
//! manager turns a [`ResolvedServer`] into a transport configuration), ask a
//! user anything, or read any file but the ones named to it and an entry's
//! `envFile`.
//!
//! ```
//! use std::collections::HashMap;
//! use mcpwire_config::{Format, LoadOptions, Resolver, ResolvedTransport, Transport};
//!
//! let text = r#"{
//!   // Claude Desktop style, with a comment
//!   "mcpServers": {
//!     "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}"] },
//!     "remote": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${TOKEN}" } },
//!   }
//! }"#;
//! let config = LoadOptions::new().parse_str(text, Format::Json, "claude_desktop_config.json")?;
//! assert_eq!(config.servers.len(), 2);
//! assert!(matches!(config.servers[0].transport, Transport::Stdio(_)));
//! // A URL without "type" works (Streamable HTTP, then HTTP+SSE) but is worth a warning.
//! assert_eq!(config.warnings.len(), 1);
//!
//! let env = HashMap::from([
//!     ("HOME".to_owned(), "/home/me".to_owned()),
//!     ("TOKEN".to_owned(), "secret".to_owned()),
//! ]);
//! let files = Resolver::new(&env).resolve(&config.servers[0])?;
//! let ResolvedTransport::Stdio(stdio) = &files.transport else { unreachable!() };
//! assert_eq!(stdio.args[2], "/home/me");
//! // Debug output never shows the token.
//! let remote = Resolver::new(&env).resolve(&config.servers[1])?;
//! assert!(!format!("{remote:?}").contains("secret"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod env_file;
mod expand;
mod format;
mod discover;
mod name;
mod position;
mod document;
mod redact;
mod entry;
mod error;
mod input;
mod warning;
mod resolve;
mod shape;
mod normalize;
mod load;

pub use discover::{ClientApp, DiscoveryContext, KnownPath, Os, Scope, well_known_paths};
pub use entry::{HttpMode, Policy, RemoteEntry, ServerEntry, StdioEntry, Transport, TransportKind};
pub use error::{EntryError, EntryProblem, LoadError, ResolveError};
pub use expand::{
    Environment, ProcessEnvironment, StandardVariables, UnsetVariable, Variable, VariableResolver,
};
pub use format::Format;
pub use input::Input;
pub use load::{Config, Duplicates, LoadOptions, Source, load_file};
pub use name::{MAX_SERVER_NAME_LEN, NameError, validate_server_name};
pub use position::Position;
pub use resolve::{ResolvedRemote, ResolvedServer, ResolvedStdio, ResolvedTransport, Resolver};
pub use shape::Shape;
pub use warning::{Warning, WarningKind};
