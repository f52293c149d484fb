//! `cargo xtask interop`: our client against real MCP servers written by
//! others, one case per server and transport.
//!
//! The servers are the ones `cargo xtask servers` installs (npm
//! `server-everything` and `server-filesystem`, the Python SDK with a script
//! kept in the repository, `mcp-server-time`). Each case runs the
//! `mcpwire-conformance interop` binary with the client's default settings:
//! connect (for HTTP, from the URL alone through the automatic fallback),
//! list the tools and call one, read a resource and get a prompt where the
//! server offers them, close. It prints one line per case and
//! `N passed, M failed`, writes `docs/interop.md` when every case ran, and
//! fails on any failure.
//!
//! HTTP servers bind 127.0.0.1 on a free port (the npm server, which listens
//! on every interface and has no host option, through a `node --require`
//! preload) and run in their own process group, which is stopped at the end
//! of the case whatever happened. Stdio servers are spawned and stopped by
//! the client itself; the client runs in its own process group too, so a
//! case that overruns its time is stopped with everything it started.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use std::os::unix::process::CommandExt;

use rustix::process::{Pid, Signal, kill_process_group};

use crate::cmd::{cargo, display, run};
use crate::servers;

const CLIENT_PACKAGE: &str = "mcpwire-conformance";
/// How long one case may take, client and server start included.
const CASE_WALL_TIME: Duration = Duration::from_secs(120);
/// How long an HTTP server may take to listen.
const LISTEN_WAIT: Duration = Duration::from_secs(60);

/// How the case reaches its server.
enum Transport {
    /// The client spawns `program args...` and talks over stdin/stdout.
    Stdio {
        program: PathBuf,
        args: Vec<String>,
        env: Vec<(&'static str, String)>,
    },
    /// We start `program args...` with `PORT` (and `port_arg`) set to a free
    /// port, then the client connects to `http://127.0.0.1:PORT{path}`.
    Http {
        program: PathBuf,
        args: Vec<String>,
        /// Whether the port is also passed as the last argument.
        port_arg: bool,
        path: &'static str,
    },
}

struct Case {
    server: &'static str,
    transport: &'static str,
    how: Transport,
    /// Extra arguments for the client (`--tool`, `--arguments`...).
    client_args: Vec<String>,
}

struct Outcome {
    server: &'static str,
    transport: &'static str,
    result: Result<String, String>,
    elapsed: Duration,
}

/// Runs every case (or those whose `server/transport` contains the text
/// given with `--only`).
pub(crate) fn interop(root: &Path, args: &[String]) -> Result<(), String> {
    let mut only = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--only" => only = Some(it.next().ok_or("--only needs a text")?.clone()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    // Tests and this command find the servers the same way: where
    // MCPWIRE_SERVERS_DIR points, else installed under target/.
    let dir = match std::env::var_os(servers::DIR_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => servers::install(root)?,
    };
    run(cargo().args(["build", "--quiet", "-p", CLIENT_PACKAGE]))?;
    let client = root.join("target").join("debug").join(CLIENT_PACKAGE);
    let work = root.join("target").join("interop");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("logs")).map_err(|e| e.to_string())?;

    let mut outcomes = Vec::new();
    for case in cases(root, &dir, &work)? {
        let name = format!("{}/{}", case.server, case.transport);
        if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        let start = Instant::now();
        let result = run_case(&client, &case, &work);
        let outcome = Outcome {
            server: case.server,
            transport: case.transport,
            result,
            elapsed: start.elapsed(),
        };
        println!("{}", line(&outcome));
        outcomes.push(outcome);
    }

    let passed = outcomes.iter().filter(|o| o.result.is_ok()).count();
    let failed = outcomes.len() - passed;
    if only.is_none() {
        write_doc(root, &outcomes)?;
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        Ok(())
    } else {
        Err(format!(
            "{failed} interop case(s) failed (logs in {})",
            work.join("logs").display()
        ))
    }
}

/// The cases, in the order they run.
fn cases(root: &Path, dir: &Path, work: &Path) -> Result<Vec<Case>, String> {
    let node = PathBuf::from("node");
    let npm = dir
        .join("npm")
        .join("node_modules")
        .join("@modelcontextprotocol");
    let everything = path_str(&npm.join("server-everything").join("dist").join("index.js"))?;
    let filesystem = path_str(&npm.join("server-filesystem").join("dist").join("index.js"))?;
    // The npm server listens on every interface and has no host option: this
    // preload binds every `listen()` without a host to 127.0.0.1.
    let loopback = path_str(
        &root
            .join("crates")
            .join("transport-http")
            .join("tests")
            .join("servers")
            .join("loopback.js"),
    )?;
    let python = dir.join("venv").join("bin").join("python");
    let script = path_str(
        &root
            .join("crates")
            .join("conformance-client")
            .join("interop")
            .join("mcpserver.py"),
    )?;
    let time = dir.join("venv").join("bin").join("mcp-server-time");

    // The filesystem server gets a directory of its own with one file in it.
    let fs_root = work.join("fs-root");
    std::fs::create_dir_all(&fs_root).map_err(|e| e.to_string())?;
    std::fs::write(fs_root.join("hello.txt"), "hello from mcpwire interop\n")
        .map_err(|e| e.to_string())?;
    let fs_root = path_str(&fs_root)?;

    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let echo = args(&[
        "--tool",
        "echo",
        "--arguments",
        r#"{"message":"hello from mcpwire"}"#,
    ]);
    let add = args(&["--tool", "add", "--arguments", r#"{"a":2,"b":3}"#]);
    let everything_http = |mode: &str, path| Transport::Http {
        program: node.clone(),
        args: vec![
            "--require".into(),
            loopback.clone(),
            everything.clone(),
            mode.into(),
        ],
        port_arg: false,
        path,
    };
    let python_http = |mode: &str, path| Transport::Http {
        program: python.clone(),
        args: vec![script.clone(), mode.into()],
        port_arg: true,
        path,
    };
    Ok(vec![
        Case {
            server: "server-everything",
            transport: "stdio",
            how: Transport::Stdio {
                program: node.clone(),
                args: vec![everything.clone(), "stdio".into()],
                env: Vec::new(),
            },
            client_args: echo.clone(),
        },
        Case {
            server: "server-everything",
            transport: "streamableHttp",
            how: everything_http("streamableHttp", "/mcp"),
            client_args: echo.clone(),
        },
        Case {
            server: "server-everything",
            transport: "sse",
            how: everything_http("sse", "/sse"),
            client_args: echo,
        },
        Case {
            server: "server-filesystem",
            transport: "stdio",
            how: Transport::Stdio {
                program: node.clone(),
                args: vec![filesystem, fs_root.clone()],
                env: Vec::new(),
            },
            client_args: vec![
                "--tool".into(),
                "read_text_file".into(),
                "--arguments".into(),
                serde_json::json!({ "path": format!("{fs_root}/hello.txt") }).to_string(),
            ],
        },
        Case {
            server: "python-sdk",
            transport: "stdio",
            how: Transport::Stdio {
                program: python.clone(),
                args: vec![script.clone(), "stdio".into()],
                env: Vec::new(),
            },
            client_args: add.clone(),
        },
        Case {
            server: "python-sdk",
            transport: "streamable-http",
            how: python_http("streamable-http", "/mcp"),
            client_args: add.clone(),
        },
        Case {
            server: "python-sdk",
            transport: "sse",
            how: python_http("sse", "/sse"),
            client_args: add,
        },
        Case {
            server: "mcp-server-time",
            transport: "stdio",
            how: Transport::Stdio {
                program: time,
                args: Vec::new(),
                // Its local timezone comes from TZ; the client passes only a
                // safe allow-list of the environment.
                env: vec![("TZ", "UTC".into())],
            },
            client_args: args(&[
                "--tool",
                "get_current_time",
                "--arguments",
                r#"{"timezone":"UTC"}"#,
            ]),
        },
    ])
}

fn path_str(p: &Path) -> Result<String, String> {
    p.to_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

/// Runs one case: starts its HTTP server if it has one, runs the client,
/// stops everything. Returns the client's summary line or why it failed.
fn run_case(client: &Path, case: &Case, work: &Path) -> Result<String, String> {
    let log = work
        .join("logs")
        .join(format!("{}-{}.log", case.server, case.transport));
    let mut cmd = Command::new(client);
    cmd.arg("interop").args(&case.client_args);
    // Kept alive until the client is done, then stopped with its group.
    let mut _server = None;
    match &case.how {
        Transport::Stdio { program, args, env } => {
            for (k, v) in env {
                cmd.arg("--env").arg(format!("{k}={v}"));
            }
            cmd.arg("--stdio").arg(program).args(args);
        }
        Transport::Http {
            program,
            args,
            port_arg,
            path,
        } => {
            let port = free_port()?;
            let mut server = Command::new(program);
            server.args(args).env("PORT", port.to_string());
            if *port_arg {
                server.arg(port.to_string());
            }
            let server_log = log.with_extension("server.log");
            let mut server = Group::spawn(&mut server, &server_log, &server_log)?;
            wait_listening(&mut server, port)?;
            cmd.arg("--url")
                .arg(format!("http://127.0.0.1:{port}{path}"));
            _server = Some(server);
        }
    }
    let summary = log.with_extension("out");
    let mut client = Group::spawn(&mut cmd, &summary, &log)?;
    let status = client.wait(CASE_WALL_TIME);
    drop(client);
    drop(_server);
    match status {
        Some(true) => Ok(last_line(
            &std::fs::read_to_string(&summary).unwrap_or_default(),
        )),
        Some(false) => Err(last_line(
            &std::fs::read_to_string(&log).unwrap_or_default(),
        )),
        None => Err(format!("timed out after {} s", CASE_WALL_TIME.as_secs())),
    }
}

fn last_line(text: &str) -> String {
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
struct Group {
    child: Child,
    done: bool,
}

impl Group {
    /// Spawns `cmd` with its stdout to `out` and its stderr to `err` (which
    /// may be the same file).
    fn spawn(cmd: &mut Command, out: &Path, err: &Path) -> Result<Self, String> {
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
    fn wait(&mut self, limit: Duration) -> Option<bool> {
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

fn line(o: &Outcome) -> String {
    let (verdict, detail) = match &o.result {
        Ok(summary) => ("pass", summary.as_str()),
        Err(why) => ("FAIL", why.as_str()),
    };
    format!(
        "{:18} {:16} {verdict:4} {:5.1} s  {detail}",
        o.server,
        o.transport,
        o.elapsed.as_secs_f64()
    )
}

fn write_doc(root: &Path, outcomes: &[Outcome]) -> Result<(), String> {
    let mut table = String::from(
        "| server | transport | verdict | what the client did | time |\n| --- | --- | --- | --- | --- |\n",
    );
    for o in outcomes {
        let (verdict, detail) = match &o.result {
            Ok(summary) => ("pass", summary.clone()),
            Err(why) => ("**FAIL**", why.clone()),
        };
        table.push_str(&format!(
            "| {} | {} | {verdict} | {} | {:.1} s |\n",
            o.server,
            o.transport,
            detail.replace('|', "\\|"),
            o.elapsed.as_secs_f64()
        ));
    }
    let doc = format!(
        "# Interop\n\nProduced by `cargo xtask interop`: the client, with its default settings, \
         against real MCP servers written by others, installed by `cargo xtask servers` \
         (`xtask/src/servers.rs` pins the versions). Each case connects (HTTP: from the URL alone, \
         through the automatic fallback), lists the tools and calls one, reads a resource and \
         gets a prompt where the server offers them, and closes. HTTP servers bind 127.0.0.1 on \
         a free port and run in their own process group, stopped after the case; the npm server \
         is bound to loopback by a `node --require` preload \
         (`crates/transport-http/tests/servers/loopback.js`). The Python SDK server is \
         `crates/conformance-client/interop/mcpserver.py`. The transport column is the \
         server's; the line starts with the transport the client settled on. `cargo xtask interop \
         --only TEXT` runs the cases whose `server/transport` contains TEXT; logs are under \
         `target/interop/logs/`.\n\n{table}"
    );
    let path = root.join("docs").join("interop.md");
    std::fs::write(&path, doc).map_err(|e| format!("{}: {e}", path.display()))
}
