//! The server process: waiting for it, and shutting its process group down.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcpwire_transport::ExitInfo;
use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
use tokio::process::Child;
use tokio::sync::oneshot;

/// How often the group is checked for survivors after `SIGTERM`, once the
/// leader itself is gone (its other members are not our children, so there
/// is nothing to wait on but the group's existence).
const GROUP_POLL: Duration = Duration::from_millis(20);

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
    pub(crate) fn new(pid: u32) -> Self {
        Self {
            pgid: i32::try_from(pid).ok().and_then(Pid::from_raw),
            gone: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Sends `signal` to every process of the group. Synchronous and
    /// runtime-free, so `Drop` can use it. False if the group is empty.
    pub(crate) fn signal(&self, signal: Signal) -> bool {
        match self.pgid {
            Some(pgid) if !self.gone.load(Ordering::Acquire) => {
                kill_process_group(pgid, signal).is_ok()
            }
            _ => false,
        }
    }

    fn is_empty(&self) -> bool {
        match self.pgid {
            Some(pgid) if !self.gone.load(Ordering::Acquire) => {
                test_kill_process_group(pgid).is_err()
            }
            _ => true,
        }
    }

    fn mark_gone(&self) {
        self.gone.store(true, Ordering::Release);
    }

    /// True once the supervisor has seen the group empty.
    pub(crate) fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }
}

/// The shutdown timeouts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) stdin_close: Duration,
    pub(crate) sigterm: Duration,
}

/// Owns the child: reports its exit as soon as it happens, and on request
/// (or when the transport is dropped) runs the shutdown sequence and makes
/// sure no process of its group survives.
///
/// The sequence, once `shutdown` fires (the transport has closed stdin by
/// then): wait `stdin_close` for the leader to exit; `SIGTERM` the group;
/// wait `sigterm`; `SIGKILL` the group; reap the leader. Then, leader gone,
/// any other member (a grandchild a wrapper like `sh -c` or `npx` started)
/// gets `SIGTERM`, `sigterm` to go, then `SIGKILL`.
pub(crate) async fn supervise(
    mut child: Child,
    group: Group,
    timeouts: Timeouts,
    mut shutdown: oneshot::Receiver<()>,
    exit_tx: oneshot::Sender<ExitStatus>,
    done_tx: oneshot::Sender<()>,
) {
    let mut shutdown_seen = false;
    let status = tokio::select! {
        status = child.wait() => status,
        _ = &mut shutdown => {
            shutdown_seen = true;
            stop_leader(&mut child, &group, timeouts).await
        }
    };
    // A failed wait leaves nothing to report but "it is gone".
    let status = status.unwrap_or_else(|_| ExitStatus::from_raw(0));
    let _ = exit_tx.send(status);
    if !shutdown_seen {
        // The leader exited on its own; its group is cleaned up when the
        // transport closes (or is dropped, which also resolves this).
        let _ = (&mut shutdown).await;
    }
    clear_group(&group, timeouts.sigterm).await;
    let _ = done_tx.send(());
}

async fn stop_leader(
    child: &mut Child,
    group: &Group,
    timeouts: Timeouts,
) -> std::io::Result<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(timeouts.stdin_close, child.wait()).await {
        return status;
    }
    group.signal(Signal::TERM);
    if let Ok(status) = tokio::time::timeout(timeouts.sigterm, child.wait()).await {
        return status;
    }
    group.signal(Signal::KILL);
    child.wait().await
}

/// Ends every remaining member of the group, politely then not.
async fn clear_group(group: &Group, sigterm: Duration) {
    if group.signal(Signal::TERM) {
        let deadline = tokio::time::Instant::now() + sigterm;
        while !group.is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(GROUP_POLL).await;
        }
        group.signal(Signal::KILL);
        // SIGKILL cannot be ignored, but the group lingers until the kernel
        // has torn its members down; wait a bounded moment for that.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
        while !group.is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(GROUP_POLL).await;
        }
    }
    group.mark_gone();
}

/// The exit status as the contract's [`ExitInfo`], with the stderr tail.
pub(crate) fn exit_info(status: ExitStatus, stderr_tail: Vec<String>, command: &Path) -> ExitInfo {
    let mut info =
        ExitInfo::new(status.code(), status.signal()).with_command(command.display().to_string());
    info.stderr_tail = stderr_tail;
    info
}
