//! Peak memory of large echoes, alone in its binary so the figure is this
//! test's: five 10 MiB frames through `cat` must not make the process peak
//! past 40 MiB above where it started (issue 7's budget). The frames are
//! written from the caller's buffer and read into one growing buffer, never
//! copied whole.

// The servers here are `sh`, `cat` and `python3` scripts, and shutdowns are
// checked in /proc: Unix only. `windows.rs` holds the Windows tests.
#![cfg(unix)]

mod common;

use bytes::Bytes;
use common::*;
use mcpwire_stdio::StdioConfig;
use mcpwire_transport::{Active, Transport, TransportExt};

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn ten_mib_echoes_stay_within_the_memory_budget() {
    let before = status_kib("VmRSS:");
    let mut t = spawn(StdioConfig::new("cat")).await;
    let mut body = vec![b'q'; 10 << 20];
    body[..6].copy_from_slice(b"{\"d\":\"");
    let n = body.len();
    body[n - 2..].copy_from_slice(b"\"}");
    let body = Bytes::from(body);
    for _ in 0..5 {
        t.sender().send(body.clone()).await.unwrap();
        t.set_active(Active::Once);
        let echoed = next_frame(&mut t).await;
        assert!(echoed == body);
    }
    let peak = status_kib("VmHWM:");
    println!(
        "RSS before {before} KiB, peak {peak} KiB (+{} KiB) for 5 echoes of 10 MiB",
        peak.saturating_sub(before)
    );
    assert!(
        peak.saturating_sub(before) < 40 << 10,
        "peak grew by {} KiB",
        peak - before
    );
    t.close().await;
}
