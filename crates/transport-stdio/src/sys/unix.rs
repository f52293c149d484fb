//! Unix: the server leads a process group of its own, and signals stop it.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
use tokio::process::{Child, Command};

use crate::spawned::{Exit, Spawned};

/// The process group the server leads (it was spawned with
/// `process_group(0)`, so the group id is its pid).
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pgid: Option<Pid>,
    /// Set once the group is known to be empty; after that its id may be
    /// reused by the system and must not be signalled again.
    gone: Arc<AtomicBool>,
}

impl Group {
    fn new(pid: u32) -> Self {
        Self {
            pgid: i32::try_from(pid).ok().and_then(Pid::from_raw),
            gone: Arc::new(AtomicBool::new(false)),
        }
    }

    fn signal(&self, signal: Signal) -> bool {
        match self.pgid {
            Some(pgid) if !self.is_gone() => kill_process_group(pgid, signal).is_ok(),
            _ => false,
        }
    }

    /// Asks every process of the group to stop (`SIGTERM`). False if the
    /// group is empty.
    pub(crate) fn terminate(&self) -> bool {
        self.signal(Signal::TERM)
    }

    /// Ends every process of the group (`SIGKILL`). Synchronous and
    /// runtime-free, so `Drop` can use it. False if the group is empty.
    pub(crate) fn kill(&self) -> bool {
        self.signal(Signal::KILL)
    }

    /// True when no process of the group is left.
    pub(crate) fn is_empty(&self) -> bool {
        match self.pgid {
            Some(pgid) if !self.is_gone() => test_kill_process_group(pgid).is_err(),
            _ => true,
        }
    }

    /// Records that the group is empty, so its id is never signalled again.
    pub(crate) fn mark_gone(&self) {
        self.gone.store(true, Ordering::Release);
    }

    /// True once the shutdown sequence has seen the group empty.
    pub(crate) fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }
}

/// Spawns `cmd` as the leader of a new process group.
pub(crate) fn spawn(mut cmd: Command) -> io::Result<Spawned<Group>> {
    cmd.process_group(0).kill_on_drop(false);
    let mut child = cmd.spawn()?;
    let pid = child.id().unwrap_or(0);
    Ok(Spawned {
        pid,
        group: Group::new(pid),
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        exit: exit(child),
    })
}

/// The child's exit status once it exits. A failed wait leaves nothing to
/// report but "it is gone".
fn exit(mut child: Child) -> Exit {
    Box::pin(async move {
        child
            .wait()
            .await
            .unwrap_or_else(|_| ExitStatus::from_raw(0))
    })
}

/// The signal that ended the process, if one did.
pub(crate) fn signal_of(status: ExitStatus) -> Option<i32> {
    status.signal()
}
