//! `shell`: a REPL over one connection. Lines are read by `rustyline`
//! (history, completion of commands and of tool and prompt names) on a
//! thread of their own; each line is a command as on the command line
//! (`call echo message=hi`), run on the runtime. Server log messages and
//! notifications are printed as they arrive while a command runs; those
//! arriving while the prompt waits are printed before the next prompt
//! (rustyline's external printer left the terminal raw and input stuck).

use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};

use clap::Parser;
use mcpwire::client::types::LogMessage;
use mcpwire::client::{CancellationToken, ServerNotification};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

use crate::args::{Command, Format, Global};
use crate::commands::{Run, Shown};
use crate::failure::{Detail, Exit, Failure};
use crate::target::token_dir;

/// The commands the shell knows, for completion and `help`.
const COMMANDS: &[&str] = &[
    "info",
    "tools",
    "tool",
    "call",
    "resources",
    "templates",
    "read",
    "prompts",
    "prompt",
    "complete",
    "ping",
    "log-level",
    "help",
    "exit",
];

/// One shell line, parsed by the same definitions as the command line.
#[derive(Debug, Parser)]
#[command(name = "", no_binary_name = true, disable_version_flag = true)]
struct Line {
    #[command(subcommand)]
    command: Command,
}

/// A server log message as one line.
pub(crate) fn log_line(m: &LogMessage) -> String {
    let level = serde_json::to_value(m.level).ok();
    let level = level.as_ref().and_then(Value::as_str).unwrap_or("log");
    let data = match &m.data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match &m.logger {
        Some(logger) => format!("[server {level}] {logger}: {data}"),
        None => format!("[server {level}] {data}"),
    }
}

fn notification_line(n: &ServerNotification) -> String {
    match &n.params {
        Some(p) => format!("[notification] {} {p}", n.method),
        None => format!("[notification] {}", n.method),
    }
}

/// Where notification lines go.
pub(crate) type Sink = Box<dyn FnMut(String) + Send>;

/// Prints the server's log messages (and, with `notes`, its other
/// notifications) to `sink` as they arrive, until the client closes or
/// `stop` is cancelled; then prints what is already queued and returns.
pub(crate) async fn print_logs(
    mut logs: broadcast::Receiver<LogMessage>,
    mut notes: Option<broadcast::Receiver<ServerNotification>>,
    mut sink: Sink,
    stop: CancellationToken,
) {
    loop {
        let line = tokio::select! {
            () = stop.cancelled() => {
                // What arrived with the last answer is still shown.
                while let Ok(m) = logs.try_recv() {
                    sink(log_line(&m));
                }
                while let Some(Ok(n)) = notes.as_mut().map(broadcast::Receiver::try_recv) {
                    sink(notification_line(&n));
                }
                return;
            },
            m = logs.recv() => match m {
                Ok(m) => log_line(&m),
                Err(broadcast::error::RecvError::Lagged(n)) => format!("[{n} log messages dropped]"),
                Err(broadcast::error::RecvError::Closed) => return,
            },
            n = async { match notes.as_mut() { Some(n) => n.recv().await, None => std::future::pending().await } } => match n {
                Ok(n) => notification_line(&n),
                Err(broadcast::error::RecvError::Lagged(k)) => format!("[{k} notifications dropped]"),
                Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        sink(line);
    }
}

/// A sink writing to stderr.
pub(crate) fn to_stderr() -> Sink {
    Box::new(|line| eprintln!("{line}"))
}

/// Lines that arrive while a command runs are printed at once; while the
/// prompt waits for input they are kept and printed before the next
/// prompt, so they never break the line being edited.
#[derive(Clone, Default)]
struct Held {
    inner: Arc<Mutex<(bool, Vec<String>)>>,
}

impl Held {
    fn lock(&self) -> std::sync::MutexGuard<'_, (bool, Vec<String>)> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn sink(&self) -> Sink {
        let held = self.clone();
        Box::new(move |line| {
            let mut state = held.lock();
            if state.0 {
                eprintln!("{line}");
            } else {
                state.1.push(line);
            }
        })
    }

    /// Marks a command as running (or not), printing what was kept.
    fn running(&self, busy: bool) {
        let mut state = self.lock();
        state.0 = busy;
        for line in state.1.drain(..) {
            eprintln!("{line}");
        }
    }
}

/// Completes the first word from the commands and later words from the
/// server's tool and prompt names.
struct Completion {
    names: Vec<String>,
}

impl Completer for Completion {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before.rfind(' ').map_or(0, |i| i + 1);
        let word = &before[start..];
        let pool: Vec<&str> = if start == 0 {
            COMMANDS.to_vec()
        } else {
            self.names.iter().map(String::as_str).collect()
        };
        let found = pool
            .into_iter()
            .filter(|c| c.starts_with(word))
            .map(|c| Pair {
                display: c.to_owned(),
                replacement: format!("{c} "),
            })
            .collect();
        Ok((start, found))
    }
}

impl Hinter for Completion {
    type Hint = String;
}
impl Highlighter for Completion {}
impl Validator for Completion {}
impl Helper for Completion {}

fn history_path(global: &Global) -> PathBuf {
    match std::env::var_os("MCPWIRE_HISTORY") {
        Some(p) => p.into(),
        None => token_dir(global)
            .parent()
            .map_or_else(|| PathBuf::from(".mcpwire_history"), |d| d.join("history")),
    }
}

/// Reads lines on a thread of its own: each is sent on `lines`, and the
/// next prompt waits for `done` (so output comes before it).
fn reader(
    mut editor: Editor<Completion, FileHistory>,
    history: PathBuf,
    lines: mpsc::Sender<String>,
    done: std_mpsc::Receiver<()>,
) {
    loop {
        match editor.readline("mcpwire> ") {
            Ok(line) => {
                let line = line.trim().to_owned();
                if line.is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(line.as_str());
                if lines.blocking_send(line).is_err() || done.recv().is_err() {
                    break;
                }
            }
            // Ctrl-C at the prompt drops the line, as shells do (a signal
            // noted while a command ran comes out here too).
            Err(ReadlineError::Interrupted | ReadlineError::Signal(_)) => continue,
            Err(_) => break,
        }
    }
    if let Some(dir) = history.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = editor.save_history(&history);
}

const HELP: &str = "\
commands: info | tools [--schema] | tool NAME | call TOOL [k=v] [k:=json] [--args JSON]
          resources | templates | read URI [-o FILE] | prompts | prompt NAME [k=v]
          complete --prompt NAME ARG [VALUE] | ping | log-level LEVEL | help | exit
Tab completes commands, tool and prompt names; Ctrl-C cancels a running request.
";

/// Runs one line; `None` ends the shell.
async fn line(run: &Run<'_>, text: &str, format: Format) -> Option<String> {
    let words = match shlex::split(text) {
        Some(w) => w,
        None => return Some("error: unbalanced quotes\n".into()),
    };
    match words.first().map(String::as_str) {
        Some("exit" | "quit") => return None,
        Some("help") => return Some(HELP.into()),
        _ => {}
    }
    let parsed = match Line::try_parse_from(&words) {
        Ok(l) => l,
        Err(e) => return Some(e.render().to_string()),
    };
    if matches!(
        parsed.command,
        Command::Shell | Command::Servers | Command::Login { .. } | Command::Logout { .. }
    ) {
        return Some(format!(
            "error: {} is not available in the shell\n",
            words[0]
        ));
    }
    let outcome = crate::commands::interruptible(run, &parsed.command).await;
    Some(match outcome {
        Ok(shown) => {
            let mut out = shown_text(&shown, format);
            if let Some(f) = shown.failure {
                out.push_str(&format!("error: {}\n", f.text(Detail::Short)));
            }
            out
        }
        Err(f) => format!("error: {}\n", f.text(Detail::Short)),
    })
}

fn shown_text(shown: &Shown, format: Format) -> String {
    match format {
        Format::Text => shown.text.clone(),
        _ => format!("{}\n", crate::render::pretty(&shown.json)),
    }
}

/// The REPL, until `exit` or end of input.
pub(crate) async fn run(run: &Run<'_>, global: &Global) -> Result<Shown, Failure> {
    // With --pins, a blocked tool or prompt is not offered: Tab would
    // complete a name the next line is refused.
    let names = crate::commands::offered_names(run).await;
    let mut editor: Editor<Completion, FileHistory> = Editor::new()
        .map_err(|e| Failure::caused(Exit::Usage, "cannot start the line editor", e))?;
    // rustyline installs a SIGINT handler of its own for the editor's
    // life; registering ours after it puts ours first (signal-hook chains
    // to rustyline's), so Ctrl-C during a command cancels the request. At
    // the prompt the terminal is raw and Ctrl-C is a key rustyline reads.
    #[cfg(unix)]
    let _interrupts = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| Failure::caused(Exit::Usage, "cannot watch for Ctrl-C", e))?;
    // On Windows a console Ctrl-C ends a process unless a handler takes
    // it. Tokio's handler takes it while anyone listens, so holding this
    // listener for the shell's life keeps a Ctrl-C between two commands
    // from ending the shell; during a command, the command's own listener
    // cancels the request. At the prompt, rustyline reads Ctrl-C as a key.
    #[cfg(windows)]
    let _interrupts = tokio::signal::windows::ctrl_c()
        .map_err(|e| Failure::caused(Exit::Usage, "cannot watch for Ctrl-C", e))?;
    editor.set_helper(Some(Completion { names }));
    let history = history_path(global);
    let _ = editor.load_history(&history);
    let held = Held::default();
    let stop = CancellationToken::new();
    let printing = tokio::spawn(print_logs(
        run.client.log_messages(),
        Some(run.client.notifications()),
        held.sink(),
        stop.clone(),
    ));
    let (lines_tx, mut lines) = mpsc::channel(1);
    let (done, done_rx) = std_mpsc::channel();
    println!("connected; type help for the commands, exit to leave");
    let reading = std::thread::spawn(move || reader(editor, history, lines_tx, done_rx));
    while let Some(text) = lines.recv().await {
        // A fresh token per line: Ctrl-C cancels one request, not the shell.
        let run = Run {
            cancel: CancellationToken::new(),
            ..*run
        };
        held.running(true);
        let out = line(&run, &text, global.format()).await;
        held.running(false);
        match out {
            Some(out) => print!("{out}"),
            None => break,
        }
        if done.send(()).is_err() {
            break;
        }
    }
    drop(done);
    drop(lines);
    stop.cancel();
    let _ = printing.await;
    let _ = tokio::task::spawn_blocking(move || reading.join()).await;
    Ok(Shown {
        json: serde_json::json!({}),
        items: None,
        text: String::new(),
        failure: None,
    })
}
