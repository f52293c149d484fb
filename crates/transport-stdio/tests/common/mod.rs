//! Shared helpers of the stdio integration tests.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::time::Duration;

use bytes::Bytes;
use mcpwire_stdio::{StdioConfig, StdioTransport};
use mcpwire_transport::{CloseReason, TransportEvent, TransportExt};

/// Generous: "it happens" waits on a loaded two-core machine.
pub(crate) const LONG: Duration = Duration::from_secs(30);

/// A `sh -c SCRIPT` server.
pub(crate) fn sh(script: &str) -> StdioConfig {
    StdioConfig::new("sh").arg("-c").arg(script)
}

/// A `python3 -c SCRIPT` server, run by the interpreter itself rather than a
/// version-manager shim (which would need more than the safe environment).
pub(crate) fn python(script: &str) -> StdioConfig {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let exe = PYTHON.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 is installed");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    });
    StdioConfig::new(exe).arg("-u").arg("-c").arg(script)
}

pub(crate) async fn spawn(config: StdioConfig) -> StdioTransport {
    tokio::time::timeout(LONG, StdioTransport::spawn(config))
        .await
        .expect("spawn within the timeout")
        .expect("spawn succeeds")
}

pub(crate) async fn next(t: &mut StdioTransport) -> TransportEvent {
    tokio::time::timeout(LONG, t.next_event())
        .await
        .expect("an event within the timeout")
        .expect("an event before the end")
}

/// The next frame, skipping stderr lines.
pub(crate) async fn next_frame(t: &mut StdioTransport) -> Bytes {
    loop {
        match next(t).await {
            TransportEvent::Frame(f) => return f,
            TransportEvent::Stderr(_) => {}
            other => panic!("expected a frame, got {other:?}"),
        }
    }
}

/// The close reason, skipping stderr lines and failing on frames.
pub(crate) async fn closed(t: &mut StdioTransport) -> CloseReason {
    loop {
        match next(t).await {
            TransportEvent::Closed(r) => return r,
            TransportEvent::Stderr(_) | TransportEvent::Error(_) => {}
            other => panic!("expected Closed, got {other:?}"),
        }
    }
}

/// Polls for `d` without expecting anything; returns a frame if one came.
pub(crate) async fn frame_within(t: &mut StdioTransport, d: Duration) -> Option<Bytes> {
    let deadline = tokio::time::Instant::now() + d;
    loop {
        match tokio::time::timeout_at(deadline, t.next_event()).await {
            Err(_) => return None,
            Ok(Some(TransportEvent::Frame(f))) => return Some(f),
            Ok(Some(TransportEvent::Closed(r))) => panic!("unexpected close: {r}"),
            Ok(_) => {}
        }
    }
}

/// Live (not zombie) processes whose process group is `pgid`, from /proc.
///
/// Without a readable /proc (not Linux, or not mounted) nothing can be
/// seen, so this panics: an empty list would pass every "nothing left
/// behind" check without looking.
pub(crate) fn live_group_members(pgid: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let dir = std::fs::read_dir("/proc").unwrap_or_else(|e| {
        panic!("cannot list processes: /proc is not readable ({e}); this check needs Linux's /proc")
    });
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state ppid pgrp ...
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        let (state, pgrp) = (fields[0], fields[2].parse::<u32>().unwrap_or(0));
        if pgrp == pgid && state != "Z" && state != "X" {
            let comm = stat[stat.find('(').unwrap_or(0) + 1..close].to_owned();
            found.push((pid, comm));
        }
    }
    found
}

/// Waits (bounded) for the group to have no live member; returns survivors.
pub(crate) async fn wait_group_gone(pgid: u32, within: Duration) -> Vec<(u32, String)> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let live = live_group_members(pgid);
        if live.is_empty() || tokio::time::Instant::now() >= deadline {
            return live;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Blocking flavour, for tests without a runtime.
pub(crate) fn wait_group_gone_blocking(pgid: u32, within: Duration) -> Vec<(u32, String)> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let live = live_group_members(pgid);
        if live.is_empty() || std::time::Instant::now() >= deadline {
            return live;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
