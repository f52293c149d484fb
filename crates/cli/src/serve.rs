//! `serve`: the fleet of the `--config` files offered as one MCP server on
//! this process's stdin and stdout, so one entry in a host's configuration
//! gives it every server (their tools named `{server}__{tool}`, each
//! entry's filters applied by the manager), or with `--http` as Streamable
//! HTTP on 127.0.0.1.
//!
//! Over stdio, stdout carries the protocol and nothing else: every word
//! for people goes to stderr.

use std::io::Write;
use std::path::PathBuf;

use mcpwire::config::{Duplicates, LoadOptions, ProcessEnvironment};
use mcpwire::manager::{ConfigFiles, Manager, ServerSkip, Transports, WatchEvent, WatchOptions};
use mcpwire::transport::{IoConfig, IoTransport};
use mcpwire_serve::{HttpOptions, ServeOptions, Server, ServerRequests};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::args::Global;
use crate::commands::Shown;
use crate::failure::{Exit, Failure};
use crate::pins::FleetPins;
use crate::target;

/// Where to serve.
pub(crate) enum Mode {
    /// One client on stdin and stdout.
    Stdio,
    /// Streamable HTTP on 127.0.0.1: the port, the token, the most
    /// sessions open at once.
    Http(Option<u16>, Option<String>, Option<u32>),
    /// Each connection of a Unix socket at this path.
    Unix(PathBuf),
}

/// Builds the fleet, starts it, and serves one client on stdio until it
/// closes its side, or HTTP or socket clients until Ctrl-C.
pub(crate) async fn run(global: &Global, mode: Mode, watch: bool) -> Result<Shown, Failure> {
    // The socket first: a path already served fails before any server of
    // the fleet is started.
    #[cfg(unix)]
    let socket = match &mode {
        Mode::Unix(path) => Some((bind_unix(path).await?, Unlink(path.clone()))),
        _ => None,
    };
    #[cfg(not(unix))]
    if let Mode::Unix(path) = &mode {
        return Err(Failure::usage(format!(
            "cannot serve on {}: Unix sockets are for Unix",
            path.display()
        )));
    }
    let config = target::load_configs(global)?;
    if config.servers.is_empty() {
        return Err(Failure::usage(
            "serve needs servers: give --config FILE (a Claude Desktop, Cursor, VS Code... file)",
        ));
    }
    let transports = Transports::new()
        .map_err(|e| Failure::caused(Exit::Usage, "cannot prepare the transports", e))?;
    let cannot_build = |e| Failure::caused(Exit::Usage, "cannot build the fleet", e);
    // The servers' sampling, elicitation and roots requests go to the
    // client whose call caused them.
    let requests = ServerRequests::new();
    let builder = Manager::builder()
        .config(
            &config,
            &mcpwire::config_resolver(&ProcessEnvironment),
            &transports,
        )
        .map_err(cannot_build)?;
    let (builder, pins) = FleetPins::open(global, requests.install(builder))?;
    let manager = builder.build().map_err(cannot_build)?;
    // Taken before the fleet starts: the first listings' findings too.
    let pins = pins.map(|pins| tokio::spawn(pins.keep(manager.clone(), manager.events())));
    let watch = watch.then(|| watch_files(global, &manager, &transports));
    let report = manager
        .connect_all()
        .await
        .map_err(|e| Failure::caused(Exit::Unreachable, "the fleet did not start", e))?;
    {
        let mut err = std::io::stderr().lock();
        for (server, why) in &report.failed {
            let _ = writeln!(err, "mcpwire serve: server {server:?} did not start: {why}");
        }
        for (server, why) in manager.skipped_servers() {
            let why = match why {
                ServerSkip::Disabled => "disabled in its configuration".to_owned(),
                ServerSkip::InvalidName(e) => e.to_string(),
                ServerSkip::Unusable(e) => e.to_string(),
                _ => "not usable".to_owned(),
            };
            let _ = writeln!(err, "mcpwire serve: server {server:?} left out: {why}");
        }
        let tools = manager.tools().map(|t| t.len()).unwrap_or(0);
        let _ = writeln!(
            err,
            "mcpwire serve: {} of {} servers up, {tools} tools; serving on {}",
            report.connected.len(),
            manager.servers().len(),
            match &mode {
                Mode::Stdio => "stdio".to_owned(),
                Mode::Http(..) => "HTTP".to_owned(),
                Mode::Unix(path) => format!("unix:{}", path.display()),
            },
        );
    }
    let server = Server::with_options(
        manager.clone(),
        ServeOptions::new().server_requests(requests),
    );
    let served = match mode {
        Mode::Http(port, token, max_sessions) => {
            serve_http(&server, port, token, max_sessions).await
        }
        #[cfg(unix)]
        Mode::Unix(_) => match socket {
            Some((listener, _unlink)) => serve_unix(&server, listener).await,
            None => Ok(()),
        },
        #[cfg(not(unix))]
        Mode::Unix(_) => Ok(()),
        Mode::Stdio => {
            let stdio = IoTransport::new(tokio::io::stdin(), tokio::io::stdout(), IoConfig::new());
            tokio::select! {
                served = server.serve(stdio) => {
                    served.map_err(|e| Failure::caused(Exit::Unreachable, "serving stopped", e))
                }
                _ = tokio::signal::ctrl_c() => Ok(()),
            }
        }
    };
    manager.close().await;
    if let Some(watch) = watch {
        // It ends with the fleet.
        let _ = watch.await;
    }
    if let Some(pins) = pins {
        // Its last save, now that the fleet is closed.
        let _ = pins.await;
    }
    served?;
    Ok(Shown {
        json: Value::Null,
        items: None,
        text: String::new(),
        failure: None,
    })
}

/// `serve --watch`: the `--config` files watched, read as at the start
/// (later files over earlier ones), the fleet reloaded when they change;
/// each reload, or why there was none, said on stderr. The task ends when
/// the fleet is closed.
fn watch_files(global: &Global, manager: &Manager, transports: &Transports) -> JoinHandle<()> {
    let files = ConfigFiles::with_transports(global.config.clone(), transports.clone())
        .load_options(LoadOptions::new().duplicates(Duplicates::LaterWins));
    let mut watch = files.watch(manager, WatchOptions::new());
    tokio::spawn(async move {
        while let Some(event) = watch.next_event().await {
            let said = match event {
                WatchEvent::Reloaded(report) if report.is_unchanged() => continue,
                WatchEvent::Reloaded(report) => format!(
                    "reloaded the configuration: added {:?}, removed {:?}, restarted {:?}{}",
                    report.added,
                    report.removed,
                    report.replaced,
                    match report.connect.failed.len() {
                        0 => String::new(),
                        n => format!(" ({n} did not start)"),
                    }
                ),
                WatchEvent::Failed(e) => format!(
                    "the configuration changed but was not reloaded, the fleet is as it was: {}",
                    chain(&e)
                ),
                _ => continue,
            };
            eprintln!("mcpwire serve: {said}");
        }
    })
}

/// An error and its causes, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Serves Streamable HTTP on 127.0.0.1 until Ctrl-C. The URL is the first
/// line on stdout; a generated token the second, and nowhere else.
///
/// Why stdout: in this mode it carries nothing else, and it goes to the
/// person or the program that started us (and so must know the token),
/// whereas stderr is where logs go and is often kept in files. The token
/// is never written to stderr, a log or `-v`.
async fn serve_http(
    server: &Server,
    port: Option<u16>,
    token: Option<String>,
    max_sessions: Option<u32>,
) -> Result<(), Failure> {
    let given = token.or_else(|| std::env::var("MCPWIRE_SERVE_TOKEN").ok());
    let generated = given.is_none();
    let token = given.unwrap_or_else(mcpwire_serve::generate_token);
    if token.is_empty() {
        return Err(Failure::usage("the bearer token is empty"));
    }
    let listener =
        tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port.unwrap_or(0)))
            .await
            .map_err(|e| Failure::caused(Exit::Usage, "cannot listen on 127.0.0.1", e))?;
    let address = listener
        .local_addr()
        .map_err(|e| Failure::caused(Exit::Usage, "cannot listen on 127.0.0.1", e))?;
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "http://{address}/mcp");
        if generated {
            let _ = writeln!(out, "Authorization: Bearer {token}");
        }
        let _ = out.flush();
    }
    let mut options = HttpOptions::new(token);
    if let Some(n) = max_sessions {
        options = options.max_sessions(n as usize);
    }
    tokio::select! {
        served = server.serve_http(listener, options) => {
            served.map_err(|e| Failure::caused(Exit::Unreachable, "serving stopped", e))
        }
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}

/// How many clients a socket serves at once.
#[cfg(unix)]
const SOCKET_CLIENTS: usize = 64;

/// A Unix socket bound at `path`, the owner's only. A socket file left by
/// a `serve` that is gone is replaced; one that still answers is not.
#[cfg(unix)]
async fn bind_unix(path: &std::path::Path) -> Result<tokio::net::UnixListener, Failure> {
    use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
    let cannot = |e| {
        Failure::caused(
            Exit::Usage,
            format!("cannot listen on {}", path.display()),
            e,
        )
    };
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(Failure::usage(format!(
                "{} exists and is not a socket",
                path.display()
            )));
        }
        if tokio::net::UnixStream::connect(path).await.is_ok() {
            return Err(Failure::usage(format!(
                "a server already listens on {}",
                path.display()
            )));
        }
        std::fs::remove_file(path).map_err(cannot)?;
    }
    let listener = tokio::net::UnixListener::bind(path).map_err(cannot)?;
    // Whoever can connect can call every tool of the fleet: the owner only.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(cannot)?;
    Ok(listener)
}

/// Removes the socket file when dropped: when serving ends, or when the
/// fleet fails to start after the socket was bound.
#[cfg(unix)]
struct Unlink(PathBuf);

#[cfg(unix)]
impl Drop for Unlink {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Serves each connection of `listener` until Ctrl-C.
#[cfg(unix)]
async fn serve_unix(server: &Server, listener: tokio::net::UnixListener) -> Result<(), Failure> {
    tokio::select! {
        served = server.serve_unix(listener, SOCKET_CLIENTS) => {
            served.map_err(|e| Failure::caused(Exit::Unreachable, "serving stopped", e))
        }
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}
