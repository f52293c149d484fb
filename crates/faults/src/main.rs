//! `mcpwire-faults`: runs the fault suite, or serves as one of its scripted
//! stdio servers.
//!
//! ```text
//! mcpwire-faults [--list] [--bench-server PATH] [FILTER...]
//! mcpwire-faults stdio-server MODE
//! ```
//!
//! With filters, only the cases whose name contains one of them run. The
//! bench server defaults to `mcpwire-bench-server` next to this binary.
//! Exits with status 1 if any case failed.

use std::path::PathBuf;
use std::process::ExitCode;

use mcpwire_faults::runner::{self, Ctx};
use mcpwire_faults::{cases, stdio_server};

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
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcpwire-faults: cannot start a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let verdicts = runtime.block_on(runner::run(&ctx, &chosen));
    if verdicts.iter().all(|v| v.passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: mcpwire-faults [--list] [--bench-server PATH] [FILTER...] | stdio-server MODE"
    );
    ExitCode::from(2)
}
