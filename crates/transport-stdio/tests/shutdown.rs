//! Shutting servers down: the graceful path, servers that ignore SIGTERM,
//! wrappers with grandchildren, dropping without closing (with and without a
//! runtime), and a cancelled close. After each, /proc must show no live
//! process of the server's group.

// The servers here are `sh`, `cat` and `python3` scripts, and shutdowns are
// checked in /proc: Unix only. `windows.rs` holds the Windows tests.
#![cfg(unix)]

mod common;

use std::time::Duration;

use common::*;
use mcpwire_stdio::StdioTransport;
use mcpwire_transport::{Active, CloseReason, Transport, TransportExt};

const QUICK: Duration = Duration::from_millis(300);

#[tokio::test]
async fn a_server_that_ignores_sigterm_is_killed() {
    // SIG_IGN survives exec, so `sleep` ignores TERM too.
    let config = sh("trap '' TERM; echo '{\"up\":1}'; while :; do sleep 1; done")
        .stdin_close_timeout(QUICK)
        .sigterm_timeout(QUICK);
    let mut t = spawn(config).await;
    let pid = t.pid();
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    let exit = t.exit().expect("the exit is known after close");
    assert_eq!(exit.signal, Some(9), "{exit}");
    assert_eq!(live_group_members(pid), vec![]);
    assert!(matches!(closed(&mut t).await, CloseReason::Local));
}

#[tokio::test]
async fn a_server_that_ignores_stdin_eof_gets_sigterm() {
    let config = python("import sys, time\nprint('{}')\ntime.sleep(1000)")
        .stdin_close_timeout(QUICK)
        .sigterm_timeout(Duration::from_secs(20));
    let mut t = spawn(config).await;
    let pid = t.pid();
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{}");
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert_eq!(t.exit().and_then(|e| e.signal), Some(15));
    assert_eq!(live_group_members(pid), vec![]);
}

#[tokio::test]
async fn a_wrapper_and_its_grandchild_are_both_gone_after_close() {
    // `sh` waits for its children, like `npx` does; `sleep` is the grandchild
    // that would be orphaned if only the leader were signalled.
    let config = sh("sleep 1000 & echo '{\"up\":1}'; cat; wait")
        .stdin_close_timeout(QUICK)
        .sigterm_timeout(Duration::from_secs(5));
    let mut t = spawn(config).await;
    let pid = t.pid();
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
    let before = live_group_members(pid);
    assert!(
        before.len() >= 2,
        "leader and grandchild are running: {before:?}"
    );
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert_eq!(
        live_group_members(pid),
        vec![],
        "no process of the group remains"
    );
}

#[tokio::test]
async fn a_grandchild_left_behind_by_an_exited_leader_is_cleared_on_close() {
    // The leader exits at once when stdin closes; the grandchild would live on.
    let config = sh("sleep 1000 & echo '{\"up\":1}'; exec cat").sigterm_timeout(QUICK);
    let mut t = spawn(config).await;
    let pid = t.pid();
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert_eq!(
        t.exit().and_then(|e| e.code),
        Some(0),
        "cat exited on its own"
    );
    assert_eq!(live_group_members(pid), vec![]);
}

#[tokio::test]
async fn dropping_without_close_kills_the_group() {
    let mut t = spawn(sh("sleep 1000 & echo '{\"up\":1}'; sleep 1000")).await;
    let pid = t.pid();
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
    assert!(live_group_members(pid).len() >= 2);
    drop(t);
    // SIGKILL was sent synchronously; the kernel tears the processes down
    // asynchronously, so allow it a (generous) moment.
    assert_eq!(wait_group_gone(pid, LONG).await, vec![]);
}

#[test]
fn dropping_outside_any_runtime_still_kills_the_group() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t = rt.block_on(async {
        let mut t = spawn(sh("sleep 1000 & echo '{\"up\":1}'; sleep 1000")).await;
        t.set_active(Active::Once);
        assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
        t
    });
    let pid = t.pid();
    drop(rt);
    assert!(!live_group_members(pid).is_empty());
    drop(t);
    assert_eq!(wait_group_gone_blocking(pid, LONG), vec![]);
}

#[tokio::test]
async fn a_cancelled_close_resumes_when_polled_again() {
    let config = sh("trap '' TERM; echo '{\"up\":1}'; while :; do sleep 1; done")
        .stdin_close_timeout(Duration::from_millis(500))
        .sigterm_timeout(Duration::from_millis(500));
    let mut t: StdioTransport = spawn(config).await;
    let pid = t.pid();
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
    // Give up on the first close half-way through the stdin wait.
    assert!(
        tokio::time::timeout(Duration::from_millis(100), t.close())
            .await
            .is_err()
    );
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert_eq!(t.exit().and_then(|e| e.signal), Some(9));
    assert_eq!(live_group_members(pid), vec![]);
}
