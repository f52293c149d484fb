//! `cargo xtask bench --solo`: mcpwire against rmcp, each from a binary
//! that links that client alone.
//!
//! `mcpwire-bench` links every client it compares, so a run maps and keeps
//! resident pages of code it never calls (the other client's, laid out
//! between its own), and its peak RSS says as much about the harness as
//! about the client. Here `mcpwire-bench` is built three times more, with
//! only its `mcpwire-client`, only its `rmcp-tls` or only its `rmcp-client`
//! feature (rmcp with and without TLS): the same workload code, one client
//! per binary, as an application that talks MCP through one of them would
//! be. They run alternating (A B C A B C ...), each client
//! and workload in a process of its own, and the table shows the medians,
//! peak RSS first. It writes its section of `docs/benchmarks.md` (between
//! the `bench-solo` markers) and leaves the main table alone.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::cmd::{cargo, run, target_dir};
use crate::report::{
    build_harness, fmt, harness, machine, measured, median, metrics, ratio, write_between,
};

const BEGIN: &str = "<!-- bench-solo:begin (written by `cargo xtask bench --solo`) -->";
const END: &str = "<!-- bench-solo:end -->";
/// The binaries: a name, the client it runs and the feature that builds
/// it alone. rmcp twice: with TLS (as the main table has it, and as
/// mcpwire always is) and without, the least an rmcp binary can link.
const SIDES: [(&str, &str, &str); 3] = [
    ("mcpwire", "mcpwire", "mcpwire-client"),
    ("rmcp", "rmcp", "rmcp-tls"),
    ("rmcp-no-tls", "rmcp", "rmcp-client"),
];

/// What to run: the transports and workloads of the main form (W5 is
/// mcpwire's alone and is skipped).
pub(crate) struct Solo<'a> {
    pub(crate) transports: &'a [String],
    pub(crate) workloads: &'a [String],
    pub(crate) rounds: usize,
    pub(crate) quick: bool,
    pub(crate) write: bool,
}

/// Builds the one-client binaries (then the usual one again, so
/// `target/release/mcpwire-bench` stays the one that links both), runs
/// them, prints the table and writes it.
pub(crate) fn solo(root: &Path, what: &Solo<'_>) -> Result<(), String> {
    let release = target_dir(root).join("release");
    let dir = release.join("solo");
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut bins: Vec<(&str, PathBuf)> = Vec::new();
    for (name, client, feature) in SIDES {
        run(cargo()
            .args([
                "build",
                "--release",
                "-p",
                "mcpwire-bench",
                "--bin",
                "mcpwire-bench",
            ])
            .args(["--no-default-features", "--features", feature]))?;
        let bin = dir.join(format!("mcpwire-bench-{name}"));
        fs::copy(release.join("mcpwire-bench"), &bin)
            .map_err(|e| format!("cannot copy the {name} binary: {e}"))?;
        bins.push((client, bin));
    }
    build_harness(&[])?;
    let server = release.join("mcpwire-bench-server");
    let started = Instant::now();
    let mut cells: Vec<(String, String, [Vec<Value>; 3])> = Vec::new();
    for transport in what.transports {
        for workload in what.workloads.iter().filter(|w| *w != "w5") {
            let mut runs: [Vec<Value>; 3] = Default::default();
            for round in 0..what.rounds {
                for (side, (name, bin)) in bins.iter().enumerate() {
                    let mut cmd = harness(bin, SIDES[side].1, transport, workload);
                    cmd.arg("--server").arg(&server);
                    if what.quick {
                        cmd.arg("--quick");
                    }
                    let label = format!("round {} {transport} {workload} {name} alone", round + 1);
                    if let Some(v) = measured(&mut cmd, &label, started) {
                        runs[side].push(v);
                    }
                }
            }
            cells.push((transport.clone(), workload.clone(), runs));
        }
    }
    let machine = machine(root);
    let table = table(&cells);
    println!("\n{machine}\n{table}");
    if what.write {
        let section = format!(
            "{BEGIN}\n## One client per binary\n\n\
             Produced by `cargo xtask bench --solo{}` ({} round(s), the binaries alternating; \
             medians shown). The same workloads and server as the table above, but each \
             client runs from a build of `mcpwire-bench` that links it alone (its \
             `mcpwire-client` or `rmcp-tls` feature): the peak RSS of an application \
             that talks MCP through one client, with no code of the other resident. \
             mcpwire is built with its `stdio` and `http` features; rmcp with TLS (as the \
             table above has it), and again without (`rmcp-client`: reqwest with no TLS, \
             the least an rmcp binary links, though it cannot reach an `https` server).\n\n\
             {machine}\n\n{table}{END}\n",
            if what.quick { " --quick" } else { "" },
            what.rounds,
        );
        let path = root.join("docs/benchmarks.md");
        write_between(&path, BEGIN, END, &section)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn table(cells: &[(String, String, [Vec<Value>; 3])]) -> String {
    let mut t = String::from(
        "| transport | workload | metric | mcpwire alone | rmcp alone | rmcp alone, no TLS \
         | mcpwire / rmcp | mcpwire / rmcp no TLS |\n\
         |---|---|---|---:|---:|---:|---:|---:|\n",
    );
    for (transport, workload, runs) in cells {
        // Memory first, what this table is for: peak RSS, then heap + stacks.
        let mut shown = metrics(workload).to_vec();
        shown.sort_by_key(|(key, ..)| match *key {
            "peak_rss_kib" => 0,
            "heap_stacks_kib" => 1,
            _ => 2,
        });
        for (key, label, scale, _) in shown {
            let m = |side: usize| median(Some(&runs[side]), key).map(|x| x * scale);
            let (a, b, c) = (m(0), m(1), m(2));
            let _ = writeln!(
                t,
                "| {transport} | {workload} | {label} | {} | {} | {} | {} | {} |",
                fmt(a),
                fmt(b),
                fmt(c),
                ratio(a, b),
                ratio(a, c)
            );
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table_puts_memory_first_and_divides_mcpwire_by_rmcp() {
        let runs = |kib: [f64; 3], ops: f64| {
            kib.iter()
                .map(|k| {
                    json!({"peak_rss_kib": k, "heap_stacks_kib": k / 4.0, "ops_per_s": ops,
                        "cpu_us_per_op": 1.0})
                })
                .collect::<Vec<_>>()
        };
        let cells = vec![(
            "http".to_string(),
            "w3".to_string(),
            [
                runs([2048.0, 1024.0, 4096.0], 10.0),
                runs([1024.0, 512.0, 9999.0], 5.0),
                runs([512.0, 4096.0, 256.0], 20.0),
            ],
        )];
        let t = table(&cells);
        let rows: Vec<&str> = t.lines().skip(2).collect();
        assert_eq!(rows.len(), 4, "{t}");
        // Medians: 2 MiB against 1 MiB.
        assert_eq!(
            rows[0],
            "| http | w3 | peak RSS (MiB) | 2.00 | 1.00 | 0.50 | 2.00x | 4.00x |"
        );
        assert_eq!(
            rows[1],
            "| http | w3 | heap + stacks after the calls (MiB) | 0.50 | 0.25 | 0.12 | 2.00x | 4.00x |"
        );
        assert!(
            rows[2].starts_with("| http | w3 | calls/s | 10.0 | 5.00 | 20.0 | 2.00x | 0.50x"),
            "{t}"
        );
    }
}
