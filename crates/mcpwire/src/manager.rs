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

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use mcpwire_client::Error as ClientError;
use mcpwire_config::{
    Config, Environment, LoadError, LoadOptions, ProcessEnvironment, ResolvedServer,
};
pub use mcpwire_manager::*;

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
/// Nothing watches the files: a reload happens when asked for.
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
        Ok(Self {
            paths: paths.into_iter().map(Into::into).collect(),
            load: LoadOptions::new(),
            env: Arc::new(ProcessEnvironment),
            transports: Transports::new()?,
        })
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
