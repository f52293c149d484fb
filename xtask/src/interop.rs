//! `cargo xtask interop`: our client against real MCP servers written by
//! others, one case per server and mode.
//!
//! The servers are the ones `cargo xtask servers` installs and the ones kept
//! in the repository (see [`cases`]): every server mode of each official SDK
//! this machine can install (the Python SDK 1.x and 2.x, fastmcp, the
//! TypeScript SDK 1.x and the 2.x `@modelcontextprotocol/server`, rmcp),
//! the published npm and PyPI servers, fastmcp requiring authorization, and
//! a fleet. Each case runs the `mcpwire-conformance interop` binary with the
//! client's default settings: connect (for HTTP, from the URL alone through
//! the automatic fallback), list the tools and call one with a progress
//! handler, read a resource and get a prompt where the server offers them,
//! close; it prints the era and protocol version the client chose. The
//! `fleet` case writes a Claude Desktop style configuration file and runs
//! the client's `fleet` mode: the manager loads it, starts every server at
//! once, lists the aggregated tools and calls one of each server by its
//! public name.
//!
//! Then the cases that need no authorization run once more through the
//! `mcpwire` command, with and without `-v` (see [`cli`]). Each part prints
//! one line per case, `N passed, M failed` and its elapsed time; the run
//! writes `docs/interop.md` when every case ran, and fails on any failure.
//!
//! Cases run two at a time (`--jobs N` to change it): each has its own
//! free port, log files and process groups, so they share nothing. HTTP
//! servers bind 127.0.0.1 on a free port (the npm server, which listens on
//! every interface and has no host option, through a `node --require`
//! preload) and run in their own process group, which is stopped at the end
//! of the case whatever happened. Stdio servers are spawned and stopped by
//! the client itself; the client runs in its own process group too, so a
//! case that overruns its time is stopped with everything it started.

mod cases;
mod process;
mod cli;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::cmd::build_programs;
use crate::servers;
use cases::{Case, Transport, path_str};
use process::{Group, last_line, start_http};

const CLIENT_PACKAGE: &str = "mcpwire-conformance";
const RMCP_PACKAGE: &str = "mcpwire-interop-rmcp-server";
/// What `docs/interop.md` says above the tables this run writes.
const DOC_HEAD: &str = include_str!("interop/doc.md");
/// How long one case may take, client and server start included.
const CASE_WALL_TIME: Duration = Duration::from_secs(120);

struct Outcome {
    name: String,
    result: Result<String, String>,
    elapsed: Duration,
}

/// Runs every case (or those whose `server/mode` contains the text given
/// with `--only`), `--jobs N` at a time; `--no-cli` leaves out the runs of
/// the `mcpwire` command.
pub(crate) fn interop(root: &Path, args: &[String]) -> Result<(), String> {
    let started = Instant::now();
    let (mut only, mut jobs, mut with_cli) = (None, 2, true);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--only" => only = Some(it.next().ok_or("--only needs a text")?.clone()),
            "--jobs" => {
                jobs = it
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| *n > 0)
                    .ok_or("--jobs needs a number above 0")?;
            }
            "--no-cli" => with_cli = false,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    // Tests and this command find the servers the same way: where
    // MCPWIRE_SERVERS_DIR points, else installed under target/.
    let dir = match std::env::var_os(servers::DIR_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => servers::install(root)?,
    };
    let bin = build_programs(root)?;
    let client = bin.join(CLIENT_PACKAGE);
    let mcpwire = bin.join("mcpwire");
    let work = root.join("target").join("interop");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("logs")).map_err(|e| e.to_string())?;

    let all = cases::cases(root, &dir, &bin.join(RMCP_PACKAGE), &work)?;
    let chosen: Vec<&Case> = all
        .iter()
        .filter(|c| only.as_ref().is_none_or(|o| c.name().contains(o.as_str())))
        .collect();

    let client_started = Instant::now();
    let outcomes = parallel(&chosen, jobs, |case| run_case(&client, case, &work));
    let client_time = client_started.elapsed();
    let (passed, failed) = tally(&outcomes);
    println!(
        "client: {passed} passed, {failed} failed ({:.0} s)",
        client_time.as_secs_f64()
    );

    let cli_chosen: Vec<&Case> = chosen
        .iter()
        .copied()
        .filter(|c| with_cli && c.cli.is_some())
        .collect();
    let cli_started = Instant::now();
    let cli_outcomes = parallel(&cli_chosen, jobs, |case| cli::run(&mcpwire, case, &work));
    let cli_time = cli_started.elapsed();
    let (cli_passed, cli_failed) = tally(&cli_outcomes);
    if with_cli {
        println!(
            "mcpwire command: {cli_passed} passed, {cli_failed} failed ({:.0} s)",
            cli_time.as_secs_f64()
        );
    }

    let total = started.elapsed();
    if only.is_none() && with_cli {
        write_doc(root, &outcomes, &cli_outcomes, client_time, cli_time, jobs)?;
    }
    let (passed, failed) = (passed + cli_passed, failed + cli_failed);
    println!(
        "{passed} passed, {failed} failed in {:.0} s",
        total.as_secs_f64()
    );
    if failed == 0 {
        Ok(())
    } else {
        Err(format!(
            "{failed} interop case(s) failed (logs in {})",
            work.join("logs").display()
        ))
    }
}

fn tally(outcomes: &[Outcome]) -> (usize, usize) {
    let passed = outcomes.iter().filter(|o| o.result.is_ok()).count();
    (passed, outcomes.len() - passed)
}

/// Runs `f` on every case, `jobs` at a time, printing each outcome's line
/// as it ends; returns the outcomes in the cases' order.
fn parallel(
    cases: &[&Case],
    jobs: usize,
    f: impl Fn(&Case) -> Result<String, String> + Sync,
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Outcome>>> = Mutex::new(cases.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(cases.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let start = Instant::now();
                    let result = f(case);
                    let outcome = Outcome {
                        name: case.name(),
                        result,
                        elapsed: start.elapsed(),
                    };
                    println!("{}", line(&outcome));
                    if let Ok(mut done) = done.lock() {
                        done[i] = Some(outcome);
                    }
                }
            });
        }
    });
    done.into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// Runs one case: starts its HTTP server if it has one, runs the client,
/// stops everything. Returns the client's summary line or why it failed.
fn run_case(client: &Path, case: &Case, work: &Path) -> Result<String, String> {
    let log = work
        .join("logs")
        .join(format!("{}.log", cli::file_name(case)));
    let mut cmd = Command::new(client);
    // Kept alive until the client is done, then stopped with its group.
    let mut _server = None;
    match &case.how {
        Transport::Stdio { program, args, env } => {
            cmd.arg("interop").args(&case.client_args);
            for (k, v) in env {
                cmd.arg("--env").arg(format!("{k}={v}"));
            }
            cmd.arg("--stdio").arg(program).args(args);
        }
        Transport::Http { env, .. } => {
            let (server, url) = start_http(&case.how, &log)?;
            cmd.envs(env.iter().map(|(k, v)| (*k, v)));
            cmd.arg("interop")
                .args(&case.client_args)
                .arg("--url")
                .arg(url);
            _server = Some(server);
        }
        Transport::Fleet { stdio, http } => {
            let (server, url) = start_http(&http.1, &log)?;
            _server = Some(server);
            let mut servers = serde_json::Map::new();
            for (name, program, args) in stdio {
                servers.insert(
                    (*name).to_owned(),
                    serde_json::json!({"command": path_str(program)?, "args": args}),
                );
            }
            servers.insert(
                http.0.to_owned(),
                serde_json::json!({"type": "http", "url": url}),
            );
            let file = work.join("fleet.json");
            let text = serde_json::json!({ "mcpServers": servers }).to_string();
            std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
            cmd.arg("fleet")
                .arg("--config")
                .arg(&file)
                .args(&case.client_args);
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

/// The era and protocol version at the start of a client summary
/// (`era=modern 2026-07-28 ...`), and the rest.
fn split_era(summary: &str) -> (Option<(&str, &str)>, &str) {
    let Some(rest) = summary.strip_prefix("era=") else {
        return (None, summary);
    };
    let mut parts = rest.splitn(3, ' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(era), Some(version), rest) => (Some((era, version)), rest.unwrap_or_default()),
        _ => (None, summary),
    }
}

fn line(o: &Outcome) -> String {
    let (verdict, detail) = match &o.result {
        Ok(summary) => ("pass", summary.as_str()),
        Err(why) => ("FAIL", why.as_str()),
    };
    let (era, detail) = match split_era(detail) {
        (Some((era, version)), rest) => (format!("era={era} {version}"), rest),
        (None, detail) => (String::new(), detail),
    };
    format!(
        "{:32} {verdict:4} {era:24} {:5.1} s  {detail}",
        o.name,
        o.elapsed.as_secs_f64()
    )
}

fn write_doc(
    root: &Path,
    outcomes: &[Outcome],
    cli_outcomes: &[Outcome],
    client_time: Duration,
    cli_time: Duration,
    jobs: usize,
) -> Result<(), String> {
    let mut table = String::from(
        "| server/mode | verdict | era | protocol | what the client did | time |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for o in outcomes {
        let (verdict, detail) = match &o.result {
            Ok(summary) => ("pass", summary.as_str()),
            Err(why) => ("**FAIL**", why.as_str()),
        };
        let (era, version, detail) = match split_era(detail) {
            (Some((era, version)), rest) => (era, version, rest),
            (None, detail) => ("", "", detail),
        };
        table.push_str(&format!(
            "| {} | {verdict} | {era} | {version} | {} | {:.1} s |\n",
            o.name,
            detail.replace('|', "\\|"),
            o.elapsed.as_secs_f64()
        ));
    }
    let mut cli_table = String::from(
        "| server/mode | verdict | what the command did | time |\n| --- | --- | --- | --- |\n",
    );
    for o in cli_outcomes {
        let (verdict, detail) = match &o.result {
            Ok(summary) => ("pass", summary.as_str()),
            Err(why) => ("**FAIL**", why.as_str()),
        };
        cli_table.push_str(&format!(
            "| {} | {verdict} | {} | {:.1} s |\n",
            o.name,
            detail.replace('|', "\\|"),
            o.elapsed.as_secs_f64()
        ));
    }
    // Paths in the report relative to the workspace, whoever ran it where.
    let root_prefix = format!("{}/", root.display());
    let table = table.replace(&root_prefix, "");
    let cli_table = cli_table.replace(&root_prefix, "");
    let (passed, failed) = tally(outcomes);
    let (cli_passed, cli_failed) = tally(cli_outcomes);
    let doc = format!(
        "{}\n## The client\n\n{passed} passed, {failed} failed in {:.0} s ({jobs} at a time).\n\n\
         {table}\n## The `mcpwire` command\n\n{cli_passed} passed, {cli_failed} failed in {:.0} s \
         ({jobs} at a time).\n\n{cli_table}",
        DOC_HEAD.trim_end(),
        client_time.as_secs_f64(),
        cli_time.as_secs_f64()
    );
    let path = root.join("docs").join("interop.md");
    std::fs::write(&path, doc).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::split_era;

    #[test]
    fn the_era_is_split_off_a_client_summary() {
        let (era, rest) = split_era("era=legacy 2025-06-18 stdio: x; 2 tools");
        assert_eq!(era, Some(("legacy", "2025-06-18")));
        assert_eq!(rest, "stdio: x; 2 tools");
        let (era, rest) = split_era("4 servers, 41 tools");
        assert_eq!(era, None);
        assert_eq!(rest, "4 servers, 41 tools");
    }
}
