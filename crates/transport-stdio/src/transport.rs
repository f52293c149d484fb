//! [`StdioTransport`]: a spawned server, reached through its stdin and stdout.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use mcpwire_transport::{
    Active, CloseReason, FrameSender, IoTransport, Transport, TransportEvent, TransportInfo,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Sleep;

use crate::env::{child_env, resolve_command};
use crate::process::{Process, Timeouts, clear_group, exit_info};
use crate::spawned::Spawned;
use crate::stderr::{CAPTURE_BACKLOG, Tail, drain};
use crate::sys::{self, Group};
use crate::{SpawnError, StderrMode, StdioConfig};

/// How long the stderr tail may take to settle after the process exited (its
/// last lines may still be in the pipe). A grandchild holding stderr open
/// makes us wait this long, no longer.
const STDERR_SETTLE: Duration = Duration::from_millis(250);
/// Slack on top of the shutdown timeouts before closing stops waiting for the
/// shutdown sequence and kills the group at once.
const CLOSE_SLACK: Duration = Duration::from_secs(2);

/// An MCP server running as a child process, reached through its stdin and
/// stdout: the [`Transport`] most local servers are used through.
///
/// Framing and flow control are those of [`IoTransport`] (inline reads in
/// [`poll_event`](Transport::poll_event), at most one frame plus one read
/// buffer held while the owner grants nothing, so a server that floods a
/// paused owner blocks on its full stdout pipe). On top of it this type runs
/// the process:
///
/// - **Spawning**: no shell; the command is resolved on `PATH` and errors
///   name the resolved file. The child inherits only
///   [`SAFE_ENV_VARS`](crate::SAFE_ENV_VARS) unless told otherwise, and runs
///   in its own process group, so wrappers (`npx`, `uvx`, `sh -c`) and their
///   children are shut down together.
/// - **stderr** is always drained by its own task ([`StderrMode`]), and the
///   last 50 lines ride along on startup errors and on `Closed(Exited)`.
/// - **Crash**: the exit is noticed when it happens, not at the next write.
///   Frames the server wrote before dying are still delivered (as grants
///   allow), then `Closed(Exited)` with the exit code or signal and the
///   stderr tail.
/// - **Closing** ([`poll_close`](Transport::poll_close)): queued frames are
///   flushed and stdin closed, then the server gets `stdin_close_timeout`
///   (2 s) to exit, then `SIGTERM` to the group, `sigterm_timeout` (2 s),
///   `SIGKILL` to the group, and the leader is reaped. Survivors of the group
///   (grandchildren) are then terminated the same way. When it completes, no
///   process of the group is left.
/// - **Dropping** without closing sends `SIGKILL` to the group at once,
///   synchronously; no runtime is needed for that.
///
/// On Windows the group is a Job Object with kill-on-close: closing skips
/// `SIGTERM` (stdin's close, `stdin_close_timeout`, then the job is
/// terminated, exit code 1), the rest of the tree ends as soon as the leader
/// has exited, and dropping closes the job, which ends the whole tree.
pub struct StdioTransport {
    io: IoTransport,
    pid: u32,
    command: PathBuf,
    group: Group,
    tail: Tail,
    stderr_rx: Option<mpsc::Receiver<String>>,
    stderr_task: Option<JoinHandle<()>>,
    /// The process, driven by our polls (no task of its own).
    process: Process,
    exit: Option<ExitStatus>,
    /// The inner transport's close reason, while we wait for the exit status
    /// and the stderr tail to complete it.
    ending: Option<CloseReason>,
    settle: Option<Pin<Box<Sleep>>>,
    closed_reported: bool,
    /// The last event was a stderr line: stdout goes first next time.
    stderr_delivered: bool,
    close: Close,
    timeouts: Timeouts,
}

enum Close {
    NotStarted,
    Io,
    Process(Pin<Box<Sleep>>),
    Done,
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport")
            .field("pid", &self.pid)
            .field("command", &self.command)
            .field("exit", &self.exit)
            .field("closed_reported", &self.closed_reported)
            .finish_non_exhaustive()
    }
}

impl StdioTransport {
    /// Spawns the server and returns the transport to it, paused (grant
    /// frames with [`set_active`](Transport::set_active)).
    ///
    /// Returns as soon as the process is started, unless
    /// [`StdioConfig::startup_grace`] asks it to watch the new process for a
    /// while first. Must be called within a tokio runtime (the writer
    /// and stderr tasks are spawned on it; the process itself is watched
    /// from this transport's polls, by no task of its own).
    pub async fn spawn(config: StdioConfig) -> Result<Self, SpawnError> {
        let env = child_env(&config);
        let program =
            resolve_command(&config.command, &env, config.cwd.as_deref()).map_err(|reason| {
                SpawnError::NotFound {
                    command: config.command.to_string_lossy().into_owned(),
                    reason,
                }
            })?;
        let mut cmd = tokio::process::Command::new(&program);
        cmd.args(&config.args)
            .env_clear()
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(false);
        if let Some(dir) = &config.cwd {
            cmd.current_dir(dir);
        }
        let spawn_error = |source| SpawnError::Spawn {
            command: program.clone(),
            source,
        };
        let Spawned {
            pid,
            group,
            stdin,
            stdout,
            stderr,
            mut exit,
        } = sys::spawn(cmd).map_err(spawn_error)?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            group.kill();
            return Err(spawn_error(std::io::Error::other(
                "a standard pipe was not created",
            )));
        };

        let command_line = config.command_line(program.as_os_str());
        let tail = Tail::default();
        let (capture_tx, stderr_rx) = if config.stderr == StderrMode::Capture {
            let (tx, rx) = mpsc::channel(CAPTURE_BACKLOG);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let stderr_task = tokio::spawn(drain(
            stderr,
            config.stderr,
            tail.clone(),
            capture_tx,
            command_line.clone(),
        ));
        let timeouts = Timeouts {
            stdin_close: config.stdin_close_timeout,
            sigterm: config.sigterm_timeout,
        };
        if !config.startup_grace.is_zero()
            && let Ok(status) = tokio::time::timeout(config.startup_grace, &mut exit).await
        {
            let _ = tokio::time::timeout(STDERR_SETTLE, stderr_task).await;
            clear_group(group.clone(), timeouts.sigterm).await;
            return Err(SpawnError::ExitedAtStart {
                exit: exit_info(status, tail.lines(), &program),
                command: program,
            });
        }

        let info = TransportInfo::new("stdio", command_line)
            .with_pid(pid)
            .with_detail("framing", format!("{:?}", config.framing).to_lowercase())
            .with_detail("stderr", format!("{:?}", config.stderr).to_lowercase());
        let io = IoTransport::new(stdout, stdin, config.io.clone()).with_info(info);
        Ok(Self {
            io,
            pid,
            command: program,
            group,
            tail,
            stderr_rx,
            stderr_task: Some(stderr_task),
            process: Process::Running(exit),
            exit: None,
            ending: None,
            settle: None,
            closed_reported: false,
            stderr_delivered: false,
            close: Close::NotStarted,
            timeouts,
        })
    }

    /// The server's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The program that was run, as resolved on `PATH`.
    pub fn command(&self) -> &Path {
        &self.command
    }

    /// How the server process ended, once it has (after `Closed`, or after
    /// [`close`](mcpwire_transport::TransportExt::close) completed), with the
    /// stderr tail.
    pub fn exit(&self) -> Option<mcpwire_transport::ExitInfo> {
        self.exit
            .map(|status| exit_info(status, self.tail.lines(), &self.command))
    }

    /// The last lines of the server's stderr, oldest first.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.tail.lines()
    }

    /// Bytes read from stdout and held for the owner (see
    /// [`IoTransport::buffered_len`]).
    pub fn buffered_len(&self) -> usize {
        self.io.buffered_len()
    }

    /// How many non-JSON stdout lines were skipped so far.
    pub fn non_json_skipped(&self) -> u64 {
        self.io.non_json_skipped()
    }

    /// Starts the shutdown sequence (idempotent); it runs as we are polled.
    fn request_shutdown(&mut self) {
        self.process.shut_down(&self.group, self.timeouts);
    }

    /// Drives the process: notes the exit as soon as it happens, and runs
    /// the shutdown sequence once requested. True once it has completed.
    fn poll_exit(&mut self, cx: &mut Context<'_>) -> bool {
        let polled = self.process.poll(cx, &self.group, self.timeouts);
        if let Some(status) = polled.exited {
            self.exit = Some(status);
            // Whatever the server wrote before it died is in the pipe:
            // deliver it, then end instead of waiting for an EOF that a
            // grandchild holding stdout open might never send.
            self.io.peer_exited();
        }
        polled.done
    }

    /// Turns the inner close reason into ours once the exit status and the
    /// stderr tail are in. Pending while they are not.
    fn poll_final_reason(&mut self, cx: &mut Context<'_>) -> Poll<CloseReason> {
        if !matches!(self.ending, Some(CloseReason::Eof)) {
            return Poll::Ready(self.ending.take().unwrap_or(CloseReason::Local));
        }
        // stdout ended: the process is exiting or gone. Closing stdin (done
        // by the inner transport) and the shutdown sequence bound the wait.
        if self.exit.is_none() {
            self.request_shutdown();
            self.poll_exit(cx);
        }
        let Some(status) = self.exit else {
            if matches!(self.process, Process::Done) {
                return Poll::Ready(CloseReason::Eof);
            }
            return Poll::Pending;
        };
        if let Some(task) = self.stderr_task.as_mut() {
            let settle = self
                .settle
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(STDERR_SETTLE)));
            if Pin::new(task).poll(cx).is_pending() && settle.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.stderr_task = None;
        }
        self.ending = None;
        Poll::Ready(CloseReason::Exited(exit_info(
            status,
            self.tail.lines(),
            &self.command,
        )))
    }

    fn finish(&mut self, reason: CloseReason) -> Poll<Option<TransportEvent>> {
        self.closed_reported = true;
        // The group is cleaned up in the background; `poll_close` waits for it.
        self.request_shutdown();
        Poll::Ready(Some(TransportEvent::Closed(reason)))
    }
}

impl Transport for StdioTransport {
    fn sender(&self) -> FrameSender {
        self.io.sender()
    }

    fn set_active(&mut self, active: Active) {
        self.io.set_active(active);
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        if self.closed_reported {
            return Poll::Ready(None);
        }
        // Captured stderr and stdout take turns, so a server flooding one
        // cannot starve the other.
        // Looking costs an atomic load; polling the channel on every frame
        // (registering our waker each time) cost more than the frame's own
        // decoding in profiles, so it is polled only when a line waits, or
        // below when stdout has nothing.
        let stderr_first = !std::mem::take(&mut self.stderr_delivered);
        if stderr_first
            && self.stderr_rx.as_ref().is_some_and(|rx| !rx.is_empty())
            && let Some(event) = self.poll_stderr(cx)
        {
            return Poll::Ready(Some(event));
        }
        match self.poll_process_and_io(cx) {
            Poll::Pending => match self.poll_stderr(cx) {
                Some(event) => Poll::Ready(Some(event)),
                None => Poll::Pending,
            },
            other => other,
        }
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_close_inner(cx)
    }

    fn info(&self) -> TransportInfo {
        self.io.info()
    }
}

impl StdioTransport {
    /// The next captured stderr line, if one is waiting.
    fn poll_stderr(&mut self, cx: &mut Context<'_>) -> Option<TransportEvent> {
        let rx = self.stderr_rx.as_mut()?;
        match rx.poll_recv(cx) {
            Poll::Ready(Some(line)) => {
                self.stderr_delivered = true;
                Some(TransportEvent::Stderr(line))
            }
            Poll::Ready(None) => {
                self.stderr_rx = None;
                None
            }
            Poll::Pending => None,
        }
    }

    /// Everything but stderr: frames and errors from stdout, the exit, and
    /// the close.
    fn poll_process_and_io(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        if !matches!(self.close, Close::NotStarted) {
            return self.finish(CloseReason::Local);
        }
        self.poll_exit(cx);
        if self.ending.is_none() {
            match ready!(self.io.poll_event(cx)) {
                Some(TransportEvent::Closed(reason)) => self.ending = Some(reason),
                Some(event) => return Poll::Ready(Some(event)),
                None => self.ending = Some(CloseReason::Local),
            }
            // The exit may have been reported while the inner transport
            // drained; look again before deciding the reason.
            self.poll_exit(cx);
        }
        let reason = ready!(self.poll_final_reason(cx));
        self.finish(reason)
    }

    fn poll_close_inner(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match &mut self.close {
                Close::NotStarted => self.close = Close::Io,
                Close::Io => {
                    // Flushes queued frames (bounded) and closes stdin.
                    ready!(self.io.poll_close(cx));
                    self.request_shutdown();
                    let bound = self.timeouts.stdin_close + self.timeouts.sigterm * 2 + CLOSE_SLACK;
                    self.close = Close::Process(Box::pin(tokio::time::sleep(bound)));
                }
                Close::Process(_) => {
                    if !self.poll_exit(cx) {
                        if let Close::Process(deadline) = &mut self.close
                            && deadline.as_mut().poll(cx).is_pending()
                        {
                            return Poll::Pending;
                        }
                        // The sequence is stuck; do its last step at once.
                        self.group.kill();
                    }
                    self.close = Close::Done;
                }
                Close::Done => return Poll::Ready(()),
            }
        }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Synchronous and runtime-free: whatever state the close was in, no
        // process of the group outlives the transport. Tokio's orphan queue
        // reaps the leader (dropped with `process`) while a runtime runs.
        if !self.group.is_gone() {
            self.group.kill();
        }
    }
}
