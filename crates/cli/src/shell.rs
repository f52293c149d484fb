//! `shell`: a REPL over one connection. Lines are read by `rustyline`
//! (history, completion of commands and of tool and prompt names) on a
//! thread of their own; each line is a command as on the command line
//! (`call echo message=hi`), run on the runtime. Server log messages and
//! notifications are printed above the prompt as they arrive.

use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;

use clap::Parser;
use mcpwire::client::ServerNotification;
use mcpwire::client::types::LogMessage;
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, ExternalPrinter, Helper};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

use crate::args::{Command, Format, Global};
use crate::commands::{Run, Shown};
use crate::failure::{Exit, Failure};
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

/// Prints the server's log messages (and, with `notes`, its other
/// notifications) to `sink`, or to stderr without one, until the client
/// closes.
pub(crate) async fn print_logs(
    mut logs: broadcast::Receiver<LogMessage>,
    notes: Option<(
        broadcast::Receiver<ServerNotification>,
        Box<dyn ExternalPrinter + Send>,
    )>,
) {
    let (mut notes, mut printer) = match notes {
        Some((n, p)) => (Some(n), Some(p)),
        None => (None, None),
    };
    loop {
        let line = tokio::select! {
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
        match printer.as_mut() {
            Some(p) => {
                let _ = p.print(format!("{line}\n"));
            }
            None => eprintln!("{line}"),
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
            // Ctrl-C at the prompt drops the line, as shells do.
            Err(ReadlineError::Interrupted) => continue,
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
                out.push_str(&format!("error: {}\n", f.text()));
            }
            out
        }
        Err(f) => format!("error: {}\n", f.text()),
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
    let mut names: Vec<String> = Vec::new();
    if let Ok(tools) = run.client.list_all_tools().timeout(run.timeout).await {
        names.extend(tools.into_iter().map(|t| t.name));
    }
    if let Ok(prompts) = run.client.list_all_prompts().timeout(run.timeout).await {
        names.extend(prompts.into_iter().map(|p| p.name));
    }
    let mut editor: Editor<Completion, FileHistory> = Editor::new()
        .map_err(|e| Failure::caused(Exit::Usage, "cannot start the line editor", e))?;
    editor.set_helper(Some(Completion { names }));
    let history = history_path(global);
    let _ = editor.load_history(&history);
    let printer = editor
        .create_external_printer()
        .map_err(|e| Failure::caused(Exit::Usage, "cannot start the line editor", e))?;
    let printing = tokio::spawn(print_logs(
        run.client.log_messages(),
        Some((run.client.notifications(), Box::new(printer))),
    ));
    let (lines_tx, mut lines) = mpsc::channel(1);
    let (done, done_rx) = std_mpsc::channel();
    let reading = std::thread::spawn(move || reader(editor, history, lines_tx, done_rx));
    println!("connected; type help for the commands, exit to leave");
    while let Some(text) = lines.recv().await {
        // A fresh token per line: Ctrl-C cancels one request, not the shell.
        let run = Run {
            cancel: mcpwire::client::CancellationToken::new(),
            ..*run
        };
        match line(&run, &text, global.format()).await {
            Some(out) => print!("{out}"),
            None => break,
        }
        if done.send(()).is_err() {
            break;
        }
    }
    drop(done);
    drop(lines);
    printing.abort();
    let _ = tokio::task::spawn_blocking(move || reading.join()).await;
    Ok(Shown {
        json: serde_json::json!({}),
        items: None,
        text: String::new(),
        failure: None,
    })
}
