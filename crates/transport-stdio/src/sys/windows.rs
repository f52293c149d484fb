//! Windows: the server runs in a Job Object with kill-on-close, so the
//! processes it starts (`npx.cmd` -> `node` -> the server) end with it.

use std::io;
use std::os::windows::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use process_wrap::tokio::{ChildWrapper, CommandWrap, CreationFlags, JobObject, KillOnDrop};
use tokio::process::Command;
use tokio::sync::Notify;
use windows::Win32::System::Threading::CREATE_NO_WINDOW;

use crate::spawned::{Exit, Spawned};

/// The exit code a terminated job gives its processes.
const TERMINATED: u32 = 1;

/// The server's Job Object, as the transport reaches it.
///
/// The job itself is owned by the exit future, with the child: a kill is a
/// request that future acts on (it terminates the job and reports the
/// leader's real status). Dropping the future closes the job, and
/// kill-on-close ends every process still in it, synchronously and without
/// a runtime, which is what dropping the transport relies on.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    kill: Arc<Notify>,
    /// Set once the job is closed: nothing of the tree is left.
    gone: Arc<AtomicBool>,
}

impl Group {
    /// Windows has no polite stop signal for a console process without a
    /// console: the caller goes straight on to [`kill`](Self::kill).
    pub(crate) fn terminate(&self) -> bool {
        false
    }

    /// Asks for the job's termination (every process in it). False if the
    /// job is already closed.
    pub(crate) fn kill(&self) -> bool {
        if self.is_gone() {
            return false;
        }
        // `notify_one` keeps a permit when nobody waits yet, so a kill asked
        // before the exit future is next polled is not lost.
        self.kill.notify_one();
        true
    }

    /// True when the job is closed. The job is closed as soon as the leader
    /// has exited, which ends the rest of the tree.
    pub(crate) fn is_empty(&self) -> bool {
        self.is_gone()
    }

    /// Records that nothing of the tree is left.
    pub(crate) fn mark_gone(&self) {
        self.gone.store(true, Ordering::Release);
    }

    /// True once the job is known to be closed.
    pub(crate) fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }
}

/// Spawns `cmd` without a console window, in a new Job Object that ends
/// every process in it when closed.
///
/// The child starts suspended and is resumed once it is in the job
/// (process-wrap does this), so not even its first grandchild can escape.
/// A `.cmd` or `.bat` program runs through `cmd.exe`: Rust's standard
/// library quotes the arguments for it, and refuses an argument it cannot
/// pass safely (CVE-2024-24576).
pub(crate) fn spawn(cmd: Command) -> io::Result<Spawned<Group>> {
    let mut wrap = CommandWrap::from(cmd);
    wrap.wrap(CreationFlags(CREATE_NO_WINDOW))
        .wrap(JobObject)
        .wrap(KillOnDrop);
    let mut child = wrap.spawn()?;
    let pid = child.id().unwrap_or(0);
    let group = Group {
        kill: Arc::new(Notify::new()),
        gone: Arc::new(AtomicBool::new(false)),
    };
    Ok(Spawned {
        pid,
        stdin: child.stdin().take(),
        stdout: child.stdout().take(),
        stderr: child.stderr().take(),
        exit: exit(child, group.clone()),
        group,
    })
}

/// The leader's exit status once it exits, or once the job is terminated
/// on request. The job closes when this future completes or is dropped.
fn exit(mut child: Box<dyn ChildWrapper>, group: Group) -> Exit {
    Box::pin(async move {
        let first = {
            let wait = child.wait();
            tokio::select! {
                status = wait => Some(status),
                () = group.kill.notified() => None,
            }
        };
        let status = match first {
            Some(status) => status,
            None => {
                // A failed termination leaves the job to kill-on-close below.
                let _ = child.start_kill();
                child.wait().await
            }
        };
        drop(child);
        group.mark_gone();
        status.unwrap_or_else(|_| ExitStatus::from_raw(TERMINATED))
    })
}

/// Windows processes end with an exit code, never a signal.
pub(crate) fn signal_of(_status: ExitStatus) -> Option<i32> {
    None
}
