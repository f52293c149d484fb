//! Which server to talk to, and how: `-s NAME` from the `--config` files,
//! `-s URL`, or `-- CMD ARGS...`; then the [`Server`] with the global
//! options applied (`-H`, `-e`, `--cwd`, `--transport`, timeouts, the token
//! store, `--non-interactive`) and the connection itself.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mcpwire::auth::{Auth, AuthError, FileStore, OAuthConfig, PendingRedirect, RedirectStep};
use mcpwire::client::types::{ListRootsResult, LoggingLevel, Root};
use mcpwire::config::{
    Config, Duplicates, HttpMode as ConfigMode, LoadOptions, ResolvedTransport, WarningKind,
};
use mcpwire::http::{HeaderName, HeaderValue, HttpMode, RetryPolicy};
use mcpwire::transport::is_credential_header;
use mcpwire::{Client, ClientConfig, HttpConfig, Server, StderrMode, StdioConfig};

use crate::args::{Global, TransportChoice};
use crate::failure::{AuthCause, Exit, Failure};
use crate::{asked, wire_log};

/// Where the server is, before options are applied.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A local command line.
    Command(Vec<String>),
    /// A URL.
    Url(String),
    /// A configuration entry, resolved.
    Entry(Box<mcpwire::config::ResolvedServer>),
    /// `unix:PATH`: a `mcpwire serve --socket PATH` left running.
    Unix(PathBuf),
}

impl Target {
    /// A short description for messages: the URL, command or name.
    pub(crate) fn describe(&self) -> String {
        match self {
            Target::Command(argv) => argv.join(" "),
            Target::Url(url) => url.clone(),
            Target::Entry(entry) => format!("server {:?}", entry.name),
            Target::Unix(path) => format!("unix:{}", path.display()),
        }
    }

    /// The URL, for a remote target.
    pub(crate) fn url(&self) -> Option<&str> {
        match self {
            Target::Url(url) => Some(url),
            Target::Entry(entry) => match &entry.transport {
                ResolvedTransport::Http { remote, .. } | ResolvedTransport::WebSocket(remote) => {
                    Some(&remote.url)
                }
                _ => None,
            },
            Target::Command(_) | Target::Unix(_) => None,
        }
    }
}

/// Loads every `--config` file into one configuration (later files may not
/// repeat a name).
pub(crate) fn load_configs(global: &Global) -> Result<Config, Failure> {
    if global.config.is_empty() {
        return Ok(Config::default());
    }
    // Files given later are layered over earlier ones (a project's over
    // the user's): a server of the same name is the later file's, said on
    // stderr, not an error.
    let config = LoadOptions::new()
        .duplicates(Duplicates::LaterWins)
        .load_files(&global.config)
        .map_err(|e| Failure::caused(Exit::Usage, "cannot load the configuration", e))?;
    for warning in &config.warnings {
        if matches!(warning.kind, WarningKind::ReplacedServer { .. }) {
            eprintln!("note: {warning}");
        }
    }
    Ok(config)
}

fn looks_like_url(s: &str) -> bool {
    s.contains("://")
}

/// Picks the target: `-- CMD` first, then `-s` (a URL, or a name), then
/// the only server of the configuration files.
pub(crate) fn select(
    global: &Global,
    server_command: &[String],
    explicit: Option<&str>,
) -> Result<Target, Failure> {
    let chosen = explicit.or(global.server.as_deref());
    if !server_command.is_empty() {
        if chosen.is_some() {
            return Err(Failure::usage(
                "give either -s NAME|URL or -- CMD ARGS..., not both",
            ));
        }
        return Ok(Target::Command(server_command.to_vec()));
    }
    if let Some(path) = chosen.and_then(|s| s.strip_prefix("unix:")) {
        return Ok(Target::Unix(PathBuf::from(path)));
    }
    if let Some(url) = chosen.filter(|s| looks_like_url(s)) {
        return Ok(Target::Url(url.to_owned()));
    }
    let config = load_configs(global)?;
    let entry = match chosen {
        Some(name) => config.get(name).ok_or_else(|| {
            let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
            Failure::usage(if global.config.is_empty() {
                format!("no server {name:?}: give --config FILE to name servers, or a URL")
            } else {
                format!(
                    "no server {name:?} in the configuration (there are: {})",
                    names.join(", ")
                )
            })
        })?,
        None => match config.servers.as_slice() {
            [only] => only,
            [] => {
                return Err(Failure::usage(
                    "no server given: use -s NAME|URL or -- CMD ARGS... (see --help)",
                ));
            }
            many => {
                let names: Vec<&str> = many.iter().map(|s| s.name.as_str()).collect();
                return Err(Failure::usage(format!(
                    "the configuration has {} servers, choose one with -s: {}",
                    many.len(),
                    names.join(", ")
                )));
            }
        },
    };
    let resolver = mcpwire::config_resolver(&mcpwire::config::ProcessEnvironment);
    let resolved = resolver.resolve(entry).map_err(|e| {
        Failure::caused(
            Exit::Usage,
            format!("server {:?} cannot be used", entry.name),
            e,
        )
    })?;
    Ok(Target::Entry(Box::new(resolved)))
}

/// The token store login writes and every remote connection reads.
pub(crate) fn token_dir(global: &Global) -> PathBuf {
    if let Some(dir) = &global.token_dir {
        return dir.clone();
    }
    if let Some(dir) = std::env::var_os("MCPWIRE_TOKEN_DIR") {
        return dir.into();
    }
    user_state_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("mcpwire")
        .join("tokens")
}

/// Where the user's private files go on Windows: `%LOCALAPPDATA%` (it does
/// not roam, and its default ACL, which new files inherit, grants only the
/// user, SYSTEM and the administrators). `HOME` is rarely set there.
#[cfg(windows)]
fn user_state_dir() -> Option<PathBuf> {
    std::env::var_os("LOCALAPPDATA")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("USERPROFILE").map(|h| PathBuf::from(h).join("AppData").join("Local"))
        })
}

/// Where the user's configuration goes elsewhere: `$XDG_CONFIG_HOME`, else
/// `~/.config` (macOS included, as most command-line tools do).
#[cfg(not(windows))]
fn user_state_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
}

/// A redirect step that never opens a browser: `--non-interactive`.
#[derive(Debug)]
struct NoBrowser;

type Prepared<'a> =
    Pin<Box<dyn Future<Output = Result<Box<dyn PendingRedirect>, AuthError>> + Send + 'a>>;

impl RedirectStep for NoBrowser {
    fn prepare(&self) -> Prepared<'_> {
        // The same error as no terminal: `auth_failure` words both for the
        // user, naming --non-interactive when it is set.
        Box::pin(async { Err(AuthError::InteractionRequired) })
    }
}

/// The credentials the user gave for a remote server, if any, described
/// by where they came from: a credential header (`Authorization`,
/// `X-Api-Key`...) of `-H`, or of the configuration entry.
pub(crate) fn given_credentials(global: &Global, target: &Target) -> Option<String> {
    for raw in &global.headers {
        if let Some((name, _)) = raw.split_once(':')
            && is_credential_header(name.trim())
        {
            return Some(format!("the {} header given with -H", name.trim()));
        }
    }
    if let Target::Entry(entry) = target
        && let ResolvedTransport::Http { remote, .. } | ResolvedTransport::WebSocket(remote) =
            &entry.transport
        && let Some(name) = remote.headers.keys().find(|k| is_credential_header(k))
    {
        return Some(format!(
            "the {name} header of server {:?} in the configuration",
            entry.name
        ));
    }
    None
}

/// An authorization failure said in the user's words, with the command or
/// flag that fixes it; other failures as they are.
pub(crate) fn auth_failure(global: &Global, target: &Target, failure: Failure) -> Failure {
    const TOKEN: &str = "-H 'Authorization: Bearer …'";
    let url = target.url().unwrap_or("URL");
    let login = match target {
        Target::Entry(entry) => format!("mcpwire --config FILE login {}", entry.name),
        _ => format!("mcpwire login {url}"),
    };
    let given = given_credentials(global, target);
    match (failure.auth_cause(), given) {
        (Some(AuthCause::Refused), Some(given)) => failure.plainly(
            format!("the server refused the token in {given}"),
            "check the token (has it expired, or been revoked?), or leave it out to sign in with `mcpwire login` where the server offers that",
        ),
        (Some(AuthCause::TokenRequired), _) => failure.plainly(
            "this server wants a token (it offers no OAuth sign-in)",
            format!(
                "pass {TOKEN} (or the header its documentation names), or set it in the configuration file's \"headers\" for the server"
            ),
        ),
        (Some(AuthCause::InteractionRequired), _) => {
            let why = if global.non_interactive {
                "--non-interactive is set"
            } else {
                "no terminal is attached"
            };
            failure.plainly(
                format!("this server needs you to sign in with a browser, and {why}"),
                format!("run `{login}` first (at a terminal), or pass a token with {TOKEN}"),
            )
        }
        _ => failure,
    }
}

/// OAuth with the file token store (and no browser when non-interactive).
pub(crate) fn oauth_config(global: &Global) -> OAuthConfig {
    let store = Arc::new(FileStore::new(token_dir(global)));
    let config = OAuthConfig::new().token_store(store).client_name("mcpwire");
    if global.non_interactive {
        config.redirect(NoBrowser)
    } else {
        config
    }
}

fn parse_header(raw: &str) -> Result<(HeaderName, HeaderValue), Failure> {
    let Some((name, value)) = raw.split_once(':') else {
        return Err(Failure::usage(format!(
            "header {:?} is not \"Name: value\"",
            raw.split(':').next().unwrap_or_default()
        )));
    };
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| Failure::usage(format!("{:?} is not a valid header name", name.trim())))?;
    // The value may be a credential: it is never shown.
    let mut value = HeaderValue::from_str(value.trim())
        .map_err(|_| Failure::usage(format!("the value of header {name} is not valid")))?;
    value.set_sensitive(true);
    Ok((name, value))
}

fn parse_env(raw: &str) -> Result<(&str, &str), Failure> {
    raw.split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| {
            Failure::usage(format!(
                "-e {:?} is not K=V",
                raw.split('=').next().unwrap_or_default()
            ))
        })
}

fn seconds(s: f64, what: &str) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Failure::usage(format!("{what} must be a positive number of seconds")))
}

/// The headers of `-H` and of the configuration entry.
fn headers(global: &Global, target: &Target) -> Result<Vec<(HeaderName, HeaderValue)>, Failure> {
    let mut out = Vec::new();
    if let Target::Entry(entry) = target
        && let ResolvedTransport::Http { remote, .. } | ResolvedTransport::WebSocket(remote) =
            &entry.transport
    {
        for (k, v) in &remote.headers {
            out.push(parse_header(&format!("{k}: {v}"))?);
        }
    }
    for raw in &global.headers {
        out.push(parse_header(raw)?);
    }
    Ok(out)
}

/// A note for a local server that failed naming, in its last stderr
/// lines, a variable set in this environment that it was not given (a
/// token it needs, say): how to pass it.
pub(crate) fn unpassed_variable_note(global: &Global, failure: &Failure) -> Option<String> {
    let passed: Vec<&str> = global
        .env
        .iter()
        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k))
        .chain(global.pass_env.iter().map(String::as_str))
        .collect();
    let text = failure.stderr_tail().join("\n");
    let name = text
        .split(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .filter(|w| {
            w.len() >= 3 && w.contains('_') && w.starts_with(|c: char| c.is_ascii_uppercase())
        })
        .find(|w| std::env::var_os(w).is_some() && !passed.contains(w))?;
    Some(format!(
        "the server names {name}, which is set here but not passed to it: add --pass-env {name}"
    ))
}

fn stdio_server(global: &Global, mut config: StdioConfig) -> Result<Server, Failure> {
    for name in &global.pass_env {
        match std::env::var_os(name) {
            Some(value) => config = config.env(name, value),
            None => eprintln!("note: --pass-env {name}: not set here, so not passed"),
        }
    }
    for raw in &global.env {
        let (k, v) = parse_env(raw)?;
        config = config.env(k, v);
    }
    if let Some(cwd) = &global.cwd {
        config = config.cwd(cwd);
    }
    // Shown as it comes when asked for, with -v, or to a person at a
    // terminal; otherwise (a script) its tail is kept for the error
    // message if it fails.
    let shown = global.verbose
        || global.server_stderr
        || std::io::IsTerminal::is_terminal(&std::io::stderr());
    let stderr = if shown {
        StderrMode::Inherit
    } else {
        StderrMode::Discard
    };
    Ok(Server::stdio(config.stderr(stderr)))
}

fn remote_server(
    global: &Global,
    target: &Target,
    url: &str,
    entry_mode: Option<ConfigMode>,
) -> Result<Server, Failure> {
    // With -v the wire log shows these with every request they go with.
    let headers = headers(global, target)?;
    let connect_timeout = seconds(global.connect_timeout, "--connect-timeout")?;
    let is_ws = matches!(global.transport, TransportChoice::Ws)
        || url.starts_with("ws://")
        || url.starts_with("wss://");
    if is_ws {
        let mut config = mcpwire::ws::WsConfig::new().connect_timeout(connect_timeout);
        for (k, v) in headers {
            config = config.header(k, v);
        }
        return Ok(Server::ws(url).config(config).into());
    }
    // A person (or a CI job) waiting for an answer: give up on an
    // unreachable server after two quick retries, not the library's
    // patient default (eight, over minutes).
    let retry = RetryPolicy::default()
        .max_attempts(2)
        .max_delay(Duration::from_secs(1))
        .max_elapsed(connect_timeout);
    let mut config = HttpConfig::new()
        .connect_timeout(connect_timeout)
        .retry(retry);
    for (k, v) in headers {
        config = config.header(k, v);
    }
    // Credentials the user brought (a token in -H or in the configuration)
    // are theirs to manage: no OAuth flow starts behind them, and a refusal
    // is reported as a refused token.
    let auth = if given_credentials(global, target).is_some() {
        Auth::None
    } else {
        Auth::oauth(oauth_config(global))
    };
    let server = Server::http(url).config(config).auth(auth);
    let mode = match (global.transport, entry_mode) {
        (TransportChoice::Http, _) | (_, Some(ConfigMode::Streamable)) => {
            Some(HttpMode::StreamableHttp)
        }
        (TransportChoice::Sse, _) | (_, Some(ConfigMode::Sse)) => Some(HttpMode::LegacySse),
        _ => None,
    };
    Ok(match mode {
        Some(mode) => server.mode(mode).into(),
        None => server.into(),
    })
}

/// The [`Server`] for `target` with the global options applied.
pub(crate) fn server(global: &Global, target: &Target) -> Result<Server, Failure> {
    match (target, global.transport) {
        (
            Target::Command(_),
            TransportChoice::Http | TransportChoice::Sse | TransportChoice::Ws,
        )
        | (Target::Url(_), TransportChoice::Stdio) => Err(Failure::usage(format!(
            "--transport {:?} does not fit {}",
            global.transport,
            target.describe()
        ))),
        (Target::Command(argv), _) => {
            stdio_server(global, StdioConfig::new(&argv[0]).args(&argv[1..]))
        }
        (Target::Url(url), _) => remote_server(global, target, url, None),
        (Target::Unix(_), _) => Err(Failure::usage(format!(
            "{} is reached by connecting to it, not as a server to start",
            target.describe()
        ))),
        (Target::Entry(entry), _) => match &entry.transport {
            ResolvedTransport::Stdio(stdio) => {
                let mut config = StdioConfig::new(&stdio.command).args(&stdio.args);
                for (k, v) in &stdio.env {
                    config = match v {
                        Some(v) => config.env(k, v),
                        None => config.env_remove(k),
                    };
                }
                if let Some(cwd) = &stdio.cwd {
                    config = config.cwd(cwd);
                }
                stdio_server(global, config)
            }
            ResolvedTransport::Http { remote, mode } => {
                remote_server(global, target, &remote.url, Some(*mode))
            }
            ResolvedTransport::WebSocket(remote) => {
                remote_server(global, target, &remote.url, None)
            }
            _ => Err(Failure::usage("this server's transport is not supported")),
        },
    }
}

/// The client configuration: timeouts and our name.
/// The `--root` directories as `file://` roots (checked to exist now, so
/// a typo is a usage error rather than a root the server cannot open).
fn roots(global: &Global) -> Result<Vec<Root>, Failure> {
    global
        .roots
        .iter()
        .map(|dir| {
            let path = std::fs::canonicalize(dir).map_err(|e| {
                Failure::caused(Exit::Usage, format!("--root {}", dir.display()), e)
            })?;
            let uri = url::Url::from_directory_path(&path).map_err(|()| {
                Failure::usage(format!("--root {}: not a directory", dir.display()))
            })?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            Ok(Root::new(uri.as_str().trim_end_matches('/'), name))
        })
        .collect()
}

pub(crate) fn client_config(global: &Global) -> Result<ClientConfig, Failure> {
    let mut config = ClientConfig::new();
    let sampler = match global.sampling_command.as_deref() {
        Some(line) => Some(
            shlex::split(line)
                .filter(|words| !words.is_empty())
                .ok_or_else(|| {
                    Failure::usage(format!("--sampling-command {line:?} is not a command line"))
                })?,
        ),
        None => None,
    };
    let notes = global.format() == crate::args::Format::Text;
    config = asked::install(
        config,
        sampler,
        seconds(global.timeout, "--timeout")?,
        notes,
    );
    let roots = roots(global)?;
    if !roots.is_empty() {
        config = config.roots(move |_cx| {
            let roots = roots.clone();
            async move { Ok(ListRootsResult::new(roots)) }
        });
    }
    Ok(config
        .request_timeout(seconds(global.timeout, "--timeout")?)
        .init_timeout(seconds(global.connect_timeout, "--connect-timeout")?)
        // Servers of the stateless era send log messages only to requests
        // that ask for a level; those of the initialize era send theirs
        // unasked. Info and above, on stderr, in both.
        .log_level(LoggingLevel::Info))
}

/// Connects to `target` and hand-shakes, logging every message with `-v`.
pub(crate) async fn connect(global: &Global, target: &Target) -> Result<Client, Failure> {
    let mut config = client_config(global)?;
    if global.verbose {
        config = config.tap(Arc::new(wire_log::WireLog));
    }
    let connecting = format!("cannot connect to {}", target.describe());
    let factory = match target {
        Target::Unix(path) => unix_factory(path.clone())?,
        _ => server(global, target)?
            .factory()
            .map_err(|e| Failure::client(&connecting, e))?,
    };
    let limit = seconds(global.connect_timeout, "--connect-timeout")?;
    match tokio::time::timeout(limit, Client::connect_with(factory, config)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(auth_failure(
            global,
            target,
            Failure::client(&connecting, e),
        )),
        Err(_) => Err(Failure::new(
            Exit::Unreachable,
            format!("{connecting}: no answer within {limit:?}"),
        )),
    }
}

/// Connections to a `mcpwire serve --socket PATH`: newline-framed JSON-RPC
/// on the socket, as over stdio.
#[cfg(unix)]
fn unix_factory(path: PathBuf) -> Result<mcpwire::client::TransportFactory, Failure> {
    use mcpwire::transport::{IoConfig, IoTransport, Transport, TransportInfo};
    Ok(Box::new(move || {
        let path = path.clone();
        Box::pin(async move {
            let stream = tokio::net::UnixStream::connect(&path)
                .await
                .map_err(mcpwire::Error::connect)?;
            let info = TransportInfo::new("unix", format!("unix:{}", path.display()));
            let transport = IoTransport::from_stream(stream, IoConfig::new()).with_info(info);
            Ok(Box::new(transport) as Box<dyn Transport>)
        })
    }))
}

#[cfg(not(unix))]
fn unix_factory(path: PathBuf) -> Result<mcpwire::client::TransportFactory, Failure> {
    Err(Failure::usage(format!(
        "cannot reach unix:{}: Unix sockets are for Unix",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::Detail;

    #[cfg(windows)]
    #[test]
    fn tokens_live_under_local_app_data_on_windows() {
        let local = std::env::var_os("LOCALAPPDATA").expect("Windows sets LOCALAPPDATA");
        assert_eq!(user_state_dir(), Some(PathBuf::from(local)));
    }

    #[test]
    fn headers_parse_and_stay_sensitive() {
        let (name, value) = parse_header("Authorization: Bearer abc").expect("parses");
        assert_eq!(name.as_str(), "authorization");
        assert!(value.is_sensitive());
        let e = parse_header("no colon").unwrap_err();
        assert_eq!(e.exit(), Exit::Usage);
        let e = parse_header("X-Key: bad\nvalue").unwrap_err();
        assert!(
            !e.text(Detail::Full).contains("bad"),
            "{}",
            e.text(Detail::Full)
        );
    }

    #[test]
    fn env_pairs_need_a_name() {
        assert_eq!(parse_env("A=b=c").expect("parses"), ("A", "b=c"));
        assert!(parse_env("=x").is_err());
        assert!(parse_env("novalue").is_err());
    }
}
