//! Rough figures for the stdio hot path against `cat`: sequential round trips
//! through `StdioTransport` versus the same through a raw pipe, and
//! pipelined throughput. Not a benchmark suite (issue 7 has that); a quick
//! check that the transport adds little over the pipe.
//!
//! `cargo run --release -p mcpwire-stdio --example echo_latency`

use std::num::NonZeroU32;
use std::process::Stdio;
use std::time::Instant;

use bytes::Bytes;
use mcpwire_stdio::{StdioConfig, StdioTransport};
use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const ROUNDS: usize = 4_000;
const BLOCKS: usize = 5;
const FRAME: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}"#;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // Raw pipe: write a line, read a line.
    let mut child = tokio::process::Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = Vec::new();
    let mut frame_nl = FRAME.to_vec();
    frame_nl.push(b'\n');
    // The best of several blocks: the machine may be shared and loaded.
    let mut raw = std::time::Duration::MAX;
    for _ in 0..BLOCKS {
        let start = Instant::now();
        for _ in 0..ROUNDS {
            stdin.write_all(&frame_nl).await.unwrap();
            line.clear();
            stdout.read_until(b'\n', &mut line).await.unwrap();
        }
        raw = raw.min(start.elapsed());
    }
    drop(stdin);
    let _ = child.wait().await;

    // The transport, one call at a time.
    let mut t = StdioTransport::spawn(StdioConfig::new("cat"))
        .await
        .unwrap();
    let tx = t.sender();
    let frame = Bytes::from_static(FRAME);
    let mut ours = std::time::Duration::MAX;
    for _ in 0..BLOCKS {
        let start = Instant::now();
        for _ in 0..ROUNDS {
            tx.send(frame.clone()).await.unwrap();
            t.set_active(Active::Once);
            match t.next_event().await {
                Some(TransportEvent::Frame(_)) => {}
                other => panic!("{other:?}"),
            }
        }
        ours = ours.min(start.elapsed());
    }

    // Pipelined: 64 in flight.
    t.set_active(Active::Many(NonZeroU32::MAX));
    let start = Instant::now();
    let mut sent = 0;
    let mut received = 0;
    while received < ROUNDS * 25 {
        while sent < ROUNDS * 25 && sent - received < 64 {
            tx.send(frame.clone()).await.unwrap();
            sent += 1;
        }
        match t.next_event().await {
            Some(TransportEvent::Frame(_)) => received += 1,
            other => panic!("{other:?}"),
        }
    }
    let pipelined = start.elapsed();
    t.close().await;

    let per = |d: std::time::Duration, n: usize| d.as_secs_f64() * 1e6 / n as f64;
    println!(
        "sequential round trip (best of {BLOCKS} x {ROUNDS}): raw pipe {:.1} us, StdioTransport {:.1} us ({:.2}x)",
        per(raw, ROUNDS),
        per(ours, ROUNDS),
        ours.as_secs_f64() / raw.as_secs_f64()
    );
    println!(
        "pipelined (64 in flight): {:.0} frames/s",
        (ROUNDS * 25) as f64 / pipelined.as_secs_f64()
    );
}
