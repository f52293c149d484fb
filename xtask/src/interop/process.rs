//! The processes of an interop case: HTTP servers started on a free
//! loopback port, and every process in a process group of its own that is
//! stopped, with everything it started, when its [`Group`] is dropped.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

use super::cases::Transport;
use crate::cmd::display;

/// How long an HTTP server may take to listen.
const LISTEN_WAIT: Duration = Duration::from_secs(60);

/// Starts the HTTP server `how` describes on a free port; returns it (in
/// its process group) and the URL to reach it.
pub(super) fn start_http(how: &Transport, log: &Path) -> Result<(Group, String), String> {
    let Transport::Http {
        program,
        args,
        port_arg,
        scheme,
        path,
        env,
    } = how
    else {
        return Err("not an HTTP server".into());
    };
    let port = free_port()?;
    let mut server = Command::new(program);
    server.args(args).env("PORT", port.to_string());
    server.envs(env.iter().map(|(k, v)| (*k, v)));
    if *port_arg {
        server.arg(port.to_string());
    }
    let server_log = log.with_extension("server.log");
    let mut server = Group::spawn(&mut server, &server_log, &server_log)?;
    wait_listening(&mut server, port)?;
    Ok((server, format!("{scheme}://127.0.0.1:{port}{path}")))
}

pub(super) fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .to_owned()
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// Waits until something accepts on 127.0.0.1:`port`, or the server exits.
fn wait_listening(server: &mut Group, port: u16) -> Result<(), String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let start = Instant::now();
    while start.elapsed() < LISTEN_WAIT {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if server.exited() {
            return Err("the server exited before listening".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("the server never listened on {addr}"))
}

/// A process in a process group of its own; dropping it stops the whole
/// group (SIGTERM, then SIGKILL after two seconds).
pub(super) struct Group {
    child: Child,
    done: bool,
}

impl Group {
    /// Spawns `cmd` with its stdout to `out` and its stderr to `err` (which
    /// may be the same file).
    pub(super) fn spawn(cmd: &mut Command, out: &Path, err: &Path) -> Result<Self, String> {
        let create = |p: &Path| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| format!("{}: {e}", p.display()))
        };
        let (out, err) = (create(out)?, create(err)?);
        eprintln!("$ {}", display(cmd));
        let child = cmd
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot run `{}`: {e}", display(cmd)))?;
        Ok(Group { child, done: false })
    }

    /// Whether the leader has exited.
    fn exited(&mut self) -> bool {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            self.done = true;
        }
        self.done
    }

    /// Waits up to `limit` for the leader to exit: `Some(success)`, or `None`
    /// if it did not.
    pub(super) fn wait(&mut self, limit: Duration) -> Option<bool> {
        let start = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.done = true;
                    return Some(status.success());
                }
                Ok(None) if start.elapsed() < limit => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => return None,
            }
        }
    }

    fn signal(&self, signal: Signal) {
        // The group id is the leader's pid (`process_group(0)`).
        let pgid = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw);
        if let Some(pgid) = pgid {
            let _ = kill_process_group(pgid, signal);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // The leader may be gone while others of its group live on (a
        // wrapper's children): signal the group either way.
        self.signal(Signal::TERM);
        let start = Instant::now();
        while !self.done && start.elapsed() < Duration::from_secs(2) {
            if let Ok(Some(_)) = self.child.try_wait() {
                self.done = true;
            } else {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.signal(Signal::KILL);
        let _ = self.child.wait();
    }
}
