//! A client's frames to a server that reads its stdin slowly (issue 18):
//! can a request be stranded on the way into a full pipe?
//!
//! The child's stdin is a readiness-based pipe, which remembers the last
//! waker that found it full. A sender that finds the pipe full hands the
//! rest of its frame to the writer task, which then polls with its own
//! waker; the writer task never waits on the pipe while a sender may poll
//! it (it is busy, and the queue counts its frames). This test holds that
//! to account: requests larger than the pipe (shrunk to one page by the
//! server) and small ones, sent one at a time, each answered within a
//! bound.

// The servers here are `sh`, `cat` and `python3` scripts, and shutdowns are
// checked in /proc: Unix only. `windows.rs` holds the Windows tests.
#![cfg(unix)]

mod common;

use std::num::NonZeroU32;
use std::time::Duration;

use bytes::Bytes;
use common::*;
use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};

/// How long one round trip may take before the request counts as stranded.
const ROUND_TRIP: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_into_a_full_pipe_each_reach_a_slow_server() {
    // The server shrinks its stdin to one page, then reads it 512 bytes at
    // a time with a pause after each, and answers each complete line with
    // its number.
    let script = r#"
import fcntl, os, sys, time
F_SETPIPE_SZ = 1031
fcntl.fcntl(0, F_SETPIPE_SZ, 4096)
buf = b""
n = 0
while True:
    chunk = os.read(0, 512)
    if not chunk:
        break
    buf += chunk
    while b"\n" in buf:
        line, _, buf = buf.partition(b"\n")
        n += 1
        os.write(1, b'{"n":%d,"len":%d}\n' % (n, len(line)))
    time.sleep(0.0002)
"#;
    let mut t = spawn(python(script)).await;
    t.set_active(Active::Many(NonZeroU32::MAX));
    let tx = t.sender();
    // Around the pipe's page: below it, just over it with the newline (the
    // largest frame a sender writes in one piece), and well over it.
    let sizes = [100, 3_000, 4_096, 9_000, 70_000];
    for i in 1..=500 {
        let len = sizes[i % sizes.len()];
        let mut frame = vec![b'x'; len];
        frame[0] = b'{';
        frame[len - 1] = b'}';
        tx.send(Bytes::from(frame)).await.expect("sent");
        let answer = tokio::time::timeout(ROUND_TRIP, async {
            loop {
                match t.next_event().await {
                    Some(TransportEvent::Frame(f)) => return f,
                    Some(TransportEvent::Stderr(_)) => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("request {i} ({len} bytes) never reached the server"));
        let want = format!("{{\"n\":{i},\"len\":{len}}}");
        assert_eq!(answer, want.as_bytes());
    }
    drop(tx);
    t.close().await;
}
