//! The server process: waiting for it, and shutting its process group down.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::process::ExitStatus;
use std::task::{Context, Poll};
use std::time::Duration;

use mcpwire_transport::ExitInfo;

use crate::spawned::Exit;
use crate::sys::{Group, signal_of};

/// How often the group is checked for survivors after `SIGTERM`, once the
/// leader itself is gone (its other members are not our children, so there
/// is nothing to wait on but the group's existence).
const GROUP_POLL: Duration = Duration::from_millis(20);

/// The shutdown timeouts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) stdin_close: Duration,
    pub(crate) sigterm: Duration,
}

/// A step of the shutdown sequence, polled by the transport's owner.
type Step<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The server process, driven from the transport's own polls (no task of
/// its own): notices the leader's exit as soon as it happens (the owner's
/// waker is registered with it) and, once asked, runs the shutdown
/// sequence and makes sure no process of the group survives.
///
/// The sequence, once [`shut_down`](Self::shut_down) is called (the
/// transport has closed stdin by then): wait `stdin_close` for the leader to
/// exit; `SIGTERM` the group; wait `sigterm`; `SIGKILL` the group; reap the
/// leader. Then, leader gone, any other member (a grandchild a wrapper like
/// `sh -c` or `npx` started) gets `SIGTERM`, `sigterm` to go, then
/// `SIGKILL`.
///
/// Nothing runs while nobody polls: a transport dropped without closing
/// kills the group at once instead (`Drop`), and its leader is reaped by
/// tokio's orphan queue.
pub(crate) enum Process {
    /// The leader runs; the future completes when it exits.
    Running(Exit),
    /// The leader is gone; its group is cleared when shutdown is asked.
    Exited,
    /// Shutting down: stopping the leader.
    Stopping(Step<ExitStatus>),
    /// Shutting down: the leader is gone, clearing the rest of the group.
    Clearing(Step<()>),
    /// No process of the group is left.
    Done,
}

/// What [`Process::poll`] learned.
pub(crate) struct Polled {
    /// The leader's exit status, the first time it is known.
    pub(crate) exited: Option<ExitStatus>,
    /// The shutdown sequence has completed.
    pub(crate) done: bool,
}

impl Process {
    /// Starts the shutdown sequence (idempotent); it runs as the process is
    /// polled.
    pub(crate) fn shut_down(&mut self, group: &Group, timeouts: Timeouts) {
        match std::mem::replace(self, Process::Done) {
            Process::Running(exit) => {
                *self = Process::Stopping(Box::pin(stop_leader(exit, group.clone(), timeouts)));
            }
            Process::Exited => {
                *self = Process::Clearing(Box::pin(clear_group(group.clone(), timeouts.sigterm)));
            }
            other => *self = other,
        }
    }

    /// Drives the process as far as it goes without waiting.
    pub(crate) fn poll(
        &mut self,
        cx: &mut Context<'_>,
        group: &Group,
        timeouts: Timeouts,
    ) -> Polled {
        let mut exited = None;
        loop {
            match self {
                Process::Running(exit) => match exit.as_mut().poll(cx) {
                    Poll::Ready(status) => {
                        exited = Some(status);
                        *self = Process::Exited;
                    }
                    Poll::Pending => break,
                },
                Process::Exited => break,
                Process::Stopping(step) => match step.as_mut().poll(cx) {
                    Poll::Ready(status) => {
                        exited = Some(status);
                        *self = Process::Clearing(Box::pin(clear_group(
                            group.clone(),
                            timeouts.sigterm,
                        )));
                    }
                    Poll::Pending => break,
                },
                Process::Clearing(step) => match step.as_mut().poll(cx) {
                    Poll::Ready(()) => *self = Process::Done,
                    Poll::Pending => break,
                },
                Process::Done => break,
            }
        }
        Polled {
            exited,
            done: matches!(self, Process::Done),
        }
    }
}

async fn stop_leader(mut exit: Exit, group: Group, timeouts: Timeouts) -> ExitStatus {
    if let Ok(status) = tokio::time::timeout(timeouts.stdin_close, &mut exit).await {
        return status;
    }
    // Windows has no polite signal: there the job is terminated at once.
    if group.terminate()
        && let Ok(status) = tokio::time::timeout(timeouts.sigterm, &mut exit).await
    {
        return status;
    }
    group.kill();
    exit.await
}

/// Ends every remaining member of the group, politely then not.
pub(crate) async fn clear_group(group: Group, sigterm: Duration) {
    if group.terminate() {
        let deadline = tokio::time::Instant::now() + sigterm;
        while !group.is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(GROUP_POLL).await;
        }
        group.kill();
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
        ExitInfo::new(status.code(), signal_of(status)).with_command(command.display().to_string());
    info.stderr_tail = stderr_tail;
    info
}
