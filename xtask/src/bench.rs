//! `cargo xtask bench [--quick] [--transport T]... [--workload W]...
//! [--rounds N] [--no-write] [--density-only | --serve | --solo]`: mcpwire
//! against rmcp and a raw baseline, then the density rows (`density.rs`);
//! or, with `--serve`, only the rows of `mcpwire serve` (`bench_serve.rs`);
//! or, with `--solo`, mcpwire and rmcp each from a binary that links it
//! alone (`bench_solo.rs`).
//!
//! Builds `mcpwire-bench` and `mcpwire-bench-server` in release mode, then
//! runs every (transport, workload) cell: several rounds, and in each round
//! the clients one after the other (A B C A B C ...), each client and
//! workload in a process of its own so its peak RSS is its own. Prints the
//! medians and the ratios, the rows where mcpwire's median is behind rmcp's
//! with both clients' rounds (`behind.rs`), checks the targets of issue 7,
//! and writes the result between the `bench` markers of
//! `docs/benchmarks.md`, leaving the rest of that file (the codec section,
//! the optimisation log) alone.
//!
//! It is a benchmark, not a test: CI builds it and never times it.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

use crate::behind::{Cell, behind_rows, behind_section};
use crate::cmd::target_dir;
use crate::report::{
    build_harness, fmt, harness, machine, measured, median, metrics, ratio, run_one, write_between,
};

/// `mcpwire` calls as the README shows (`call_tool(name, &json!(..))`);
/// `mcpwire-struct` passes the same arguments as a borrowed struct.
/// `mcpwire-manager` routes the same calls through the manager (W2, W3), and
/// starts W5's 20 servers at once (`mcpwire` starts them one by one).
const CLIENTS: [&str; 7] = [
    "mcpwire",
    "mcpwire-struct",
    "mcpwire-manager",
    "mcpwire-otel",
    "rmcp",
    "raw",
    "tokio",
];
const TRANSPORTS: [&str; 3] = ["stdio", "http", "http-sse"];
const WORKLOADS: [&str; 7] = ["w1", "w2", "w2-task", "w3", "w4-1m", "w4-10m", "w5"];
const BEGIN: &str = "<!-- bench:begin (written by `cargo xtask bench`) -->";
const END: &str = "<!-- bench:end -->";

struct Options {
    quick: bool,
    /// Only the density rows (see `density.rs`).
    density_only: bool,
    /// Only the rows of `mcpwire serve` (see `bench_serve.rs`).
    serve: bool,
    /// Only mcpwire and rmcp, each from a binary of its own (see
    /// `bench_solo.rs`).
    solo: bool,
    transports: Vec<String>,
    workloads: Vec<String>,
    rounds: usize,
    write: bool,
}

/// What `cargo xtask bench --help` prints.
const USAGE: &str = "\
usage: cargo xtask bench [--quick] [--transport stdio|http|http-sse]...
         [--workload w1|w2|w2-task|w3|w4-1m|w4-10m|w5]... [--rounds N] [--no-write]
         [--density-only | --serve | --solo]

  (default)       every transport and workload: mcpwire, rmcp, raw; then the
                  density rows. Writes docs/benchmarks.md.
  --density-only  the density rows alone (idle sessions in one process)
  --serve         the rows of `mcpwire serve` alone (issue 31; Unix; needs node
                  and `cargo xtask servers`): 20 `mcpwire call`s starting
                  server-everything through npx against 20 through
                  `serve --socket`, then one `serve --http` process in front of
                  mcpwire-bench-server: calls/s through it against direct,
                  sessions it holds, its memory per idle session
  --solo          mcpwire and rmcp alone, each from a build of the harness that
                  links that client only: the table of one client per binary
  --rounds N      rounds, the sides alternating in each [default: 3; --quick: 1]
  --quick         a fifth of the work, one round
  --no-write      print the tables only
";

/// `Err(None)`: `--help` was asked for.
fn parse(args: &[String]) -> Result<Options, Option<String>> {
    let usage = || Some(USAGE.trim_end().to_string());
    let mut o = Options {
        quick: false,
        density_only: false,
        serve: false,
        solo: false,
        transports: Vec::new(),
        workloads: Vec::new(),
        rounds: 0,
        write: true,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => o.quick = true,
            "--density-only" => o.density_only = true,
            "--serve" => o.serve = true,
            "--solo" => o.solo = true,
            "--help" | "-h" => return Err(None),
            "--no-write" => o.write = false,
            "--transport" => {
                let t = args.next().ok_or_else(usage)?;
                for t in t.split(',') {
                    if !TRANSPORTS.contains(&t) {
                        return Err(usage());
                    }
                    o.transports.push(t.into());
                }
            }
            "--workload" => {
                let w = args.next().ok_or_else(usage)?;
                for w in w.split(',') {
                    if !WORKLOADS.contains(&w) {
                        return Err(usage());
                    }
                    o.workloads.push(w.into());
                }
            }
            "--rounds" => {
                o.rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(usage)?;
            }
            _ => return Err(usage()),
        }
    }
    if [o.serve, o.density_only, o.solo]
        .iter()
        .filter(|&&m| m)
        .count()
        > 1
    {
        return Err(usage());
    }
    if o.transports.is_empty() {
        o.transports = TRANSPORTS.iter().map(|t| t.to_string()).collect();
    }
    if o.workloads.is_empty() {
        o.workloads = WORKLOADS.iter().map(|w| w.to_string()).collect();
    }
    if o.rounds == 0 {
        o.rounds = if o.quick { 1 } else { 3 };
    }
    Ok(o)
}

/// Runs the benchmark.
pub(crate) fn bench(root: &Path, args: &[String]) -> Result<(), String> {
    let o = match parse(args) {
        Ok(o) => o,
        Err(None) => {
            println!("{USAGE}");
            return Ok(());
        }
        Err(Some(usage)) => return Err(usage),
    };
    if o.serve {
        let release = target_dir(root).join("release");
        return crate::bench_serve::serve(root, &release, o.rounds, o.quick, o.write);
    }
    if o.solo {
        let what = crate::bench_solo::Solo {
            transports: &o.transports,
            workloads: &o.workloads,
            rounds: o.rounds,
            quick: o.quick,
            write: o.write,
        };
        return crate::bench_solo::solo(root, &what);
    }
    build_harness(&["--example", "lean_w4"])?;
    let bin = target_dir(root).join("release");
    let bench_bin = bin.join("mcpwire-bench");
    let server_bin = bin.join("mcpwire-bench-server");
    let lean_bin = bin.join("examples").join("lean_w4");
    if o.density_only {
        return crate::density::density(root, &bench_bin, &server_bin, o.quick, o.write);
    }
    let started = Instant::now();
    let mut cells: Vec<((String, String), Cell)> = Vec::new();
    for transport in &o.transports {
        for workload in &o.workloads {
            let mut cell = Cell::new();
            for round in 0..o.rounds {
                for client in CLIENTS {
                    if !runs(client, transport, workload) {
                        continue;
                    }
                    let mut cmd = harness(&bench_bin, client, transport, workload);
                    cmd.arg("--server").arg(&server_bin);
                    if o.quick {
                        cmd.arg("--quick");
                    }
                    let label = format!("round {} {transport} {workload} {client}", round + 1);
                    if let Some(v) = measured(&mut cmd, &label, started) {
                        cell.entry(client).or_default().push(v);
                    }
                }
            }
            cells.push(((transport.clone(), workload.clone()), cell));
        }
    }
    let lean =
        if o.transports.iter().any(|t| t == "stdio") && o.workloads.iter().any(|w| w == "w4-10m") {
            lean_runs(&lean_bin, &server_bin, o.rounds, o.quick)
        } else {
            Vec::new()
        };
    let machine = machine(root);
    let table = table(&cells);
    let behind = behind_section(&behind_rows(&cells));
    let targets = targets(&cells, &lean);
    let fleet = fleet_table(&cells);
    let observed = observed_table(&cells);
    println!("\n{machine}\n{table}\n{behind}\n{targets}\n{fleet}\n{observed}");
    if o.write {
        let command = format!("cargo xtask bench {}", args.join(" "));
        let tables = format!("{table}\n{behind}");
        let mut section = section(command.trim(), o.rounds, &machine, &tables, &targets);
        section.insert_str(
            section.len() - END.len() - 1,
            &format!("\n{fleet}\n{observed}"),
        );
        let path = root.join("docs/benchmarks.md");
        write_section(&path, &section)?;
        eprintln!("wrote {}", path.display());
    }
    crate::density::density(root, &bench_bin, &server_bin, o.quick, o.write)
}

/// The stdio W4 10 MiB echo in a process that links mcpwire alone
/// (`crates/bench/examples/lean_w4.rs`), `rounds` times.
fn lean_runs(lean_bin: &Path, server_bin: &Path, rounds: usize, quick: bool) -> Vec<Value> {
    let mut runs = Vec::new();
    for round in 0..rounds {
        let mut cmd = Command::new(lean_bin);
        cmd.arg(server_bin).arg(if quick { "1" } else { "3" });
        eprint!("round {} stdio w4-10m mcpwire alone (lean_w4): ", round + 1);
        match run_one(&mut cmd) {
            Ok(v) => {
                eprintln!("peak {} KiB", v["peak_rss_kib"]);
                runs.push(v);
            }
            Err(e) => eprintln!("FAILED: {e}"),
        }
    }
    runs
}

/// Whether `client` takes part in the cell: the tokio floor is measured for
/// stdio's sequential calls only, where it explains the latency; the struct
/// arguments only where calls are made (not W1).
fn runs(client: &str, transport: &str, workload: &str) -> bool {
    if workload == "w5" {
        return transport == "stdio" && matches!(client, "mcpwire" | "mcpwire-manager");
    }
    match client {
        "mcpwire-manager" | "mcpwire-otel" => matches!(workload, "w2" | "w2-task" | "w3"),
        "tokio" => transport == "stdio" && workload.starts_with("w2"),
        "mcpwire-struct" => workload != "w1",
        _ => true,
    }
}

fn table(cells: &[((String, String), Cell)]) -> String {
    let mut t = String::from(
        "| transport | workload | metric | mcpwire | mcpwire, struct args | rmcp | raw | tokio floor | mcpwire / rmcp | struct args / rmcp | mcpwire / raw |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for ((transport, workload), cell) in cells {
        if workload == "w5" {
            continue;
        }
        for (key, label, scale, _) in metrics(workload) {
            let m = |c: &str| median(cell.get(c).map(Vec::as_slice), key).map(|x| x * scale);
            let (a, s, b, c) = (m("mcpwire"), m("mcpwire-struct"), m("rmcp"), m("raw"));
            let blank_if_none = |x: Option<f64>| match x {
                None => String::new(),
                x => fmt(x),
            };
            let structs = blank_if_none(s);
            let struct_ratio = match s {
                None => String::new(),
                s => ratio(s, b),
            };
            let floor = blank_if_none(m("tokio"));
            let _ = writeln!(
                t,
                "| {transport} | {workload} | {label} | {} | {structs} | {} | {} | {floor} | {} | {struct_ratio} | {} |",
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

/// The targets of issue 7, checked against the medians.
fn targets(cells: &[((String, String), Cell)], lean: &[Value]) -> String {
    let get = |transport: &str, workload: &str, client: &str, key: &str| {
        cells
            .iter()
            .find(|((t, w), _)| t == transport && w == workload)
            .and_then(|(_, cell)| median(cell.get(client).map(Vec::as_slice), key))
    };
    let mut out = String::from("| target | measured | met |\n|---|---|---|\n");
    let mut check = |name: &str, value: Option<f64>, unit: &str, ok: &dyn Fn(f64) -> bool| {
        let (measured, met) = match value {
            Some(v) => (
                format!("{v:.2}{unit}"),
                if ok(v) { "yes" } else { "**no**" },
            ),
            None => ("not measured".to_string(), "n/a"),
        };
        let _ = writeln!(out, "| {name} | {measured} | {met} |");
    };
    // mcpwire's `metric` over `against`'s, within `bound` (an upper bound
    // when `at_most`, a lower one otherwise).
    struct Ratio {
        name: String,
        transport: &'static str,
        workload: &'static str,
        metric: &'static str,
        against: &'static str,
        at_most: bool,
        bound: f64,
    }
    let ratio = |name: String, transport, workload, metric, against, at_most, bound| Ratio {
        name,
        transport,
        workload,
        metric,
        against,
        at_most,
        bound,
    };
    let mut ratios = vec![
        ratio(
            "stdio W2 p50 <= 1.5x raw".into(),
            "stdio",
            "w2",
            "p50_us",
            "raw",
            true,
            1.5,
        ),
        ratio(
            "stdio W2 p50 <= 1.5x raw, calls from a task".into(),
            "stdio",
            "w2-task",
            "p50_us",
            "raw",
            true,
            1.5,
        ),
        ratio(
            "stdio W2 client CPU per call <= 0.5x rmcp".into(),
            "stdio",
            "w2",
            "cpu_us_per_op",
            "rmcp",
            true,
            0.5,
        ),
        ratio(
            "stdio W3 >= 2x rmcp".into(),
            "stdio",
            "w3",
            "ops_per_s",
            "rmcp",
            false,
            2.0,
        ),
        ratio(
            "stdio W3 >= 0.5x raw".into(),
            "stdio",
            "w3",
            "ops_per_s",
            "raw",
            false,
            0.5,
        ),
        ratio(
            "stdio W4 10 MiB >= 1.3x rmcp MB/s".into(),
            "stdio",
            "w4-10m",
            "mb_per_s",
            "rmcp",
            false,
            1.3,
        ),
    ];
    for t in ["http", "http-sse"] {
        ratios.push(ratio(
            format!("{t} W2 >= 3x rmcp"),
            t,
            "w2",
            "ops_per_s",
            "rmcp",
            false,
            3.0,
        ));
        ratios.push(ratio(
            format!("{t} W3 >= 5x rmcp"),
            t,
            "w3",
            "ops_per_s",
            "rmcp",
            false,
            5.0,
        ));
        ratios.push(ratio(
            format!("{t} W3 >= 0.4x raw"),
            t,
            "w3",
            "ops_per_s",
            "raw",
            false,
            0.4,
        ));
    }
    for t in TRANSPORTS {
        ratios.push(ratio(
            format!("{t} W1 no slower than rmcp"),
            t,
            "w1",
            "p50_us",
            "rmcp",
            true,
            1.0,
        ));
    }

    let value_of = |r: &Ratio| {
        let base = get(r.transport, r.workload, r.against, r.metric).filter(|b| *b > 0.0);
        Some(get(r.transport, r.workload, "mcpwire", r.metric)? / base?)
    };
    let within = |r: &Ratio, v: f64| {
        if r.at_most {
            v <= r.bound
        } else {
            v >= r.bound
        }
    };
    // The one absolute target stands after the stdio ratios.
    let (stdio, rest) = ratios.split_at(6);
    for r in stdio {
        check(&r.name, value_of(r), &format!("x {}", r.against), &|v| {
            within(r, v)
        });
    }
    // Measured in a process that holds mcpwire alone: the bench binary's
    // own code (both clients) is most of its resident baseline.
    check(
        "stdio W4 10 MiB peak RSS <= 40 MiB (a process linking mcpwire alone: `lean_w4`)",
        median(Some(lean), "peak_rss_kib").map(|k| k / 1024.0),
        " MiB",
        &|m| m <= 40.0,
    );
    for r in rest {
        check(&r.name, value_of(r), &format!("x {}", r.against), &|v| {
            within(r, v)
        });
    }
    out
}

/// The manager's rows (issue 14): its routing overhead per call over a
/// direct `Client` call, and 20 stdio servers to all ready, at once against
/// one by one; then its targets.
fn fleet_table(cells: &[((String, String), Cell)]) -> String {
    let get = |transport: &str, workload: &str, client: &str, key: &str| {
        cells
            .iter()
            .find(|((t, w), _)| t == transport && w == workload)
            .and_then(|(_, cell)| median(cell.get(client).map(Vec::as_slice), key))
    };
    let mut t = String::from(
        "### The manager (issue 14)\n\n\
         Routing: the same echo calls through a `Manager` holding the one server, by public \
         name (`bench__echo`), against the direct `Client` call of the `mcpwire` column. \
         W5: 20 `mcpwire-bench-server` processes over stdio until every one is ready and its \
         tools are listed: `connect_all` (all at once) against `connect_stdio` and \
         `list_all_tools` one after the other.\n\n\
         | transport | workload | metric | direct Client | through the manager | manager / direct |\n\
         |---|---|---|---:|---:|---:|\n",
    );
    let mut overheads = Vec::new();
    for ((transport, workload), _) in cells {
        let rows: &[(&str, &str, f64)] = match workload.as_str() {
            "w2" | "w2-task" => &[
                ("p50_us", "p50 (us)", 1.0),
                ("cpu_us_per_op", "CPU per call (us)", 1.0),
            ],
            "w3" => &[("ops_per_s", "calls/s", 1.0)],
            "w5" => &[(
                "p50_us",
                "20 servers ready p50 (ms), one by one / at once",
                1e-3,
            )],
            _ => continue,
        };
        for (key, label, scale) in rows {
            let direct = get(transport, workload, "mcpwire", key).map(|x| x * scale);
            let managed = get(transport, workload, "mcpwire-manager", key).map(|x| x * scale);
            if managed.is_none() {
                continue;
            }
            let _ = writeln!(
                t,
                "| {transport} | {workload} | {label} | {} | {} | {} |",
                fmt(direct),
                fmt(managed),
                ratio(managed, direct)
            );
            if workload == "w2" && *key == "p50_us" {
                overheads.push((transport.clone(), managed.zip(direct).map(|(m, d)| m / d)));
            }
        }
    }
    t.push_str("\n| target | measured | met |\n|---|---|---|\n");
    for (transport, r) in overheads {
        let (measured, met) = match r {
            Some(r) => (
                format!("{:+.1}%", (r - 1.0) * 100.0),
                if r <= 1.05 { "yes" } else { "**no**" },
            ),
            None => ("not measured".into(), "n/a"),
        };
        let _ = writeln!(
            t,
            "| {transport} W2 p50 routing overhead < 5% | {measured} | {met} |"
        );
    }
    let serial = get("stdio", "w5", "mcpwire", "p50_us");
    let parallel = get("stdio", "w5", "mcpwire-manager", "p50_us");
    if let (Some(s), Some(p)) = (serial, parallel) {
        let _ = writeln!(
            t,
            "| 20 stdio servers: at once faster than one by one | {:.2}x faster | {} |",
            s / p,
            if p < s { "yes" } else { "**no**" }
        );
    }
    t
}

/// The cost of observing (issue 29): the `mcpwire` column (spans compiled
/// in, no subscriber, metrics into the global no-op provider) against
/// `mcpwire-otel` (a `tracing-opentelemetry` layer over an SDK tracer with a
/// batch processor, and an SDK meter provider, both exporting nowhere).
fn observed_table(cells: &[((String, String), Cell)]) -> String {
    let get = |transport: &str, workload: &str, client: &str, key: &str| {
        cells
            .iter()
            .find(|((t, w), _)| t == transport && w == workload)
            .and_then(|(_, cell)| median(cell.get(client).map(Vec::as_slice), key))
    };
    let mut t = String::from(
        "### Observability (issue 29)\n\n\
         The same calls with no `tracing` subscriber (the `mcpwire` column: every request's \
         span is disabled at its callsite, metrics go to the global no-op meter provider) \
         and with the OpenTelemetry layer on (`mcpwire-otel`: `tracing-opentelemetry` over \
         an SDK tracer with a batch span processor, and an SDK meter provider recording \
         every metric, both exporting nowhere). The cost with no subscriber is the \
         `mcpwire` column against earlier runs of this table.\n\n\
         | transport | workload | metric | no subscriber | OpenTelemetry on | on / off |\n\
         |---|---|---|---:|---:|---:|\n",
    );
    for ((transport, workload), _) in cells {
        let rows: &[(&str, &str)] = match workload.as_str() {
            "w2" | "w2-task" => &[
                ("p50_us", "p50 (us)"),
                ("cpu_us_per_op", "CPU per call (us)"),
                ("peak_rss_kib", "peak RSS (KiB)"),
            ],
            "w3" => &[("ops_per_s", "calls/s"), ("peak_rss_kib", "peak RSS (KiB)")],
            _ => continue,
        };
        for (key, label) in rows {
            let off = get(transport, workload, "mcpwire", key);
            let on = get(transport, workload, "mcpwire-otel", key);
            if on.is_none() {
                continue;
            }
            let _ = writeln!(
                t,
                "| {transport} | {workload} | {label} | {} | {} | {} |",
                fmt(off),
                fmt(on),
                ratio(on, off)
            );
        }
    }
    t
}

fn section(command: &str, rounds: usize, machine: &str, table: &str, targets: &str) -> String {
    format!(
        "{BEGIN}\n## Clients: mcpwire, rmcp and the raw limit\n\n\
         Produced by `{command}` ({rounds} round(s); in each round the clients run \
         one after the other, each client and workload in its own process; medians shown).\n\n\
         {machine}\n\n\
         The `mcpwire` column calls as the README shows: `connect_stdio` or \
         `connect(Server::http(url).client(pool))`, then `call_tool(\"echo\", &json!({{..}}))`; \
         `mcpwire, struct args` passes the same arguments as a borrowed struct. rmcp's \
         caller builds a JSON object for each call, as its `call_tool` requires. Both \
         clients can reach `https` servers: mcpwire always carries TLS (rustls with ring), \
         and rmcp is built with its `reqwest-tls-no-provider` feature, ring installed as \
         the provider (its README recommends its rustls backend; aws-lc-rs, that \
         backend's default provider, links more code). The one-client table below shows \
         rmcp without TLS too.\n\n\
         Workloads, all against the same `mcpwire-bench-server` binary: W1 spawn or connect \
         until ready; W2 10,000 sequential `tools/call` echoes of 100 bytes, made from \
         `block_on` on the main thread as `#[tokio::main]` runs them, and again \
         (`w2-task`) from a spawned task, as an agent's or a server's handler makes them; \
         W3 20,000 calls \
         with 64 in flight; W4 20 calls echoing 1 MiB and 3 echoing 10 MiB (MB/s counts the \
         message once per call). CPU is the client process's user + system time (all \
         threads, 10 ms resolution) over the measured part; peak RSS is its `VmHWM`, which \
         counts the pages of the binary it touched; heap + stacks is the resident memory \
         of its mappings backed by no file (heap, arenas, thread stacks) right after the \
         last call, before the client closes: the memory the client itself holds. \
         `http` answers with JSON bodies, `http-sse` with one-event SSE streams. The \
         tokio floor (stdio W2 only) writes the raw client's lines through tokio's child \
         pipes on the same runtime, no MCP library: what any tokio client pays for the \
         runtime alone.\n\n\
         The W4 10 MiB peak-RSS target is measured apart, by `lean_w4` (the same calls in \
         a process that links mcpwire alone): this binary links both clients, and its \
         code alone keeps about 9.5 MiB resident, which its peak-RSS rows include for \
         every client.\n\n\
         This machine is small and shared, so absolute figures move from run to run; the \
         ratios measured within one run are the figures that count.\n\n\
         {table}\n### Targets (issue 7)\n\n{targets}{END}\n"
    )
}

/// Replaces the marked section of `path`, or appends it; keeps the rest.
fn write_section(path: &Path, section: &str) -> Result<(), String> {
    write_between(path, BEGIN, END, section)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn serve_is_a_mode_of_its_own_with_three_rounds_by_default() {
        let o = parse(&args(&["--serve"])).unwrap();
        assert!(o.serve && !o.density_only && o.write);
        assert_eq!(o.rounds, 3);
        let o = parse(&args(&["--serve", "--quick", "--no-write"])).unwrap();
        assert_eq!((o.rounds, o.quick, o.write), (1, true, false));
        assert_eq!(
            parse(&args(&["--serve", "--rounds", "5"])).unwrap().rounds,
            5
        );
        // The default run is not the serve rows.
        assert!(!parse(&[]).unwrap().serve);
        for pair in [
            ["--serve", "--density-only"],
            ["--solo", "--serve"],
            ["--density-only", "--solo"],
        ] {
            assert!(matches!(parse(&args(&pair)), Err(Some(_))), "{pair:?}");
        }
        let o = parse(&args(&["--solo", "--transport", "http"])).unwrap();
        assert!(o.solo && !o.serve && o.transports == ["http"]);
    }

    #[test]
    fn help_is_asked_for_apart_from_a_mistake_and_names_every_mode() {
        assert!(matches!(parse(&args(&["--help"])), Err(None)));
        assert!(matches!(parse(&args(&["--rounds", "0"])), Err(Some(_))));
        assert!(matches!(parse(&args(&["--serv"])), Err(Some(_))));
        for mode in [
            "--serve",
            "--density-only",
            "--solo",
            "--rounds",
            "--no-write",
        ] {
            assert!(USAGE.contains(mode), "{mode}");
        }
    }
}
