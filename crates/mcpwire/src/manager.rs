//! Many servers at once: everything of `mcpwire-manager`, plus
//! [`Transports`], which turns the entries of configuration files into
//! [`Server`](crate::Server)s (stdio commands, HTTP URLs sharing one connection pool) for
//! the manager to connect.
//!
//! ```no_run
//! use mcpwire::config::ProcessEnvironment;
//! use mcpwire::manager::{Manager, Transports};
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let config = mcpwire::config::load_file("claude_desktop_config.json")?;
//! let manager = Manager::builder()
//!     .config(&config, &mcpwire::config_resolver(&ProcessEnvironment), &Transports::new()?)?
//!     .build()?;
//! let report = manager.connect_all().await?;
//! println!("{} connected, {} failed", report.connected.len(), report.failed.len());
//! for tool in manager.tools()? {
//!     println!("{}", tool.name);
//! }
//! let answer = manager.call_tool("time__get_current_time", &json!({"timezone": "UTC"})).await?;
//! println!("{}", answer.text());
//! manager.close().await;
//! # Ok(()) }
//! ```
//!
//! [`ConfigFiles`] keeps the paths a fleet was built from, to reload it from
//! them on request: only the servers whose entries changed are touched.
//!
//! ```no_run
//! use mcpwire::manager::ConfigFiles;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let files = ConfigFiles::new(["claude_desktop_config.json"])?;
//! let manager = files.builder()?.build()?;
//! manager.connect_all().await?;
//! // ... the user edits the file, then asks for a reload:
//! let report = files.reload(&manager).await?;
//! println!("added {:?}, removed {:?}, replaced {:?}", report.added, report.removed, report.replaced);
//! # Ok(()) }
//! ```
//!
//! Or [`ConfigFiles::watch`] reloads whenever a file changes:
//!
//! ```no_run
//! use mcpwire::manager::{ConfigFiles, WatchEvent, WatchOptions};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let files = ConfigFiles::new(["claude_desktop_config.json"])?;
//! let manager = files.builder()?.build()?;
//! manager.connect_all().await?;
//! let mut watch = files.watch(&manager, WatchOptions::new());
//! while let Some(event) = watch.next_event().await {
//!     match event {
//!         WatchEvent::Reloaded(report) => println!("reloaded: {:?} added", report.added),
//!         WatchEvent::Failed(e) => eprintln!("not reloaded: {e}"),
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```

use std::fmt;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mcpwire_client::Error as ClientError;
use mcpwire_config::{
    Config, Environment, LoadError, LoadOptions, ProcessEnvironment, ResolvedServer,
};
pub use mcpwire_manager::*;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::from_config::config_resolver;
pub use crate::from_config::{Transports, UnusableEntry};

impl Connectors for Transports {
    fn connector(&self, server: &ResolvedServer) -> Result<Connector, ClientError> {
        let server = self.server(server)?;
        Ok(Arc::new(move || server.clone().factory()))
    }
}

/// The configuration files a fleet is built from, kept to build it again
/// from them: [`builder`](Self::builder) makes the fleet,
/// [`reload`](Self::reload) reads the files again and applies only what
/// changed ([`Manager::reload_config`]).
///
/// The files are read in order and merged
/// ([`LoadOptions::load_files`]); variables come from this process's
/// environment unless [`environment`](Self::environment) says otherwise;
/// entries become servers through [`Transports`] (every HTTP server on one
/// connection pool, kept across reloads).
///
/// Nothing watches the files unless [`watch`](Self::watch) is called: a
/// reload happens when asked for.
#[derive(Clone)]
pub struct ConfigFiles {
    paths: Vec<PathBuf>,
    load: LoadOptions,
    env: Arc<dyn Environment + Send + Sync>,
    transports: Transports,
}

impl fmt::Debug for ConfigFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The environment is not shown: its values may be secrets.
        f.debug_struct("ConfigFiles")
            .field("paths", &self.paths)
            .field("load", &self.load)
            .finish_non_exhaustive()
    }
}

impl ConfigFiles {
    /// The files at `paths`, read in that order with the default
    /// [`LoadOptions`], variables from this process's environment, entries
    /// made into servers by [`Transports::new`] (which fails only if its
    /// HTTP client cannot be built).
    pub fn new<I, P>(paths: I) -> Result<Self, ClientError>
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        Ok(Self::with_transports(paths, Transports::new()?))
    }

    /// As [`new`](Self::new), with `transports` making the entries into
    /// servers (such as the ones a fleet was built with, to share their
    /// HTTP connection pool).
    pub fn with_transports<I, P>(paths: I, transports: Transports) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        Self {
            paths: paths.into_iter().map(Into::into).collect(),
            load: LoadOptions::new(),
            env: Arc::new(ProcessEnvironment),
            transports,
        }
    }

    /// How the files are read (duplicates across files, unusable entries).
    pub fn load_options(mut self, options: LoadOptions) -> Self {
        self.load = options;
        self
    }

    /// Where `${VAR}` references in the entries are read from.
    pub fn environment(mut self, env: impl Environment + Send + Sync + 'static) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// What makes the entries into servers.
    pub fn transports(mut self, transports: Transports) -> Self {
        self.transports = transports;
        self
    }

    /// The files, in the order they are read.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Reads the files now (blocking: call it off the async runtime, as
    /// [`reload`](Self::reload) does).
    pub fn load(&self) -> Result<Config, LoadError> {
        self.load.load_files(&self.paths)
    }

    /// A manager builder with the files' servers
    /// ([`ManagerBuilder::config`]); set the rest on it, then build. Reads
    /// the files here, blocking: it is meant for start-up.
    pub fn builder(&self) -> Result<ManagerBuilder, ConfigFilesError> {
        let config = self.load().map_err(ConfigFilesError::Load)?;
        let resolver = config_resolver(&*self.env);
        Manager::builder()
            .config(&config, &resolver, &self.transports)
            .map_err(ConfigFilesError::Fleet)
    }

    /// Reads the files again (on a blocking thread) and makes `manager`'s
    /// fleet their servers, changing only what differs: see
    /// [`Manager::reload_config`]. A file that cannot be read or parsed
    /// changes nothing.
    pub async fn reload(&self, manager: &Manager) -> Result<FleetReport, ConfigFilesError> {
        let files = self.clone();
        let config = match tokio::task::spawn_blocking(move || files.load()).await {
            Ok(loaded) => loaded.map_err(ConfigFilesError::Load)?,
            Err(e) => match e.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                // Only a runtime shutting down cancels it.
                Err(_) => return Err(ConfigFilesError::Fleet(Error::Closed)),
            },
        };
        let reload = manager.reload_config(&config, &config_resolver(&*self.env), &self.transports);
        reload.await.map_err(ConfigFilesError::Fleet)
    }

    /// Watches the files and [reloads](Self::reload) `manager` from them
    /// when one changes, on a task of its own, until the returned
    /// [`ConfigWatch`] is dropped or the manager is closed (or dropped: the
    /// watch does not keep it alive). Call it within a Tokio runtime.
    ///
    /// It polls: every [`interval`](WatchOptions::interval) it reads each
    /// file's size, modification time and content (a hash of it) by path.
    /// Reading by path sees a file an editor replaced by renaming another
    /// over it, or deleted and wrote again, as well as one written in
    /// place; a few configuration files cost a few small reads a tick. A
    /// burst of writes is one reload: a change is acted on once the files
    /// have been still for [`quiet`](WatchOptions::quiet), or at the latest
    /// [`max_delay`](WatchOptions::max_delay) after it was first seen. A
    /// file that does not parse changes nothing: the fleet stays as it was
    /// and, once the next read finds the files as they were (not caught
    /// mid-write), the failure is a [`WatchEvent::Failed`] (and a log
    /// line); the next write is tried again. Changes made before this is
    /// called are not seen: it compares with the files as they are now.
    pub fn watch(&self, manager: &Manager, options: WatchOptions) -> ConfigWatch {
        let (events, receiver) = mpsc::channel(WATCH_EVENTS);
        let task = tokio::spawn(watch_files(
            self.clone(),
            manager.downgrade(),
            manager.closed(),
            options,
            events,
        ));
        ConfigWatch {
            events: receiver,
            task: task.abort_handle(),
        }
    }
}

/// How many watch events wait for a receiver before newer ones are dropped
/// (each is logged too).
const WATCH_EVENTS: usize = 16;

/// How [`ConfigFiles::watch`] watches. Every bound is clamped to a sane
/// range: the interval to 10 ms..60 s, the quiet time and the longest
/// delay to at most 10 min.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOptions {
    interval: Duration,
    quiet: Duration,
    max_delay: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl WatchOptions {
    /// Every 500 ms; a change acted on after 300 ms of quiet, at the latest
    /// 5 s after it was first seen.
    pub fn new() -> Self {
        Self {
            interval: Duration::from_millis(500),
            quiet: Duration::from_millis(300),
            max_delay: Duration::from_secs(5),
        }
    }

    /// How often the files are read.
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval.clamp(Duration::from_millis(10), Duration::from_secs(60));
        self
    }

    /// How long the files must stay as they are before a change is acted
    /// on (a burst of writes within it is one reload).
    pub fn quiet(mut self, quiet: Duration) -> Self {
        self.quiet = quiet.min(MAX_WAIT);
        self
    }

    /// The longest a change waits for quiet: files written without a pause
    /// are reloaded this long after the first change seen.
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay.min(MAX_WAIT);
        self
    }
}

const MAX_WAIT: Duration = Duration::from_secs(600);

/// A watch of configuration files ([`ConfigFiles::watch`]): stops when
/// dropped.
#[derive(Debug)]
pub struct ConfigWatch {
    events: mpsc::Receiver<WatchEvent>,
    task: tokio::task::AbortHandle,
}

impl ConfigWatch {
    /// The next thing the watch did; `None` once it stopped (the manager
    /// closed or dropped). Events not taken wait, at most 16; newer ones
    /// are then dropped (they are logged).
    pub async fn next_event(&mut self) -> Option<WatchEvent> {
        self.events.recv().await
    }
}

impl Drop for ConfigWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a [`ConfigWatch`] did after a change of the files.
#[derive(Debug)]
#[non_exhaustive]
pub enum WatchEvent {
    /// The fleet was reloaded from them.
    Reloaded(FleetReport),
    /// It could not be: a file does not parse, or the fleet it describes
    /// cannot be made. Nothing changed.
    Failed(ConfigFilesError),
}

/// What a file looked like at one read: size, modification time and a hash
/// of its content; `None` when it cannot be read (missing, mid-rename).
type Stamp = Option<(u64, Option<SystemTime>, u64)>;

/// The largest file whose content the watch hashes (loading refuses files
/// over 4 MiB by default).
const MAX_HASHED: u64 = 16 << 20;

/// Reads the stamps of `paths` (blocking).
fn stamps(paths: &[PathBuf]) -> Vec<Stamp> {
    paths
        .iter()
        .map(|path| {
            let meta = std::fs::metadata(path).ok()?;
            let mut hasher = DefaultHasher::new();
            // A file too large to be a configuration file (loading refuses
            // it) is not read every tick: its size and time stand for it.
            if meta.len() <= MAX_HASHED {
                std::fs::read(path).ok()?.hash(&mut hasher);
            }
            Some((meta.len(), meta.modified().ok(), hasher.finish()))
        })
        .collect()
}

/// The stamps of `files`, read on a blocking thread; `None` if the runtime
/// is shutting down.
async fn read_stamps(files: &ConfigFiles) -> Option<Vec<Stamp>> {
    let paths = files.paths.clone();
    tokio::task::spawn_blocking(move || stamps(&paths))
        .await
        .ok()
}

/// The watch's task: see [`ConfigFiles::watch`].
async fn watch_files(
    files: ConfigFiles,
    manager: WeakManager,
    closed: impl Future<Output = ()>,
    options: WatchOptions,
    events: mpsc::Sender<WatchEvent>,
) {
    let mut closed = std::pin::pin!(closed);
    let Some(mut last) = read_stamps(&files).await else {
        return;
    };
    // When the change waiting to be acted on was first and last seen.
    let mut pending: Option<(Instant, Instant)> = None;
    // A file that did not load, and the files as they were read before.
    let mut unloaded: Option<(ConfigFilesError, Vec<Stamp>)> = None;
    loop {
        tokio::select! {
            () = &mut closed => return,
            () = tokio::time::sleep(options.interval) => {}
        }
        let Some(now_stamps) = read_stamps(&files).await else {
            return;
        };
        // A failed load is reported once the files were read again as they
        // were: if they changed, it read one mid-write (an editor that
        // empties a file, then writes it), and the change is acted on again.
        if let Some((error, before)) = unloaded.take()
            && now_stamps == before
            && !report(&events, WatchEvent::Failed(error))
        {
            return;
        }
        let now = Instant::now();
        if now_stamps != last {
            last = now_stamps;
            pending = Some((pending.map_or(now, |(first, _)| first), now));
        }
        let Some((first, latest)) = pending else {
            continue;
        };
        if now - latest < options.quiet && now - first < options.max_delay {
            continue;
        }
        pending = None;
        let Some(manager) = manager.upgrade().filter(|m| !m.is_closed()) else {
            return;
        };
        let event = match files.reload(&manager).await {
            Ok(report) => {
                tracing::info!(
                    added = ?report.added,
                    removed = ?report.removed,
                    replaced = ?report.replaced,
                    "reloaded the fleet from its configuration files"
                );
                WatchEvent::Reloaded(report)
            }
            Err(e @ ConfigFilesError::Load(_)) => {
                tracing::debug!(error = %e, "a configuration file did not load: reading the files again before saying so");
                unloaded = Some((e, last.clone()));
                continue;
            }
            Err(e) => WatchEvent::Failed(e),
        };
        drop(manager);
        if !report(&events, event) {
            return;
        }
    }
}

/// Logs `event` and hands it to the watch's receiver; false once the
/// receiver is gone.
fn report(events: &mpsc::Sender<WatchEvent>, event: WatchEvent) -> bool {
    if let WatchEvent::Failed(e) = &event {
        tracing::warn!(error = %e, cause = ?std::error::Error::source(e).map(ToString::to_string), "the configuration files changed but were not reloaded");
    }
    !matches!(
        events.try_send(event),
        Err(mpsc::error::TrySendError::Closed(_))
    )
}

/// Why [`ConfigFiles`] could not build or reload a fleet.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigFilesError {
    /// A file could not be read or parsed (the cause names it).
    Load(LoadError),
    /// The fleet could not be built or changed as the files say (a
    /// required server that cannot be used, two servers of one name).
    Fleet(Error),
}

impl fmt::Display for ConfigFilesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigFilesError::Load(_) => f.write_str("the configuration files could not be read"),
            ConfigFilesError::Fleet(_) => {
                f.write_str("the fleet could not be made as the configuration files say")
            }
        }
    }
}

impl std::error::Error for ConfigFilesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigFilesError::Load(e) => Some(e),
            ConfigFilesError::Fleet(e) => Some(e),
        }
    }
}
