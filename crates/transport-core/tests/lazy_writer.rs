//! `IoTransport`'s writer task and queue are made when a frame first needs
//! them: a transport that only ever writes lone frames has no writer task,
//! and one started late applies the same back-pressure, keeps the order of
//! frames, and still shuts the write half down on close.

use std::time::Duration;

use bytes::Bytes;
use mcpwire_transport::{IoConfig, IoTransport, Outgoing, SendError, Transport, TransportExt};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Generous: "it happens" waits on a loaded machine.
const LONG: Duration = Duration::from_secs(20);

/// Tasks alive on this (current-thread) test runtime.
fn tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

#[tokio::test]
async fn lone_frames_never_start_the_writer_and_close_still_ends_the_stream() {
    let before = tasks();
    let (mut t, peer) = IoTransport::pair(IoConfig::new());
    let tx = t.sender();
    let mut lines = BufReader::new(peer).lines();
    for i in 0..3 {
        tx.send(Bytes::from(format!("{{\"i\":{i}}}")))
            .await
            .unwrap();
        // The peer answers before the next frame: lone frames, written by
        // their sender.
        let line = tokio::time::timeout(LONG, lines.next_line()).await.unwrap();
        assert_eq!(line.unwrap().unwrap(), format!("{{\"i\":{i}}}"));
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(tasks(), before, "no writer task for lone frames");
    // Closing starts it, to shut the write half down: the peer sees the end.
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    let eof = tokio::time::timeout(LONG, lines.next_line()).await.unwrap();
    assert_eq!(eof.unwrap(), None, "the write half is shut down");
    assert!(matches!(
        tx.try_send(Bytes::from_static(b"{}")),
        Err(SendError::Closed(_))
    ));
}

#[tokio::test]
async fn a_writer_started_late_pushes_back_and_keeps_the_order() {
    // A small pipe and queue, and a peer that does not read yet: the first
    // frames fill the pipe directly, the next one is left to the writer
    // task (started then), and the queue behind it fills.
    let config = IoConfig::new().outbound_capacity(2).read_buffer_size(1024);
    let before = tasks();
    let (t, peer) = IoTransport::pair(config);
    let tx = t.sender();
    let frame = |i: usize| Bytes::from(format!("{{\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(200)));
    let mut sent = 0;
    let mut busy = None;
    for i in 0..100 {
        match tx.try_send(Outgoing::notification(frame(i), "n")) {
            Ok(()) => {
                sent += 1;
                tokio::task::yield_now().await;
            }
            Err(SendError::Busy(f)) => {
                busy = Some(f);
                break;
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }
    // Whole: the bytes and what the sender said they are.
    assert_eq!(
        busy,
        Some(Outgoing::notification(frame(sent), "n")),
        "the refused frame comes back"
    );
    assert_eq!(tasks(), before + 1, "the writer task started on need");
    // `send` waits for room, then everything arrives once, in order.
    let rest = tokio::spawn(async move {
        for i in sent..sent + 20 {
            tx.send(frame(i)).await.unwrap();
        }
        tx
    });
    let mut lines = BufReader::new(peer).lines();
    for i in 0..sent + 20 {
        let line = tokio::time::timeout(LONG, lines.next_line()).await.unwrap();
        assert_eq!(
            line.unwrap().unwrap().as_bytes(),
            &frame(i)[..],
            "frame {i}"
        );
    }
    drop(rest.await.unwrap());
    drop(t);
}

/// Waits (at most [`LONG`]) until `n` tasks are alive.
async fn tasks_become(n: usize) {
    let deadline = tokio::time::Instant::now() + LONG;
    while tasks() != n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} tasks alive, waiting for {n}",
            tasks()
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[tokio::test]
async fn a_writer_started_for_an_unfinished_write_ends_after_it_and_starts_again() {
    let before = tasks();
    // A frame larger than the pipe: its sender writes what fits and leaves
    // the rest to the writer task, which has no queue to keep it alive.
    let (mut t, peer) = IoTransport::pair(IoConfig::new().read_buffer_size(1024));
    let tx = t.sender();
    let mut lines = BufReader::new(peer).lines();
    for i in 0..3 {
        let frame = format!("{{\"i\":{i},\"pad\":\"{}\"}}", "y".repeat(4000));
        tx.send(Bytes::from(frame.clone())).await.unwrap();
        assert_eq!(tasks(), before + 1, "the writer finishes the frame");
        let line = tokio::time::timeout(LONG, lines.next_line()).await.unwrap();
        assert_eq!(line.unwrap().unwrap(), frame, "frame {i} whole");
        tasks_become(before).await;
    }
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    let eof = tokio::time::timeout(LONG, lines.next_line()).await.unwrap();
    assert_eq!(eof.unwrap(), None, "the write half is shut down");
    tasks_become(before).await;
}

#[tokio::test]
async fn a_pair_of_frames_starts_no_writer_and_a_longer_burst_keeps_its_order() {
    let before = tasks();
    let (t, peer) = IoTransport::pair(IoConfig::new());
    let tx = t.sender();
    let mut lines = BufReader::new(peer).lines();
    // A notification and a request right after it (a handshake's end).
    tx.try_send(Bytes::from_static(b"{\"n\":1}")).unwrap();
    tx.try_send(Bytes::from_static(b"{\"n\":2}")).unwrap();
    assert_eq!(tasks(), before, "two frames in a row start no writer task");
    for n in 1..=2 {
        let line = tokio::time::timeout(LONG, lines.next_line()).await.unwrap();
        assert_eq!(line.unwrap().unwrap(), format!("{{\"n\":{n}}}"));
    }
    // A longer burst still arrives whole and in order (through the queue
    // when its frames come close together; `send` waits for room).
    let burst = tokio::spawn(async move {
        for n in 0..200 {
            tx.send(Bytes::from(format!("{{\"b\":{n}}}")))
                .await
                .unwrap();
        }
    });
    for n in 0..200 {
        let line = tokio::time::timeout(LONG, lines.next_line()).await.unwrap();
        assert_eq!(line.unwrap().unwrap(), format!("{{\"b\":{n}}}"));
    }
    burst.await.unwrap();
    drop(t);
}
