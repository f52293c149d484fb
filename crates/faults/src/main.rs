//! `mcpwire-faults`: runs the fault suite, or serves as one of its scripted
//! stdio servers.
//!
//! ```text
//! mcpwire-faults [--list] [--bench-server PATH] [FILTER...]
//! mcpwire-faults soak [--cycles N] [--minutes M]
//! mcpwire-faults stdio-server MODE
//! ```
//!
//! With filters, only the cases whose name contains one of them run. The
//! bench server defaults to `mcpwire-bench-server` next to this binary.
//! The soak runs at least N cycles of each kind (default 1,000) and goes on
//! until M minutes have passed (default 0). Exits with status 1 if any case
//! (or the soak) failed.

use std::path::PathBuf;
use std::process::ExitCode;

use std::time::Duration;

use mcpwire_faults::runner::{self, Ctx};
use mcpwire_faults::{cases, soak, stdio_server};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("stdio-server") {
        let mode = args.get(1).map_or("ok", String::as_str);
        return match stdio_server::run(mode) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("stdio-server {mode}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("mcpwire-faults: cannot find this binary: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.first().map(String::as_str) == Some("soak") {
        let ctx = Ctx {
            bench_server: exe.with_file_name("mcpwire-bench-server"),
            exe,
        };
        return soak_main(ctx, &args[1..]);
    }
    let mut bench_server: PathBuf = exe.with_file_name("mcpwire-bench-server");
    let mut filters = Vec::new();
    let mut list = false;
    let mut rest = args.into_iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--list" => list = true,
            "--bench-server" => match rest.next() {
                Some(p) => bench_server = p.into(),
                None => return usage(),
            },
            a if a.starts_with('-') => return usage(),
            _ => filters.push(arg),
        }
    }
    let all = cases::all();
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|c| filters.is_empty() || filters.iter().any(|f| c.name.contains(f.as_str())))
        .collect();
    if list {
        for c in &chosen {
            println!("{:<34} {}", c.name, c.criterion);
        }
        return ExitCode::SUCCESS;
    }
    if chosen.is_empty() {
        eprintln!("mcpwire-faults: no case matches {filters:?}");
        return ExitCode::FAILURE;
    }
    let ctx = Ctx { exe, bench_server };
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    let verdicts = runtime.block_on(runner::run(&ctx, &chosen));
    if verdicts.iter().all(|v| v.passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("mcpwire-faults: cannot start a runtime: {e}");
            None
        }
    }
}

fn soak_main(ctx: Ctx, args: &[String]) -> ExitCode {
    let mut plan = soak::Plan {
        cycles: 1000,
        at_least: Duration::ZERO,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let value = rest.next().and_then(|v| v.parse::<u64>().ok());
        match (arg.as_str(), value) {
            ("--cycles", Some(n)) if n > 0 => plan.cycles = n as usize,
            ("--minutes", Some(m)) => plan.at_least = Duration::from_secs(m * 60),
            _ => return usage(),
        }
    }
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    let report = runtime.block_on(soak::run(&ctx, plan));
    for (name, t) in [("stdio", &report.stdio), ("http", &report.http)] {
        println!(
            "soak {name}: {} cycles in {:.1} s ({:.2} ms each), {} faults injected, {} failed; RSS after 100: {} KiB",
            t.cycles,
            t.elapsed.as_secs_f64(),
            t.elapsed.as_secs_f64() * 1e3 / t.cycles.max(1) as f64,
            t.injected,
            t.failures.len(),
            t.rss_at_100.unwrap_or(0),
        );
    }
    println!(
        "soak end: RSS {} KiB, descriptors {} -> {}, {} processes left",
        report.rss_end, report.fds_start, report.fds_end, report.leftovers
    );
    let problems = report.problems();
    for p in &problems {
        println!("soak problem: {p}");
    }
    let cycles = report.stdio.cycles + report.http.cycles;
    let failed = report.stdio.failures.len() + report.http.failures.len();
    // The end checks (descriptors, processes, memory) count as one each.
    let cycle_problems = usize::from(!report.stdio.failures.is_empty())
        + usize::from(!report.http.failures.is_empty());
    let checks_failed = problems.len() - cycle_problems;
    println!(
        "{} passed, {} failed",
        cycles - failed,
        failed + checks_failed
    );
    if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: mcpwire-faults [--list] [--bench-server PATH] [FILTER...] \
         | soak [--cycles N] [--minutes M] | stdio-server MODE"
    );
    ExitCode::from(2)
}
