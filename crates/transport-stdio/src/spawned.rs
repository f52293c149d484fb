//! A started server, as each platform's code hands it over.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitStatus;

use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

/// The leader's exit, as a future that owns the child (boxed: it lives in
/// the transport, polled by its owner, instead of in a task of its own).
pub(crate) type Exit = Pin<Box<dyn Future<Output = ExitStatus> + Send>>;

/// A started server: its id, its process tree (`G`, the platform's
/// group), its pipes and its exit.
pub(crate) struct Spawned<G> {
    pub(crate) pid: u32,
    pub(crate) group: G,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
    pub(crate) exit: Exit,
}
