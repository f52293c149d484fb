//! The backpressure proof, alone in its binary so the memory figures are not
//! disturbed by other tests: a server floods 100,000 frames at a paused
//! owner. The owner's memory stays bounded, the server's writes block, and
//! after resuming every frame arrives, in order.

// The servers here are `sh`, `cat` and `python3` scripts, and shutdowns are
// checked in /proc: Unix only. `windows.rs` holds the Windows tests.
#![cfg(unix)]

mod common;

use std::num::NonZeroU32;
use std::time::Duration;

use common::*;
use mcpwire_stdio::StderrMode;
use mcpwire_transport::{Active, CloseReason, Transport, TransportEvent, TransportExt};

const FRAMES: usize = 100_000;
const PAD: usize = 150;

/// Resident memory of this process, from /proc/self/status.
fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Polls with no grant for `d`, recording the server's progress reports.
async fn watch_progress(
    t: &mut mcpwire_stdio::StdioTransport,
    d: Duration,
    last: &mut Option<u64>,
) {
    let deadline = tokio::time::Instant::now() + d;
    while let Ok(event) = tokio::time::timeout_at(deadline, t.next_event()).await {
        match event.expect("open") {
            TransportEvent::Stderr(line) => {
                let n = line.strip_prefix("sent ").expect("a progress line");
                *last = Some(n.parse().unwrap());
            }
            other => panic!("nothing but stderr may arrive while paused: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_at_a_paused_owner_blocks_the_server_and_loses_nothing() {
    let script = format!(
        r#"
import sys
out = sys.stdout.buffer
pad = "p" * {PAD}
for i in range({FRAMES}):
    if i % 100 == 0:
        sys.stderr.write("sent %d\n" % i)
    out.write(('{{"jsonrpc":"2.0","method":"notifications/message","params":{{"seq":%d,"pad":"%s"}}}}\n' % (i, pad)).encode())
"#
    );
    let frame_len = 100 + PAD;
    let rss_before = vm_rss_kib();
    let mut t = spawn(python(&script).stderr(StderrMode::Capture)).await;

    // Paused: the server writes until the pipe and our read-ahead are full.
    // Watch one-second windows until the server's progress stops moving (a
    // loaded machine may need a few), bounded.
    let mut progress = None;
    let mut stalled = false;
    for _ in 0..30 {
        let before = progress;
        watch_progress(&mut t, Duration::from_secs(1), &mut progress).await;
        if progress.is_some() && progress == before {
            stalled = true;
            break;
        }
    }
    let stalled_at = progress.expect("the server started writing");
    assert!(
        stalled,
        "the server's writes never blocked (last report: frame {stalled_at})"
    );
    let rss_paused = vm_rss_kib();
    let held = t.buffered_len();
    println!(
        "paused: server stalled at frame {stalled_at} of {FRAMES}; transport holds {held} bytes; \
         VmRSS {rss_before} KiB -> {rss_paused} KiB (+{} KiB); flood size {} KiB",
        rss_paused.saturating_sub(rss_before),
        FRAMES * frame_len / 1024
    );
    // Blocked, not slow: another window with no grant brings no progress.
    watch_progress(&mut t, Duration::from_secs(1), &mut progress).await;
    assert_eq!(
        progress,
        Some(stalled_at),
        "the server got further while the owner was paused"
    );
    assert!(
        stalled_at < 5_000,
        "the server got {stalled_at} frames out while paused"
    );
    assert!(
        held <= (64 << 10) + frame_len,
        "held {held} bytes while paused"
    );
    // The whole flood is ~24 MiB; holding it would show here.
    assert!(
        rss_paused.saturating_sub(rss_before) < 8 << 10,
        "RSS grew by {} KiB while paused",
        rss_paused.saturating_sub(rss_before)
    );

    // Resume: every frame, in order, none lost.
    t.set_active(Active::Many(NonZeroU32::MAX));
    let mut next_seq = 0u64;
    let mut max_held = 0;
    let mut rss_peak = rss_paused;
    while next_seq < FRAMES as u64 {
        match next(&mut t).await {
            TransportEvent::Frame(f) => {
                let v: serde_json::Value = serde_json::from_slice(&f).unwrap();
                assert_eq!(v["params"]["seq"], next_seq, "frames arrive in order");
                next_seq += 1;
                max_held = max_held.max(t.buffered_len());
                if next_seq.is_multiple_of(10_000) {
                    rss_peak = rss_peak.max(vm_rss_kib());
                }
            }
            TransportEvent::Stderr(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    println!(
        "resumed: {next_seq} frames in order; max held {max_held} bytes; peak VmRSS {rss_peak} KiB"
    );
    assert!(max_held <= (64 << 10) + frame_len);
    match closed(&mut t).await {
        CloseReason::Exited(e) => assert_eq!(e.code, Some(0)),
        other => panic!("expected a clean exit, got {other}"),
    }
}
