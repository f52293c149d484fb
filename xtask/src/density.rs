//! The density rows of `cargo xtask bench`: what an idle session costs
//! mcpwire and rmcp in one process, measured by `mcpwire-bench --density`
//! in processes of their own, in the same run. Written between the
//! `density` markers of `docs/benchmarks.md`.
//!
//! Memory, descriptor and task counts barely move from run to run; the
//! times (to open all sessions) are those of a small shared machine.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::report::{median, run_one, write_between};

const BEGIN: &str = "<!-- density:begin (written by `cargo xtask bench`) -->";
const END: &str = "<!-- density:end -->";

/// One row of the table.
struct Row {
    shape: &'static str,
    /// Sessions in a full run (a tenth with `--quick`).
    sessions: usize,
    /// What the row says.
    what: &'static str,
    /// Arguments given to mcpwire's run only.
    mcpwire_args: &'static [&'static str],
}

/// The rows, in table order.
const ROWS: [Row; 5] = [
    Row {
        shape: "idle-http-shared",
        sessions: 1000,
        what: "Streamable HTTP, one shared HTTP client",
        mcpwire_args: &[],
    },
    Row {
        shape: "idle-http-per-session",
        sessions: 1000,
        what: "Streamable HTTP, one HTTP client per session",
        mcpwire_args: &[],
    },
    Row {
        shape: "idle-http-per-session",
        sessions: 1000,
        what: "the same, mcpwire's idle connection closed (`pool_idle_timeout` 100 ms), \
               as rmcp holds none",
        mcpwire_args: &["--pool-idle-ms", "100"],
    },
    Row {
        shape: "idle-stdio",
        sessions: 100,
        what: "stdio server (spawned in parallel)",
        mcpwire_args: &[],
    },
    Row {
        shape: "connect-sequential",
        sessions: 300,
        what: "connect + first call + close, one after another",
        mcpwire_args: &[],
    },
];

const CLIENTS: [&str; 2] = ["mcpwire", "rmcp"];

/// Runs of each row and client in a full run (their medians are shown);
/// clients alternate, so a change in the machine's state hits both.
const ROUNDS: usize = 3;

/// Runs every row for both clients; prints the table and, with `write`,
/// puts it into `docs/benchmarks.md`.
pub(crate) fn density(
    root: &Path,
    bench_bin: &Path,
    server_bin: &Path,
    quick: bool,
    write: bool,
) -> Result<(), String> {
    let rounds = if quick { 1 } else { ROUNDS };
    let mut results: Vec<(usize, &str, Value)> = Vec::new();
    for (i, row) in ROWS.iter().enumerate() {
        let n = if quick {
            row.sessions / 10
        } else {
            row.sessions
        };
        for round in 1..=rounds {
            for client in CLIENTS {
                let mut cmd = Command::new(bench_bin);
                cmd.args(["--client", client, "--density", row.shape])
                    .args(["--sessions", &n.to_string()])
                    .arg("--server")
                    .arg(server_bin);
                if client == "mcpwire" {
                    cmd.args(row.mcpwire_args);
                }
                eprint!("density {} x{n} {client} ({round}/{rounds}): ", row.shape);
                match run_one(&mut cmd) {
                    Ok(v) => {
                        eprintln!("{v}");
                        results.push((i, client, v));
                    }
                    Err(e) => eprintln!("FAILED: {e}"),
                }
            }
        }
    }
    let table = table(&results, quick);
    println!("\n{table}");
    if write {
        let section = format!(
            "{BEGIN}\n## Density: idle sessions in one process\n\n\
             Produced by `cargo xtask bench`{} (`mcpwire-bench --density`): each client \
             opens the sessions against `mcpwire-bench-server`, calls `echo` once on each, \
             leaves them idle for 500 ms, and reads its own `VmRSS`, open descriptors and \
             live tokio tasks; the growth since before the first session (after a tenth of \
             the sessions, at most 10, were opened the same way and closed, so what a client \
             pays once is not counted), divided by the number of sessions. The server counts \
             the TCP connections it accepts while the sessions open and call. One process per \
             client, row and run; the clients alternate, and each figure is the median of \
             {rounds} run(s).\n\n\
             {table}{END}\n",
            if quick { " --quick" } else { "" }
        );
        write_between(&root.join("docs/benchmarks.md"), BEGIN, END, &section)?;
    }
    Ok(())
}

fn table(results: &[(usize, &str, Value)], quick: bool) -> String {
    let mut t = String::from(
        "| row | sessions | RSS/session mcpwire | RSS/session rmcp | mcpwire / rmcp \
         | fds, tasks/session mcpwire | fds, tasks/session rmcp \
         | TCP connections/session mcpwire | rmcp | time to open all mcpwire | rmcp \
         | time mcpwire / rmcp |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for (i, row) in ROWS.iter().enumerate() {
        let runs = |client: &str| -> Vec<Value> {
            results
                .iter()
                .filter(|(r, c, _)| *r == i && *c == client)
                .map(|(_, _, v)| v.clone())
                .collect()
        };
        let (m, r) = (runs("mcpwire"), runs("rmcp"));
        let med = |v: &[Value], key: &str| median(Some(v), key);
        let rss = |v: &[Value]| {
            med(v, "rss_kib_per_session").map_or("-".into(), |x| format!("{x:.1} KiB"))
        };
        let ratio = match (
            med(&m, "rss_kib_per_session"),
            med(&r, "rss_kib_per_session"),
        ) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".into(),
        };
        let counts = |v: &[Value]| match (med(v, "fds_per_session"), med(v, "tasks_per_session")) {
            (Some(f), Some(t)) => format!("{f:.1}, {t:.1}"),
            _ => "-".into(),
        };
        let conns =
            |v: &[Value]| med(v, "connects_per_session").map_or("-".into(), |c| format!("{c:.2}"));
        let secs =
            |v: &[Value]| med(v, "secs").map_or("-".into(), |s| format!("{:.0} ms", s * 1e3));
        let time_ratio = match (med(&m, "secs"), med(&r, "secs")) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".into(),
        };
        let n = if quick {
            row.sessions / 10
        } else {
            row.sessions
        };
        let _ = writeln!(
            t,
            "| {} (`{}`) | {n} | {} | {} | {ratio} | {} | {} | {} | {} | {} | {} | {time_ratio} |",
            row.what,
            row.shape,
            rss(&m),
            rss(&r),
            counts(&m),
            counts(&r),
            conns(&m),
            conns(&r),
            secs(&m),
            secs(&r)
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_shows_the_medians_of_its_runs_and_their_ratio() {
        let run = |rss: f64, conns: f64| {
            json!({"rss_kib_per_session": rss, "fds_per_session": 0.0,
                   "tasks_per_session": 2.0, "connects_per_session": conns, "secs": 0.25})
        };
        let results = vec![
            (0, "mcpwire", run(10.0, 0.0)),
            (0, "rmcp", run(40.0, 3.0)),
            (0, "mcpwire", run(30.0, 0.0)),
            (0, "rmcp", run(50.0, 3.0)),
            (0, "mcpwire", run(20.0, 0.0)),
            (0, "rmcp", run(40.0, 3.0)),
        ];
        let table = table(&results, false);
        let line = table
            .lines()
            .find(|l| l.contains("`idle-http-shared`"))
            .expect("the shared row");
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[3], "20.0 KiB", "{line}");
        assert_eq!(cells[4], "40.0 KiB", "{line}");
        assert_eq!(cells[5], "0.50x", "{line}");
        assert_eq!(cells[8], "0.00", "{line}");
        assert_eq!(cells[9], "3.00", "{line}");
        assert_eq!(cells[12], "1.00x", "{line}");
        // Rows without runs show dashes, not figures.
        let stdio = table.lines().find(|l| l.contains("`idle-stdio`")).unwrap();
        assert!(stdio.contains("| - | - | - |"), "{stdio}");
    }
}
