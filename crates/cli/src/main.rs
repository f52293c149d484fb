//! `mcpwire`: poke, script and debug any MCP server from a terminal.
//!
//! ```text
//! mcpwire [GLOBAL] <COMMAND> [ARGS] [-- CMD ARGS...]
//! ```
//!
//! Built on the `mcpwire` facade only. `mcpwire --help` lists the commands,
//! the global options and the exit codes; `docs/cli.md` shows each command
//! with real output.

// Lowest layer first: a module imports only from modules declared above it
// (`cargo xtask tidy` checks it); `cargo xtask tidy --print` draws the layers.
mod args;
mod failure;
mod form;
mod progress;
mod render;
mod telemetry;
mod tty;
mod asked;
mod typed_args;
mod pins;
mod commands;
mod wire_log;
mod servers;
mod target;
mod pins_command;
mod login;
mod shell;
mod serve;

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mcpwire::client::CancellationToken;

use crate::args::{Cli, Command, Format, Global};
use crate::commands::{Run, Shown};
use crate::failure::{Detail, Exit, Failure};

fn main() -> ExitCode {
    let (ours, server_command) = args::split_server_command(std::env::args().skip(1).collect());
    let wants_json = args::asks_for_json(&ours);
    let cli = match Cli::try_parse_from(std::iter::once("mcpwire".to_owned()).chain(ours)) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() && wants_json => {
            // Still one JSON line, as every other error with --format json.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            let failure = Failure::usage(first.trim_start_matches("error: ").to_owned());
            let _ = writeln!(std::io::stderr().lock(), "{}", failure.json());
            return ExitCode::from(Exit::Usage as u8);
        }
        Err(e) => {
            // Help and version are not errors; every usage error is exit 1.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(Exit::Usage as u8)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return report(
                &cli.global,
                &Failure::caused(Exit::Usage, "cannot start", e),
            );
        }
    };
    let format = cli.global.format();
    let export = if telemetry::wanted(cli.global.otel) {
        match telemetry::start(runtime.handle()) {
            Ok(export) => Some(export),
            Err(f) => return report(&cli.global, &f),
        }
    } else {
        None
    };
    // The root of the run's trace: every request's span is its child.
    let span = tracing::info_span!(
        target: "mcpwire::cli",
        "mcpwire",
        otel.name = %format_args!("mcpwire {}", command_name()),
    );
    let outcome = runtime.block_on(tracing::Instrument::instrument(
        dispatch(&cli, &server_command),
        span,
    ));
    // Flushed while the runtime still runs its HTTP requests.
    if let Some(export) = export {
        export.finish();
    }
    // The client's tasks are done or abandoned: do not wait for them.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match outcome {
        Ok(shown) => {
            print(format, &shown);
            match shown.failure {
                Some(f) => report(&cli.global, &f),
                None => ExitCode::SUCCESS,
            }
        }
        Err(f) => report(&cli.global, &f),
    }
}

/// The subcommand's name as typed (`call`, `tools`...), for the run's span.
fn command_name() -> String {
    std::env::args()
        .skip(1)
        .take_while(|a| a != "--")
        .find(|a| !a.starts_with('-') && args::is_command(a))
        .unwrap_or_default()
}

async fn dispatch(cli: &Cli, server_command: &[String]) -> Result<Shown, Failure> {
    let global = &cli.global;
    match &cli.command {
        Command::Servers => servers::list(&target::load_configs(global)?, global.server.as_deref()),
        Command::Serve {
            http,
            port,
            token,
            max_sessions,
            socket,
            watch,
        } => {
            let mode = match (socket, *http) {
                (Some(path), _) => serve::Mode::Unix(path.clone()),
                (None, true) => serve::Mode::Http(*port, token.clone(), *max_sessions),
                (None, false) => serve::Mode::Stdio,
            };
            serve::run(global, mode, *watch).await
        }
        Command::Login { target } => login::login(global, server_command, target.as_deref()).await,
        Command::Logout { target } => {
            login::logout(global, server_command, target.as_deref()).await
        }
        Command::Pins(pins) => pins_command::run(global, server_command, pins).await,
        command => {
            let chosen = target::select(global, server_command, None)?;
            let pins = pins_command::check(global, &chosen)?;
            let cancel = CancellationToken::new();
            let connecting = target::connect(global, &chosen);
            let client = if let Command::Shell = command {
                // No SIGINT handler before the shell's line editor exists
                // (see shell.rs): Ctrl-C while connecting just ends us.
                connecting.await?
            } else {
                tokio::select! {
                    c = connecting => c?,
                    _ = tokio::signal::ctrl_c() => {
                        return Err(Failure::new(Exit::Interrupted, "interrupted"));
                    }
                }
            };
            let fancy = progress::fancy(global.no_color);
            let run = Run {
                client: &client,
                cancel: cancel.clone(),
                timeout: Duration::try_from_secs_f64(global.timeout)
                    .unwrap_or(Duration::from_secs(60)),
                fancy,
                names: if global.no_check {
                    typed_args::Names::Unchecked
                } else {
                    typed_args::Names::Checked
                },
                pins: pins.as_ref(),
            };
            let stop_logs = CancellationToken::new();
            let logs = (global.format() == Format::Text && !matches!(command, Command::Shell))
                .then(|| {
                    tokio::spawn(shell::print_logs(
                        client.log_messages(),
                        None,
                        shell::to_stderr(),
                        stop_logs.clone(),
                    ))
                });
            let outcome = if let Command::Shell = command {
                shell::run(&run, global).await
            } else {
                commands::interruptible(&run, command).await
            };
            if let Some(task) = logs {
                stop_logs.cancel();
                let _ = task.await;
            }
            client.close().await;
            outcome
        }
    }
}

fn print(format: Format, shown: &Shown) {
    let mut out = std::io::stdout().lock();
    let written = match format {
        Format::Text => out.write_all(shown.text.as_bytes()),
        Format::Json => writeln!(out, "{}", render::pretty(&shown.json)),
        Format::Ndjson => match &shown.items {
            Some(items) => items.iter().try_for_each(|i| writeln!(out, "{i}")),
            None => writeln!(out, "{}", shown.json),
        },
    };
    // stdout closed (a pipe to `head`): nothing more to say.
    let _ = written.and_then(|()| out.flush());
}

/// How much of a failure to show: everything with -v.
fn detail(global: &Global) -> Detail {
    if global.verbose {
        Detail::Full
    } else {
        Detail::Short
    }
}

fn report(global: &Global, failure: &Failure) -> ExitCode {
    let mut err = std::io::stderr().lock();
    let _ = match global.format() {
        Format::Json | Format::Ndjson => writeln!(err, "{}", failure.json()),
        Format::Text => {
            let mut text = failure.text(detail(global));
            if let Some(note) = target::unpassed_variable_note(global, failure) {
                text.push_str("\n  note: ");
                text.push_str(&note);
            }
            writeln!(err, "mcpwire: {text}")
        }
    };
    ExitCode::from(failure.exit() as u8)
}
