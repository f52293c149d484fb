//! The stdio W4 10 MiB echo in a process that links mcpwire alone.
//!
//! `mcpwire-bench` links every client it compares (rmcp and its HTTP stack
//! too): about 20 MB of code, of which a run keeps about 9.5 MiB resident,
//! so its peak RSS says as much about the harness as about the client. This
//! program does W4 the way the README shows (`call_tool(name, &json!(..))`,
//! a 100-call warm-up, then sequential 10 MiB echoes) and nothing else, so
//! its `VmHWM` is what an application that talks to a server through
//! mcpwire holds at its peak. `cargo xtask bench` runs it for the stdio W4
//! 10 MiB peak-RSS target.
//!
//! Usage: `lean_w4 SERVER [CALLS]` (`SERVER` is `mcpwire-bench-server`).
//! Prints one JSON line: the resident set before the first large call, and
//! the peak.

use std::process::ExitCode;

use mcpwire::{ClientConfig, StdioConfig};
use serde_json::json;

/// `VmRSS` or `VmHWM` of this process, in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn run(server: &str, calls: usize) -> Result<(u64, u64), String> {
    let stdio = StdioConfig::new(server).arg("stdio");
    let client = mcpwire::connect_stdio(stdio, ClientConfig::new())
        .await
        .map_err(|e| e.to_string())?;
    for _ in 0..100 {
        client
            .call_tool("echo", &json!({ "message": "warm-up" }))
            .await
            .map_err(|e| e.to_string())?;
    }
    let before = status_kib("VmRSS:");
    let message: String = (0..10 << 20)
        .map(|i: usize| char::from(b'a' + (i % 26) as u8))
        .collect();
    for _ in 0..calls {
        let result = client
            .call_tool("echo", &json!({ "message": message }))
            .await
            .map_err(|e| e.to_string())?;
        if result.text().len() != message.len() {
            return Err("the echo came back with another length".into());
        }
    }
    client.close().await;
    Ok((before, status_kib("VmHWM:")))
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(server), calls) = (args.next(), args.next()) else {
        eprintln!("usage: lean_w4 SERVER [CALLS]");
        return ExitCode::from(2);
    };
    let calls = calls.and_then(|c| c.parse().ok()).unwrap_or(3);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lean_w4: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&server, calls)) {
        Ok((before, peak)) => {
            println!(
                "{}",
                json!({"client": "mcpwire", "harness": "lean", "transport": "stdio",
                    "workload": "w4-10m", "ops": calls, "rss_before_kib": before,
                    "peak_rss_kib": peak})
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lean_w4: {e}");
            ExitCode::FAILURE
        }
    }
}
