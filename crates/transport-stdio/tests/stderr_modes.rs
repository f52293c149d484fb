//! The stderr modes other than capture: whatever the mode, stderr is drained
//! (a chatty server never blocks on a full pipe), no line surfaces as an
//! event, and the tail is kept for errors.

// The servers here are `sh`, `cat` and `python3` scripts, and shutdowns are
// checked in /proc: Unix only. `windows.rs` holds the Windows tests.
#![cfg(unix)]

mod common;

use common::*;
use mcpwire_stdio::StderrMode;
use mcpwire_transport::{Active, CloseReason, Transport, TransportEvent};

/// Writes `lines` stderr lines (far more than a pipe holds when large), then
/// one frame, then exits 3.
fn chatty(lines: usize) -> String {
    format!(
        r#"i=0; while [ $i -lt {lines} ]; do echo "stderr line $i: padding padding padding padding padding padding padding"; i=$((i+1)); done >&2; echo '{{"after":"stderr"}}'; exit 3"#
    )
}

async fn drains_and_keeps_the_tail(mode: StderrMode, lines: usize) {
    let mut t = spawn(sh(&chatty(lines)).stderr(mode)).await;
    t.set_active(Active::Once);
    let mut frames = Vec::new();
    let reason = loop {
        match next(&mut t).await {
            TransportEvent::Frame(f) => frames.push(f),
            TransportEvent::Closed(r) => break r,
            TransportEvent::Stderr(line) => panic!("{mode:?} must not surface stderr: {line}"),
            _ => {}
        }
    };
    assert_eq!(frames, vec![&b"{\"after\":\"stderr\"}"[..]], "{mode:?}");
    match reason {
        CloseReason::Exited(e) => {
            assert_eq!(e.code, Some(3), "{mode:?}");
            let last = e.stderr_tail.last().expect("a stderr tail");
            assert!(
                last.starts_with(&format!("stderr line {}:", lines - 1)),
                "{mode:?}: {last}"
            );
        }
        other => panic!("{mode:?}: expected Exited, got {other}"),
    }
}

#[tokio::test]
async fn log_mode_drains_a_flood_and_keeps_the_tail() {
    // About 2 MB: thirty times a pipe buffer.
    drains_and_keeps_the_tail(StderrMode::Log, 20_000).await;
}

#[tokio::test]
async fn discard_mode_drains_a_flood_and_keeps_the_tail() {
    drains_and_keeps_the_tail(StderrMode::Discard, 20_000).await;
}

#[tokio::test]
async fn inherit_mode_copies_lines_and_keeps_the_tail() {
    // Few lines: they are copied to the test's own stderr.
    drains_and_keeps_the_tail(StderrMode::Inherit, 3).await;
}
