//! What differs between platforms: how the server's process tree is
//! started, held together and ended.
//!
//! - Unix: the server leads a process group of its own; `SIGTERM` asks the
//!   group to stop, `SIGKILL` ends it.
//! - Windows: the server and everything it starts belong to a Job Object
//!   that ends them all when it is closed or terminated; there is no polite
//!   signal, so stopping is closing stdin, then the grace period, then the
//!   job's termination.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::{Group, signal_of, spawn};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::{Group, signal_of, spawn};
