//! [`StdioConfig`]: how to spawn a server and talk to it.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

use mcpwire_transport::{Framing, IoConfig, NonJsonPolicy};

/// What happens to the server's stderr.
///
/// Whatever the mode, stderr is read by its own task as fast as the server
/// writes it (a chatty server never blocks on a full pipe), and the last 50
/// lines are kept for [`ExitInfo::stderr_tail`](mcpwire_transport::ExitInfo)
/// and startup errors. Lines longer than 4 KiB are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// Copy each line to this process's stderr.
    Inherit,
    /// Keep only the tail.
    Discard,
    /// Deliver each line as a
    /// [`TransportEvent::Stderr`](mcpwire_transport::TransportEvent::Stderr)
    /// (no grant needed). If the owner falls more than 256 lines behind, new
    /// lines are dropped (and counted in a `tracing` warning) rather than
    /// blocking the server.
    Capture,
    /// Log each line through `tracing` at `INFO`, target
    /// `mcpwire_stdio::stderr`. The default.
    #[default]
    Log,
}

/// What a spawned server inherits of this process's environment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InheritEnv {
    /// Only [`SAFE_ENV_VARS`](crate::SAFE_ENV_VARS) (`PATH`, `HOME`, the
    /// locale...). The default.
    #[default]
    SafeList,
    /// The whole environment. Security: it usually holds secrets (API keys,
    /// tokens) that a third-party server has no business reading.
    All,
}

/// How to spawn an MCP server and run the stdio transport to it.
///
/// No shell is involved: the command is resolved on `PATH` (the child's, if
/// set with [`env`](Self::env)) and run with the arguments exactly as given.
#[derive(Debug, Clone)]
#[must_use]
pub struct StdioConfig {
    pub(crate) command: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) inherit_env: InheritEnv,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) io: IoConfig,
    pub(crate) framing: Framing,
    pub(crate) stderr: StderrMode,
    pub(crate) startup_grace: Duration,
    pub(crate) stdin_close_timeout: Duration,
    pub(crate) sigterm_timeout: Duration,
}

impl StdioConfig {
    /// Spawns `command` with no arguments, the safe environment, and every
    /// other setting at its default.
    pub fn new(command: impl Into<OsString>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            inherit_env: InheritEnv::SafeList,
            cwd: None,
            io: IoConfig::new(),
            framing: Framing::Newline,
            stderr: StderrMode::default(),
            startup_grace: Duration::ZERO,
            stdin_close_timeout: Duration::from_secs(2),
            sigterm_timeout: Duration::from_secs(2),
        }
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable for the child (over the inherited ones).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets several environment variables for the child.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.env
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// What the child inherits of this process's environment (variables
    /// set with [`env`](Self::env) come on top). Default:
    /// [`InheritEnv::SafeList`].
    pub fn inherit_env(mut self, inherit: InheritEnv) -> Self {
        self.inherit_env = inherit;
        self
    }

    /// The child's working directory. Default: this process's.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The framing on stdin and stdout. Default: [`Framing::Newline`], as the
    /// MCP specification says.
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self.io = self.io.framing(framing);
        self
    }

    /// The longest frame accepted in either direction. Default: 16 MiB.
    /// A longer inbound frame is an error event, then the transport closes
    /// with `FrameTooLong` and the server is shut down; it is never buffered
    /// whole. Raising it lets the server make us hold that much memory.
    pub fn max_frame_len(mut self, max: usize) -> Self {
        self.io = self.io.max_frame_len(max);
        self
    }

    /// How many bytes one read of stdout asks for, and the read-ahead while
    /// the owner grants nothing. Default: 64 KiB.
    pub fn read_buffer_size(mut self, size: usize) -> Self {
        self.io = self.io.read_buffer_size(size);
        self
    }

    /// How many frames the outbound queue holds before `try_send` answers
    /// `Busy`. Default: 64.
    pub fn outbound_capacity(mut self, capacity: usize) -> Self {
        self.io = self.io.outbound_capacity(capacity);
        self
    }

    /// What to do with stdout lines that are not JSON. Default:
    /// [`NonJsonPolicy::Skip`] (skip, count, report at most once a second).
    pub fn non_json(mut self, policy: NonJsonPolicy) -> Self {
        self.io = self.io.non_json(policy);
        self
    }

    /// What happens to stderr. Default: [`StderrMode::Log`].
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// How long [`spawn`](crate::StdioTransport::spawn) watches the new
    /// process before returning, so one that exits at once (a bad argument, a
    /// missing dependency) is a [`SpawnError::ExitedAtStart`](crate::SpawnError)
    /// with its stderr, not a later close. Default: zero (no wait), because
    /// every spawn would pay the grace in full: a process that exits at once
    /// is then reported as `Closed(Exited)`, which carries the same details
    /// (the resolved command, its status and its stderr tail).
    pub fn startup_grace(mut self, grace: Duration) -> Self {
        self.startup_grace = grace;
        self
    }

    /// Closing: how long to wait, after closing stdin, for the server to exit
    /// on its own before `SIGTERM`. It also bounds the flush of queued
    /// frames. Default: 2 s.
    pub fn stdin_close_timeout(mut self, timeout: Duration) -> Self {
        self.stdin_close_timeout = timeout;
        self.io = self.io.flush_timeout(timeout);
        self
    }

    /// Closing: how long to wait after `SIGTERM` to the process group before
    /// `SIGKILL`. Default: 2 s.
    pub fn sigterm_timeout(mut self, timeout: Duration) -> Self {
        self.sigterm_timeout = timeout;
        self
    }

    /// The command line, for messages: the program and its arguments.
    pub(crate) fn command_line(&self, program: &OsStr) -> String {
        let mut line = program.to_string_lossy().into_owned();
        for arg in &self.args {
            line.push(' ');
            line.push_str(&arg.to_string_lossy());
        }
        line
    }
}
