//! One server's object, in any format's spelling, into a [`ServerEntry`].
//!
//! The field table (which key means what in which client) is in
//! `docs/manager.md`; each `take` below names the keys it reads.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Map;

use crate::document::{Member, Node, NodeKind};
use crate::entry::{HttpMode, Locations, Policy, RemoteEntry, ServerEntry, StdioEntry, Transport};
use crate::error::{EntryError, EntryProblem};
use crate::name::validate_server_name;
use crate::position::Position;
use crate::shape::Shape;
use crate::warning::{Warning, WarningKind};

/// An unusable entry, boxed: it is large and rare.
pub(crate) type Fail = Box<EntryError>;

/// The transport a `type` or `transport` value names.
enum Declared {
    Stdio,
    Http(HttpMode),
    WebSocket,
    Unknown,
}

fn declared(value: &str) -> Declared {
    match value.to_ascii_lowercase().as_str() {
        "stdio" | "local" => Declared::Stdio,
        "http" | "streamable-http" | "streamable_http" | "streamablehttp" | "streamable" => {
            Declared::Http(HttpMode::Streamable)
        }
        "sse" | "http+sse" => Declared::Http(HttpMode::Sse),
        "remote" => Declared::Http(HttpMode::Auto),
        "ws" | "websocket" => Declared::WebSocket,
        _ => Declared::Unknown,
    }
}

/// Reads one server of a file of `shape`. Warnings about it are pushed to
/// `warnings`.
pub(crate) fn entry(
    member: &Member,
    origin: &Path,
    shape: Shape,
    warnings: &mut Vec<Warning>,
) -> Result<ServerEntry, Fail> {
    let mut cx = Cx {
        origin,
        server: &member.key,
        warnings,
        locations: Locations {
            entry: Some(member.at),
            fields: BTreeMap::new(),
        },
    };
    if let Err(reason) = validate_server_name(&member.key) {
        cx.warn(
            None,
            Some(member.at),
            WarningKind::InvalidServerName(reason),
        );
    }
    let members = member.value.as_object().ok_or_else(|| {
        Box::new(EntryError {
            origin: origin.to_owned(),
            server: member.key.clone(),
            field: None,
            position: Some(member.value.at),
            problem: EntryProblem::NotAnObject {
                found: member.value.type_name(),
            },
        })
    })?;
    let mut fields = Fields::new(members);

    let kind = cx.first_of(&mut fields, &["type", "transport"]);
    if let Some(m) = kind {
        cx.locate("type", m);
    }
    let command = fields.take("command");
    let http_url = fields.take("httpUrl");
    let url = cx.first_of(&mut fields, &["url", "serverUrl"]);
    let stdio_fields = [
        ("args", fields.take("args")),
        ("env", cx.first_of(&mut fields, &["env", "environment"])),
        (
            "envFile",
            cx.first_of(&mut fields, &["envFile", "env_file"]),
        ),
        ("cwd", fields.take("cwd")),
        ("env_vars", fields.take("env_vars")),
    ];
    let remote_fields = [
        (
            "headers",
            cx.first_of(&mut fields, &["headers", "http_headers"]),
        ),
        ("env_http_headers", fields.take("env_http_headers")),
        ("bearer_token_env_var", fields.take("bearer_token_env_var")),
        ("bearer_token", fields.take("bearer_token")),
    ];

    let declared = match kind {
        Some(m) => {
            let value = cx.string(m)?;
            match declared(&value) {
                Declared::Unknown => {
                    cx.warn(Some(m), None, WarningKind::UnknownType { value });
                    None
                }
                known => Some(known),
            }
        }
        None => None,
    };
    let explicit_type = kind.is_some();

    // Which URL field wins, and the mode it implies when no type is given.
    let (url_member, url_mode) = match (http_url, url) {
        (Some(h), Some(u)) => {
            cx.warn(
                Some(u),
                None,
                WarningKind::ConflictingFields {
                    used: "httpUrl",
                    ignored: "url",
                },
            );
            (Some(h), HttpMode::Streamable)
        }
        (Some(h), None) => (Some(h), HttpMode::Streamable),
        // Codex has no `type` and speaks only Streamable HTTP to a `url`.
        (None, Some(u)) if shape == Shape::McpServersSnakeCase => (Some(u), HttpMode::Streamable),
        (None, Some(u)) => (Some(u), HttpMode::Auto),
        (None, None) => (None, HttpMode::Auto),
    };

    let transport = match declared {
        Some(Declared::Stdio) => Some(TransportChoice::Stdio),
        Some(Declared::Http(mode)) => Some(TransportChoice::Http(mode)),
        Some(Declared::WebSocket) => Some(TransportChoice::WebSocket),
        Some(Declared::Unknown) | None => None,
    };
    let transport = match transport {
        Some(t) => t,
        None => match (command, url_member) {
            (Some(_), Some(u)) => {
                cx.warn(
                    Some(u),
                    None,
                    WarningKind::ConflictingFields {
                        used: "command",
                        ignored: "url",
                    },
                );
                TransportChoice::Stdio
            }
            (Some(_), None) => TransportChoice::Stdio,
            (None, Some(u)) => {
                let text = cx.string(u)?;
                let lower = text.to_ascii_lowercase();
                if lower.starts_with("ws://") || lower.starts_with("wss://") {
                    TransportChoice::WebSocket
                } else {
                    if !explicit_type && url_mode == HttpMode::Auto {
                        cx.warn(Some(u), None, WarningKind::UrlWithoutType);
                    }
                    TransportChoice::Http(url_mode)
                }
            }
            (None, None) => {
                return Err(cx.error(None, Some(member.value.at), EntryProblem::NoTransport));
            }
        },
    };

    let mut extra = Map::new();
    let transport = match transport {
        TransportChoice::Stdio => {
            let command = command.ok_or_else(|| {
                cx.error(
                    None,
                    Some(member.value.at),
                    EntryProblem::MissingField { field: "command" },
                )
            })?;
            ignore(
                &mut cx,
                &mut extra,
                url_member
                    .into_iter()
                    .chain(remote_fields.iter().filter_map(|f| f.1)),
            );
            Transport::Stdio(stdio(&mut cx, command, stdio_fields)?)
        }
        TransportChoice::Http(_) | TransportChoice::WebSocket => {
            let url = url_member.ok_or_else(|| {
                cx.error(
                    None,
                    Some(member.value.at),
                    EntryProblem::MissingField { field: "url" },
                )
            })?;
            ignore(
                &mut cx,
                &mut extra,
                command
                    .into_iter()
                    .chain(stdio_fields.iter().filter_map(|f| f.1)),
            );
            let remote = remote(&mut cx, url, remote_fields)?;
            match transport {
                TransportChoice::Http(mode) => Transport::Http { remote, mode },
                _ => Transport::WebSocket(remote),
            }
        }
    };

    let policy = policy(&mut cx, &mut fields)?;
    let description = fields
        .take("description")
        .map(|m| cx.string(m))
        .transpose()?;
    for m in fields.rest() {
        extra.insert(m.key.clone(), m.value.to_value());
    }
    Ok(ServerEntry {
        name: member.key.clone(),
        origin: origin.to_owned(),
        transport,
        policy,
        description,
        extra,
        locations: cx.locations,
    })
}

#[derive(Clone, Copy)]
enum TransportChoice {
    Stdio,
    Http(HttpMode),
    WebSocket,
}

/// Fields of the other transport: kept in `extra`, with a warning.
fn ignore<'a>(
    cx: &mut Cx<'_>,
    extra: &mut Map<String, serde_json::Value>,
    members: impl Iterator<Item = &'a Member>,
) {
    for m in members {
        cx.warn(Some(m), None, WarningKind::IgnoredField);
        extra.insert(m.key.clone(), m.value.to_value());
    }
}

fn stdio(
    cx: &mut Cx<'_>,
    command: &Member,
    fields: [(&'static str, Option<&Member>); 5],
) -> Result<StdioEntry, Fail> {
    cx.locate("command", command);
    let mut entry = StdioEntry::default();
    match &command.value.kind {
        NodeKind::Array(items) if !items.is_empty() => {
            let mut argv = cx.strings(command, items)?.into_iter();
            entry.command = argv.next().unwrap_or_default();
            entry.args.extend(argv);
        }
        NodeKind::String(s) => entry.command = s.clone(),
        _ => {
            return Err(cx.wrong(command, "a string or a non-empty array of strings"));
        }
    }
    let [args, env, env_file, cwd, env_vars] = fields.map(|(name, m)| m.map(|m| (name, m)));
    if let Some((name, m)) = args {
        cx.locate(name, m);
        let NodeKind::Array(items) = &m.value.kind else {
            return Err(cx.wrong(m, "an array of strings"));
        };
        entry.args.extend(cx.strings(m, items)?);
    }
    for (index, arg) in entry.args.iter().enumerate() {
        if arg.contains(' ') {
            let at = cx.locations.fields.get("args").copied();
            cx.warn(None, at, WarningKind::ArgWithSpaces { index });
        }
    }
    let head = entry.command.split(' ').next().unwrap_or_default();
    if entry.command.contains(' ') && entry.args.is_empty() && !head.contains(['/', '\\']) {
        cx.warn(Some(command), None, WarningKind::CommandWithSpaces);
    }
    if let Some((name, m)) = env {
        cx.locate(name, m);
        entry.env = cx.string_map(m, true)?;
    }
    if let Some((name, m)) = env_file {
        cx.locate(name, m);
        entry.env_file = Some(cx.string(m)?);
    }
    if let Some((name, m)) = cwd {
        cx.locate(name, m);
        entry.cwd = Some(cx.string(m)?);
    }
    if let Some((name, m)) = env_vars {
        cx.locate(name, m);
        // Codex: each element is a name, or `{ name = "...", source = "..." }`.
        let NodeKind::Array(items) = &m.value.kind else {
            return Err(cx.wrong(m, "an array of variable names"));
        };
        for item in items {
            let name = match &item.kind {
                NodeKind::String(s) => Some(s.clone()),
                NodeKind::Object(fields) => fields
                    .iter()
                    .rev()
                    .find(|f| f.key == "name")
                    .and_then(|f| f.value.as_str().map(str::to_owned)),
                _ => None,
            };
            entry
                .forward_env
                .push(name.ok_or_else(|| cx.wrong(m, "an array of variable names"))?);
        }
    }
    Ok(entry)
}

fn remote(
    cx: &mut Cx<'_>,
    url: &Member,
    fields: [(&'static str, Option<&Member>); 4],
) -> Result<RemoteEntry, Fail> {
    cx.locate("url", url);
    let mut entry = RemoteEntry::new(cx.string(url)?);
    let [headers, env_headers, bearer_var, bearer] = fields.map(|(name, m)| m.map(|m| (name, m)));
    if let Some((name, m)) = headers {
        cx.locate(name, m);
        entry.headers = cx
            .string_map(m, false)?
            .into_iter()
            .map(|(k, v)| (k, v.unwrap_or_default()))
            .collect();
    }
    if let Some((name, m)) = env_headers {
        cx.locate(name, m);
        entry.env_headers = cx
            .string_map(m, false)?
            .into_iter()
            .map(|(k, v)| (k, v.unwrap_or_default()))
            .collect();
    }
    if let Some((name, m)) = bearer_var {
        cx.locate(name, m);
        entry.bearer_token_env_var = Some(cx.string(m)?);
    }
    if let Some((_, m)) = bearer {
        // Codex once took the token inline; it now refuses it. Kept working
        // here, as a header, with a warning.
        let token = cx.string(m)?;
        cx.warn(
            Some(m),
            None,
            WarningKind::DeprecatedField {
                replacement: "bearer_token_env_var",
            },
        );
        let has_auth = entry
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"));
        if !has_auth {
            entry
                .headers
                .insert("Authorization".into(), format!("Bearer {token}"));
        }
    }
    Ok(entry)
}

fn policy(cx: &mut Cx<'_>, fields: &mut Fields<'_>) -> Result<Policy, Fail> {
    let mut policy = Policy::default();
    if let Some(m) = fields.take("enabled") {
        policy.enabled = cx.boolean(m)?;
    }
    if let Some(m) = fields.take("disabled") {
        policy.enabled &= !cx.boolean(m)?;
    }
    if let Some(m) = fields.take("required") {
        policy.required = cx.boolean(m)?;
    }
    if let Some(m) = fields.take("trust") {
        policy.trust = cx.boolean(m)?;
    }
    let startup_sec = fields.take("startup_timeout_sec");
    let startup_ms = fields.take("startup_timeout_ms");
    if let Some(m) = startup_ms {
        cx.warn(
            Some(m),
            None,
            WarningKind::DeprecatedField {
                replacement: "startup_timeout_sec",
            },
        );
    }
    policy.startup_timeout = match (startup_sec, startup_ms) {
        (Some(sec), ms) => {
            if let Some(ms) = ms {
                cx.warn(
                    Some(ms),
                    None,
                    WarningKind::ConflictingFields {
                        used: "startup_timeout_sec",
                        ignored: "startup_timeout_ms",
                    },
                );
            }
            Some(cx.timeout(sec, 1.0)?)
        }
        (None, Some(ms)) => Some(cx.timeout(ms, 1e-3)?),
        (None, None) => None,
    };
    let tool_sec = fields.take("tool_timeout_sec");
    let timeout_ms = fields.take("timeout");
    policy.request_timeout = match (tool_sec, timeout_ms) {
        (Some(sec), ms) => {
            if let Some(ms) = ms {
                cx.warn(
                    Some(ms),
                    None,
                    WarningKind::ConflictingFields {
                        used: "tool_timeout_sec",
                        ignored: "timeout",
                    },
                );
            }
            Some(cx.timeout(sec, 1.0)?)
        }
        (None, Some(ms)) => Some(cx.timeout(ms, 1e-3)?),
        (None, None) => None,
    };
    for key in ["includeTools", "enabled_tools"] {
        if let Some(m) = fields.take(key) {
            let list = cx.string_list(m)?;
            policy
                .include_tools
                .get_or_insert_with(Vec::new)
                .extend(list);
        }
    }
    for key in ["excludeTools", "disabled_tools", "disabledTools"] {
        if let Some(m) = fields.take(key) {
            policy.exclude_tools.extend(cx.string_list(m)?);
        }
    }
    Ok(policy)
}

/// The members of one object, taken by name; what is left goes to `extra`.
struct Fields<'a> {
    members: Vec<Option<&'a Member>>,
}

impl<'a> Fields<'a> {
    fn new(members: &'a [Member]) -> Self {
        Self {
            members: members.iter().map(Some).collect(),
        }
    }

    /// The member named `key` (the last one if repeated, as JSON readers
    /// do), removed with its repeats.
    fn take(&mut self, key: &str) -> Option<&'a Member> {
        let mut found = None;
        for slot in &mut self.members {
            if slot.is_some_and(|m| m.key == key) {
                found = slot.take();
            }
        }
        found
    }

    fn rest(self) -> impl Iterator<Item = &'a Member> {
        self.members.into_iter().flatten()
    }
}

/// The context of one entry: names for messages, warnings, positions.
struct Cx<'a> {
    origin: &'a Path,
    server: &'a str,
    warnings: &'a mut Vec<Warning>,
    locations: Locations,
}

impl Cx<'_> {
    fn warn(&mut self, field: Option<&Member>, position: Option<Position>, kind: WarningKind) {
        self.warnings.push(Warning {
            origin: self.origin.to_owned(),
            server: Some(self.server.to_owned()),
            field: field.map(|m| m.key.clone()),
            position: field.map(|m| m.at).or(position),
            kind,
        });
    }

    fn error(
        &self,
        field: Option<&Member>,
        position: Option<Position>,
        problem: EntryProblem,
    ) -> Fail {
        Box::new(EntryError {
            origin: self.origin.to_owned(),
            server: self.server.to_owned(),
            field: field.map(|m| m.key.clone()),
            position: field.map(|m| m.at).or(position),
            problem,
        })
    }

    fn wrong(&self, m: &Member, expected: &'static str) -> Fail {
        self.error(
            Some(m),
            None,
            EntryProblem::WrongType {
                expected,
                found: m.value.type_name(),
            },
        )
    }

    fn locate(&mut self, name: &'static str, m: &Member) {
        self.locations.fields.insert(name, m.at);
    }

    /// The first present of `keys` (which all mean the same thing); another
    /// one present is ignored with a warning.
    fn first_of<'m>(
        &mut self,
        fields: &mut Fields<'m>,
        keys: &[&'static str],
    ) -> Option<&'m Member> {
        let mut found: Option<(&'static str, &'m Member)> = None;
        for &key in keys {
            if let Some(m) = fields.take(key) {
                match found {
                    None => found = Some((key, m)),
                    Some((used, _)) => {
                        self.warn(
                            Some(m),
                            None,
                            WarningKind::ConflictingFields { used, ignored: key },
                        );
                    }
                }
            }
        }
        found.map(|(_, m)| m)
    }

    fn string(&self, m: &Member) -> Result<String, Fail> {
        m.value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.wrong(m, "a string"))
    }

    fn boolean(&self, m: &Member) -> Result<bool, Fail> {
        match m.value.kind {
            NodeKind::Bool(b) => Ok(b),
            _ => Err(self.wrong(m, "true or false")),
        }
    }

    fn strings(&self, m: &Member, items: &[Node]) -> Result<Vec<String>, Fail> {
        items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| self.wrong(m, "an array of strings"))
            })
            .collect()
    }

    fn string_list(&self, m: &Member) -> Result<Vec<String>, Fail> {
        match &m.value.kind {
            NodeKind::Array(items) => self.strings(m, items),
            _ => Err(self.wrong(m, "an array of strings")),
        }
    }

    /// An object of strings. Numbers and booleans are taken as their text
    /// (`"PORT": 8080`), as Node.js does when it sets an environment; `null`
    /// is `None` where `nulls` allows it (an `env` entry to remove).
    fn string_map(
        &self,
        m: &Member,
        nulls: bool,
    ) -> Result<BTreeMap<String, Option<String>>, Fail> {
        let expected = if nulls {
            "an object of strings (or null)"
        } else {
            "an object of strings"
        };
        let members = m.value.as_object().ok_or_else(|| self.wrong(m, expected))?;
        let mut map = BTreeMap::new();
        for member in members {
            let value = match &member.value.kind {
                NodeKind::String(s) => Some(s.clone()),
                NodeKind::Number(n) => Some(n.to_string()),
                NodeKind::Bool(b) => Some(b.to_string()),
                NodeKind::Null if nulls => None,
                _ => {
                    let mut error = self.error(
                        Some(member),
                        None,
                        EntryProblem::WrongType {
                            expected,
                            found: member.value.type_name(),
                        },
                    );
                    error.field = Some(format!("{}.{}", m.key, member.key));
                    return Err(error);
                }
            };
            map.insert(member.key.clone(), value);
        }
        Ok(map)
    }

    /// A timeout given as a number of `unit` seconds.
    fn timeout(&mut self, m: &Member, unit: f64) -> Result<Duration, Fail> {
        let NodeKind::Number(n) = &m.value.kind else {
            return Err(self.wrong(m, "a number"));
        };
        let seconds = n.as_f64().map(|v| v * unit);
        let timeout = seconds
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| self.error(Some(m), None, EntryProblem::InvalidTimeout))?;
        if timeout < Duration::from_secs(1) {
            self.warn(Some(m), None, WarningKind::SubSecondTimeout { timeout });
        }
        Ok(timeout)
    }
}
