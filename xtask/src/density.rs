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

use crate::report::{run_one, write_between};

const BEGIN: &str = "<!-- density:begin (written by `cargo xtask bench`) -->";
const END: &str = "<!-- density:end -->";

/// The rows: shape, sessions (full run), what the row says.
const ROWS: [(&str, usize, &str); 4] = [
    (
        "idle-http-shared",
        1000,
        "Streamable HTTP, one shared HTTP client",
    ),
    (
        "idle-http-per-session",
        1000,
        "Streamable HTTP, one HTTP client per session",
    ),
    ("idle-stdio", 100, "stdio server (spawned in parallel)"),
    (
        "connect-sequential",
        300,
        "connect + first call + close, one after another",
    ),
];

const CLIENTS: [&str; 2] = ["mcpwire", "rmcp"];

/// Runs every row for both clients; prints the table and, with `write`,
/// puts it into `docs/benchmarks.md`.
pub(crate) fn density(
    root: &Path,
    bench_bin: &Path,
    server_bin: &Path,
    quick: bool,
    write: bool,
) -> Result<(), String> {
    let mut results: Vec<(usize, &str, Value)> = Vec::new();
    for (i, (shape, sessions, _)) in ROWS.iter().enumerate() {
        let n = if quick { sessions / 10 } else { *sessions };
        for client in CLIENTS {
            let mut cmd = Command::new(bench_bin);
            cmd.args(["--client", client, "--density", shape])
                .args(["--sessions", &n.to_string()])
                .arg("--server")
                .arg(server_bin);
            eprint!("density {shape} x{n} {client}: ");
            match run_one(&mut cmd) {
                Ok(v) => {
                    eprintln!("{v}");
                    results.push((i, client, v));
                }
                Err(e) => eprintln!("FAILED: {e}"),
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
             pays once is not counted), divided by the number of sessions. One process per client and row, in the same run.\n\n\
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
         | fds, tasks/session mcpwire | fds, tasks/session rmcp | time to open all mcpwire | rmcp |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for (i, (shape, sessions, what)) in ROWS.iter().enumerate() {
        let get = |client: &str| {
            results
                .iter()
                .find(|(r, c, _)| *r == i && *c == client)
                .map(|(_, _, v)| v)
        };
        let num = |v: Option<&Value>, key: &str| v.and_then(|v| v[key].as_f64());
        let (m, r) = (get("mcpwire"), get("rmcp"));
        let rss = |v| num(v, "rss_kib_per_session").map_or("-".into(), |x| format!("{x:.1} KiB"));
        let ratio = match (num(m, "rss_kib_per_session"), num(r, "rss_kib_per_session")) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".into(),
        };
        let counts = |v| match (num(v, "fds_per_session"), num(v, "tasks_per_session")) {
            (Some(f), Some(t)) => format!("{f:.1}, {t:.1}"),
            _ => "-".into(),
        };
        let secs = |v| num(v, "secs").map_or("-".into(), |s| format!("{:.0} ms", s * 1e3));
        let n = if quick { sessions / 10 } else { *sessions };
        let _ = writeln!(
            t,
            "| {what} (`{shape}`) | {n} | {} | {} | {ratio} | {} | {} | {} | {} |",
            rss(m),
            rss(r),
            counts(m),
            counts(r),
            secs(m),
            secs(r)
        );
    }
    t
}
