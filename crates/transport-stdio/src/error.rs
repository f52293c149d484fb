//! [`SpawnError`]: why a server could not be started.

use std::io;
use std::path::PathBuf;

use mcpwire_transport::ExitInfo;

/// Why [`StdioTransport::spawn`](crate::StdioTransport::spawn) failed. Each
/// variant names the command as it was resolved, so the message says which
/// file was (or was not) run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The command could not be resolved to an executable file.
    #[error("command not found: {reason}")]
    NotFound {
        /// The command as configured.
        command: String,
        /// What was tried: the path, or the `PATH` searched.
        reason: String,
    },
    /// The operating system refused to start the process (permissions, a
    /// bad working directory, too many processes...).
    #[error("could not start `{}`", .command.display())]
    Spawn {
        /// The resolved program.
        command: PathBuf,
        /// The error from the operating system.
        #[source]
        source: io::Error,
    },
    /// The process exited within the startup grace period
    /// ([`StdioConfig::startup_grace`](crate::StdioConfig::startup_grace)).
    #[error("{exit}")]
    ExitedAtStart {
        /// The resolved program.
        command: PathBuf,
        /// How it exited, with the last lines of its stderr.
        exit: ExitInfo,
    },
}
