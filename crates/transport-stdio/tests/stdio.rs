//! The stdio transport against small real child processes: lifecycle,
//! active-once, framing edge cases, errors, crashes and startup failures.

// The servers here are `sh`, `cat` and `python3` scripts, and shutdowns are
// checked in /proc: Unix only. `windows.rs` holds the Windows tests.
#![cfg(unix)]

mod common;

use std::num::NonZeroU32;
use std::time::Duration;

use bytes::Bytes;
use common::*;
use mcpwire_stdio::{SAFE_ENV_VARS, SpawnError, StderrMode, StdioConfig, StdioTransport};
use mcpwire_transport::{
    Active, CloseReason, GrantHarness, SendError, Transport, TransportError, TransportEvent,
    TransportExt,
};

fn many(n: u32) -> Active {
    Active::Many(NonZeroU32::new(n).unwrap())
}

#[tokio::test]
async fn cat_echoes_one_frame_per_grant_and_nothing_without() {
    let t = spawn(StdioConfig::new("cat")).await;
    let pid = t.pid();
    assert_eq!(t.info().kind, "stdio");
    assert_eq!(t.info().pid, Some(pid));
    assert!(t.info().peer.ends_with("cat"), "{}", t.info().peer);
    let tx = t.sender();
    let mut h = GrantHarness::new(t);
    for i in 0..3 {
        tx.send(Bytes::from(format!("{{\"test\":{i}}}")))
            .await
            .unwrap();
    }
    for i in 0..3 {
        let frame = h.next_frame().await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(v["test"], i);
    }
    let mut t = h.into_inner();
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert!(matches!(closed(&mut t).await, CloseReason::Local));
    assert!(t.next_event().await.is_none());
    // `cat` exits on its own once stdin is closed.
    assert_eq!(t.exit().and_then(|e| e.code), Some(0));
    assert!(live_group_members(pid).is_empty());
}

#[tokio::test]
async fn pause_many_and_order_after_a_pause() {
    let mut t = spawn(sh(
        "for i in 0 1 2 3 4 5 6 7 8 9; do echo \"{\\\"i\\\":$i}\"; done; exec cat",
    ))
    .await;
    t.set_active(many(4));
    for i in 0..4 {
        assert_eq!(next_frame(&mut t).await, format!("{{\"i\":{i}}}"));
    }
    assert_eq!(
        frame_within(&mut t, Duration::from_millis(200)).await,
        None,
        "grants used up"
    );
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"i\":4}");
    t.set_active(many(3));
    t.set_active(Active::Paused);
    assert_eq!(
        frame_within(&mut t, Duration::from_millis(200)).await,
        None,
        "paused"
    );
    t.set_active(many(100));
    for i in 5..10 {
        assert_eq!(next_frame(&mut t).await, format!("{{\"i\":{i}}}"));
    }
    t.close().await;
}

#[tokio::test]
async fn oversized_frame_is_an_error_then_frame_too_long_and_the_server_is_stopped() {
    let config = python("import sys\nsys.stdout.write('{\"ok\":1}\\n')\nsys.stdout.write('[' + 'x' * (3 << 20) + ']\\n')\nsys.stdout.flush()\nimport time\ntime.sleep(100)")
        .max_frame_len(1 << 20)
        .stdin_close_timeout(Duration::from_millis(200))
        .sigterm_timeout(Duration::from_millis(500));
    let mut t = spawn(config).await;
    let pid = t.pid();
    t.set_active(many(10));
    assert_eq!(next_frame(&mut t).await, "{\"ok\":1}");
    match next(&mut t).await {
        TransportEvent::Error(TransportError::Frame(e)) => {
            assert!(e.to_string().contains("maximum of 1048576"), "{e}")
        }
        other => panic!("expected a frame error, got {other:?}"),
    }
    assert!(t.buffered_len() <= (1 << 20) + (64 << 10));
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Closed(CloseReason::FrameTooLong { max }) if max == 1 << 20
    ));
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert!(
        live_group_members(pid).is_empty(),
        "the server was shut down"
    );
}

#[tokio::test]
async fn garbage_lines_are_skipped_and_reported_and_crlf_is_accepted() {
    let script =
        r#"printf 'Starting server v1.2\r\n{"a":1}\r\nDEBUG: ready\n\r\n{"b":2}\n'; exec cat"#;
    let mut t = spawn(sh(script)).await;
    t.set_active(many(2));
    match next(&mut t).await {
        TransportEvent::Error(TransportError::NonJson { skipped: 1, sample }) => {
            assert_eq!(sample, "Starting server v1.2")
        }
        other => panic!("expected a NonJson report, got {other:?}"),
    }
    assert_eq!(next_frame(&mut t).await, "{\"a\":1}");
    // The second garbage line comes within the same second: counted, not reported.
    assert_eq!(next_frame(&mut t).await, "{\"b\":2}");
    assert_eq!(t.non_json_skipped(), 2);
    t.close().await;
}

#[tokio::test]
async fn a_frame_split_across_many_tiny_writes() {
    let script = r#"
import sys, time
frame = '{"jsonrpc":"2.0","id":1,"result":{"text":"' + 'y' * 300 + '"}}\n'
for i in range(0, len(frame), 7):
    sys.stdout.write(frame[i:i + 7]); sys.stdout.flush()
    if i % 70 == 0: time.sleep(0.001)
sys.stdin.read()
"#;
    let mut t = spawn(python(script)).await;
    t.set_active(Active::Once);
    let f = next_frame(&mut t).await;
    let v: serde_json::Value = serde_json::from_slice(&f).unwrap();
    assert_eq!(v["result"]["text"].as_str().unwrap().len(), 300);
    t.close().await;
}

#[tokio::test]
async fn a_15_mib_frame_round_trips_through_cat() {
    let mut t = spawn(StdioConfig::new("cat")).await;
    let mut body = vec![b'z'; 15 << 20];
    body[..7].copy_from_slice(b"{\"big\":");
    body[7] = b'"';
    let n = body.len();
    body[n - 2..].copy_from_slice(b"\"}");
    let body = Bytes::from(body);
    t.sender().send(body.clone()).await.unwrap();
    t.set_active(Active::Once);
    let f = next_frame(&mut t).await;
    assert_eq!(f.len(), body.len());
    assert!(f == body);
    t.close().await;
}

#[tokio::test]
async fn crash_mid_stream_delivers_what_was_written_then_exit_status_and_stderr() {
    let script = r#"echo '{"n":1}'; echo '{"n":2}'; echo 'panic: database is locked' >&2; exit 7"#;
    let mut t = spawn(sh(script).startup_grace(Duration::ZERO)).await;
    // Paused at first: the frames wait, and Closed waits behind them.
    assert_eq!(frame_within(&mut t, Duration::from_millis(300)).await, None);
    t.set_active(many(10));
    assert_eq!(next_frame(&mut t).await, "{\"n\":1}");
    assert_eq!(next_frame(&mut t).await, "{\"n\":2}");
    match closed(&mut t).await {
        CloseReason::Exited(e) => {
            assert_eq!(e.code, Some(7));
            assert_eq!(e.stderr_tail, vec!["panic: database is locked".to_owned()]);
        }
        other => panic!("expected Exited, got {other}"),
    }
    assert!(t.next_event().await.is_none());
}

#[tokio::test]
async fn the_process_is_watched_without_a_task_of_its_own_and_its_exit_seen_at_once() {
    let tasks = || {
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
    };
    let before = tasks();
    let mut t = spawn(sh(r#"echo '{"up":1}'; read line; exit 3"#)).await;
    // The stderr drain alone: waiting for the exit and the shutdown
    // sequence run in the owner's polls, and the writer task starts when
    // a frame first needs it.
    assert_eq!(tasks() - before, 1);
    t.set_active(many(10));
    assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
    t.sender().send(Bytes::from_static(b"{}")).await.unwrap();
    match closed(&mut t).await {
        CloseReason::Exited(e) => assert_eq!(e.code, Some(3)),
        other => panic!("expected Exited, got {other}"),
    }
    let pid = t.pid();
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert_eq!(t.exit().map(|e| e.code), Some(Some(3)));
    assert_eq!(live_group_members(pid), vec![]);
}

#[tokio::test]
async fn a_crash_is_reported_when_it_happens_even_if_a_grandchild_keeps_stdout_open() {
    // The leader dies by a signal while its background child still holds the
    // pipes: no EOF ever comes, yet the exit is reported.
    let script = r#"sleep 1000 & echo '{"up":1}'; read line; kill -KILL $$"#;
    let mut t = spawn(sh(script).startup_grace(Duration::ZERO)).await;
    let pid = t.pid();
    t.set_active(many(10));
    assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
    t.sender()
        .send(Bytes::from_static(b"{\"die\":1}"))
        .await
        .unwrap();
    match closed(&mut t).await {
        CloseReason::Exited(e) => assert_eq!(e.signal, Some(9)),
        other => panic!("expected Exited, got {other}"),
    }
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert_eq!(
        live_group_members(pid),
        vec![],
        "the grandchild went with the group"
    );
}

#[tokio::test]
async fn by_default_exit_at_start_is_a_close_naming_the_resolved_command() {
    // No startup grace by default: spawn returns at once, and the early exit
    // arrives as the close reason, with the same details a spawn error has.
    let mut t = spawn(sh("echo 'error: unknown flag --foo' >&2; exit 2")).await;
    match closed(&mut t).await {
        CloseReason::Exited(e) => {
            assert_eq!(e.code, Some(2));
            assert!(
                e.command.as_deref().is_some_and(|c| c.ends_with("/sh")),
                "{e:?}"
            );
            let msg = CloseReason::Exited(e).to_string();
            assert!(
                msg.contains("/sh` exited with status 2") && msg.contains("unknown flag"),
                "{msg}"
            );
        }
        other => panic!("expected Exited, got {other}"),
    }
}

#[tokio::test]
async fn exit_at_start_is_a_spawn_error_with_the_resolved_command_and_stderr() {
    let config =
        sh("echo 'error: unknown flag --foo' >&2; exit 2").startup_grace(Duration::from_secs(10));
    let err = StdioTransport::spawn(config).await.unwrap_err();
    match &err {
        SpawnError::ExitedAtStart { command, exit } => {
            assert!(
                command.is_absolute() && command.ends_with("sh"),
                "{}",
                command.display()
            );
            assert_eq!(exit.code, Some(2));
            assert_eq!(
                exit.stderr_tail,
                vec!["error: unknown flag --foo".to_owned()]
            );
        }
        other => panic!("expected ExitedAtStart, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("/sh` exited with status 2") && msg.contains("unknown flag"),
        "{msg}"
    );
}

#[tokio::test]
async fn command_not_found_names_the_command_and_the_path_searched() {
    let err = StdioTransport::spawn(StdioConfig::new("mcp-server-that-does-not-exist"))
        .await
        .unwrap_err();
    assert!(matches!(err, SpawnError::NotFound { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("mcp-server-that-does-not-exist") && msg.contains("PATH"),
        "{msg}"
    );
    let err = StdioTransport::spawn(StdioConfig::new("./nope").cwd("/tmp"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/tmp/./nope"), "{err}");
    let err = StdioTransport::spawn(StdioConfig::new("cat").cwd("/nonexistent-dir-xyz"))
        .await
        .unwrap_err();
    assert!(matches!(err, SpawnError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("/cat"), "{err}");
}

#[tokio::test]
async fn stderr_capture_arrives_as_events_without_grants() {
    let config =
        sh("echo 'starting up' >&2; echo 'ready' >&2; exec cat").stderr(StderrMode::Capture);
    let mut t = spawn(config).await;
    let mut lines = Vec::new();
    while lines.len() < 2 {
        match next(&mut t).await {
            TransportEvent::Stderr(line) => lines.push(line),
            other => panic!("expected stderr, got {other:?}"),
        }
    }
    assert_eq!(lines, ["starting up", "ready"]);
    assert_eq!(t.stderr_tail(), ["starting up", "ready"]);
    t.close().await;
}

#[tokio::test]
async fn a_chatty_stderr_never_blocks_the_server() {
    // 2 MB of stderr is far beyond a pipe's 64 KiB; in discard mode nothing
    // reads it but the drain task, and the frame after it must still come.
    let config = sh("i=0; while [ $i -lt 20000 ]; do echo 'log line number ......................................................................... $i' >&2; i=$((i+1)); done; echo '{\"done\":1}'; exec cat")
        .stderr(StderrMode::Discard);
    let mut t = spawn(config).await;
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"done\":1}");
    assert_eq!(t.stderr_tail().len(), 50);
    t.close().await;
}

#[tokio::test]
async fn the_child_sees_only_the_safe_environment_unless_told_otherwise() {
    // Some variable of ours that is not on the allow-list (cargo sets many).
    let secret = std::env::vars()
        .map(|(k, _)| k)
        .find(|k| {
            !SAFE_ENV_VARS.contains(&k.as_str())
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .expect("the test process has some non-allow-listed variable");
    let script = r#"printf '{"keys":"%s"}\n' "$(env | cut -d= -f1 | tr '\n' ' ')"; exec cat"#;
    let mut t = spawn(sh(script).env("MCP_EXTRA", "1")).await;
    t.set_active(Active::Once);
    let v: serde_json::Value = serde_json::from_slice(&next_frame(&mut t).await).unwrap();
    let keys: Vec<&str> = v["keys"].as_str().unwrap().split_whitespace().collect();
    assert!(
        keys.contains(&"MCP_EXTRA") && keys.contains(&"PATH"),
        "{keys:?}"
    );
    for k in &keys {
        // `sh` itself may add PWD, SHLVL and `_`.
        assert!(
            SAFE_ENV_VARS.contains(k) || ["MCP_EXTRA", "PWD", "SHLVL", "_", "OLDPWD"].contains(k),
            "{k} leaked into the child"
        );
    }
    assert!(!keys.contains(&secret.as_str()));
    t.close().await;

    let mut t = spawn(sh(script).inherit_env(mcpwire_stdio::InheritEnv::All)).await;
    t.set_active(Active::Once);
    let v: serde_json::Value = serde_json::from_slice(&next_frame(&mut t).await).unwrap();
    assert!(
        v["keys"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .any(|k| k == secret)
    );
    t.close().await;
}

#[tokio::test]
async fn cwd_and_arguments_are_passed_without_a_shell() {
    let dir = std::env::temp_dir();
    // `$HOME` and `;` reach the program verbatim: no shell expands them.
    let config = python("import json, os, sys\nprint(json.dumps({'cwd': os.getcwd(), 'argv': sys.argv[1:]}))\nsys.stdin.read()")
        .arg("$HOME; rm -rf /")
        .arg("two words")
        .cwd(&dir);
    let mut t = spawn(config).await;
    t.set_active(Active::Once);
    let v: serde_json::Value = serde_json::from_slice(&next_frame(&mut t).await).unwrap();
    assert_eq!(
        v["argv"],
        serde_json::json!(["$HOME; rm -rf /", "two words"])
    );
    let cwd = std::path::PathBuf::from(v["cwd"].as_str().unwrap());
    assert_eq!(cwd.canonicalize().unwrap(), dir.canonicalize().unwrap());
    t.close().await;
}

#[tokio::test]
async fn a_full_queue_is_busy_and_a_broken_pipe_is_closed() {
    // A server that never reads: the pipe fills, then the queue.
    let mut t = spawn(
        sh("exec sleep 1000")
            .outbound_capacity(4)
            .stdin_close_timeout(Duration::from_millis(100)),
    )
    .await;
    let tx = t.sender();
    let frame = Bytes::from(vec![b'1'; 32 << 10]);
    let mut busy = false;
    for _ in 0..200 {
        match tx.try_send(frame.clone()) {
            Ok(()) => tokio::time::sleep(Duration::from_millis(2)).await,
            Err(SendError::Busy(f)) => {
                assert_eq!(f.frame.len(), frame.len());
                busy = true;
                break;
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert!(busy, "the bounded queue must fill");
    t.close().await;

    // A server that closes its stdin and lives on: writes hit a broken pipe.
    let mut t = spawn(sh("exec 0<&-; echo '{\"up\":1}'; exec sleep 1000")).await;
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"up\":1}");
    let tx = t.sender();
    tx.send(Bytes::from_static(b"{\"x\":1}")).await.unwrap();
    let mut handed_back = false;
    while !handed_back {
        match next(&mut t).await {
            TransportEvent::Error(TransportError::Io(_)) => {}
            TransportEvent::Undelivered { frame, .. } => {
                assert_eq!(frame, "{\"x\":1}");
                handed_back = true;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(matches!(
        tx.send(Bytes::from_static(b"{}")).await,
        Err(SendError::Closed(_))
    ));
    t.close().await;
}

#[tokio::test]
async fn content_length_framing_to_an_lsp_style_server() {
    // Echoes each Content-Length body back, re-framed, pretty newlines and all.
    let script = r#"
import sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    body = inp.read(length)
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()
"#;
    let config = python(script).framing(mcpwire_transport::Framing::ContentLength);
    let mut t = spawn(config).await;
    assert!(
        t.info()
            .details
            .iter()
            .any(|(k, v)| k == "framing" && v == "contentlength")
    );
    let frames = [
        Bytes::from_static(b"{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1\n}"),
        Bytes::from(vec![b'5'; 200_000]),
        Bytes::from_static(b"{}"),
    ];
    for f in &frames {
        t.sender().send(f.clone()).await.unwrap();
    }
    t.set_active(many(3));
    for f in &frames {
        assert!(next_frame(&mut t).await == f);
    }
    t.close().await;
    assert_eq!(t.exit().and_then(|e| e.code), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stderr_flood_in_capture_mode_lets_frames_through_and_dies_with_the_group() {
    let config = sh("yes 'spam spam spam' >&2 & sleep 0.2; echo '{\"frame\":1}'; exec cat")
        .stderr(StderrMode::Capture)
        .sigterm_timeout(Duration::from_secs(5));
    let mut t = spawn(config).await;
    let pid = t.pid();
    t.set_active(Active::Once);
    let mut stderr_lines = 0u64;
    let frame = loop {
        match next(&mut t).await {
            TransportEvent::Frame(f) => break f,
            TransportEvent::Stderr(_) => stderr_lines += 1,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(frame, "{\"frame\":1}");
    assert!(stderr_lines > 0, "the flood was captured too");
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert_eq!(live_group_members(pid), vec![], "`yes` went with the group");
}
