//! What differs between platforms: how the server's process tree is
//! started, held together and ended.
//!
//! - Unix: the server leads a process group of its own; `SIGTERM` asks the
//!   group to stop, `SIGKILL` ends it.
//! - Windows: the server and everything it starts belong to a Job Object
//!   that ends them all when it is closed or terminated; there is no polite
//!   signal, so stopping is closing stdin, then the grace period, then the
//!   job's termination.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitStatus;

use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::{Group, signal_of, spawn};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::{Group, signal_of, spawn};

/// The leader's exit, as a future that owns the child (boxed: it lives in
/// the transport, polled by its owner, instead of in a task of its own).
pub(crate) type Exit = Pin<Box<dyn Future<Output = ExitStatus> + Send>>;

/// A started server: its id, its process tree, its pipes and its exit.
pub(crate) struct Spawned {
    pub(crate) pid: u32,
    pub(crate) group: Group,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
    pub(crate) exit: Exit,
}
