//! `IoTransport` against an in-memory peer: the active-once contract,
//! framing edge cases, closing, and the writer.

use std::num::NonZeroU32;
use std::time::Duration;

use bytes::Bytes;
use mcpwire_transport::{
    Active, CloseReason, GrantHarness, IoConfig, IoTransport, SendError, Transport, TransportError,
    TransportEvent, TransportExt,
};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Generous: "it happens" waits on a loaded machine.
const LONG: Duration = Duration::from_secs(20);

async fn next(t: &mut IoTransport) -> TransportEvent {
    tokio::time::timeout(LONG, t.next_event())
        .await
        .expect("an event within the timeout")
        .expect("an event before the end")
}

async fn next_frame(t: &mut IoTransport) -> Bytes {
    match next(t).await {
        TransportEvent::Frame(f) => f,
        other => panic!("expected a frame, got {other:?}"),
    }
}

/// Polls for `d` and returns the frame delivered meanwhile, if any.
async fn frame_within(t: &mut IoTransport, d: Duration) -> Option<Bytes> {
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

fn many(n: u32) -> Active {
    Active::Many(NonZeroU32::new(n).unwrap())
}

#[tokio::test]
async fn frames_flow_both_ways() {
    let (mut t, peer) = IoTransport::pair(IoConfig::new());
    let (peer_r, mut peer_w) = tokio::io::split(peer);
    let mut peer_lines = BufReader::new(peer_r).lines();

    t.sender()
        .send(Bytes::from_static(b"{\"id\":1}"))
        .await
        .unwrap();
    t.sender()
        .try_send(Bytes::from_static(b"{\"id\":2}"))
        .unwrap();
    assert_eq!(peer_lines.next_line().await.unwrap().unwrap(), "{\"id\":1}");
    assert_eq!(peer_lines.next_line().await.unwrap().unwrap(), "{\"id\":2}");

    peer_w.write_all(b"{\"r\":1}\n{\"r\":2}\n").await.unwrap();
    t.set_active(many(2));
    assert_eq!(next_frame(&mut t).await, "{\"r\":1}");
    assert_eq!(next_frame(&mut t).await, "{\"r\":2}");
    assert_eq!(t.info().kind, "io");
}

#[tokio::test]
async fn harness_one_frame_per_grant_and_none_without() {
    let (t, mut peer) = IoTransport::pair(IoConfig::new());
    peer.write_all(b"{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n")
        .await
        .unwrap();
    let mut h = GrantHarness::new(t);
    for n in 1..=3 {
        let frame = h.next_frame().await.unwrap();
        assert_eq!(frame, format!("{{\"n\":{n}}}"));
    }
    h.assert_no_frame().await.unwrap();
    drop(peer);
    assert!(matches!(h.closed_reason().await.unwrap(), CloseReason::Eof));
}

/// The harness itself must be able to fail: a transport that ignores grants
/// is caught.
#[tokio::test]
async fn harness_catches_a_transport_that_ignores_grants() {
    struct Eager(IoTransport);
    impl Transport for Eager {
        fn sender(&self) -> mcpwire_transport::FrameSender {
            self.0.sender()
        }
        fn set_active(&mut self, _: Active) {}
        fn poll_event(
            &mut self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<TransportEvent>> {
            self.0.set_active(Active::Once);
            self.0.poll_event(cx)
        }
        fn poll_close(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
            self.0.poll_close(cx)
        }
        fn info(&self) -> mcpwire_transport::TransportInfo {
            self.0.info()
        }
    }
    let (t, mut peer) = IoTransport::pair(IoConfig::new());
    peer.write_all(b"{}\n").await.unwrap();
    let mut h = GrantHarness::new(Eager(t)).quiet_period(Duration::from_secs(10));
    assert!(matches!(
        h.next_frame().await,
        Err(mcpwire_transport::HarnessError::FrameWithoutGrant(_))
    ));
}

#[tokio::test]
async fn many_then_pause_keeps_order() {
    let (mut t, mut peer) = IoTransport::pair(IoConfig::new());
    for i in 0..10 {
        peer.write_all(format!("{{\"i\":{i}}}\n").as_bytes())
            .await
            .unwrap();
    }
    t.set_active(many(3));
    for i in 0..3 {
        assert_eq!(next_frame(&mut t).await, format!("{{\"i\":{i}}}"));
    }
    assert_eq!(
        frame_within(&mut t, Duration::from_millis(100)).await,
        None,
        "grants used up"
    );
    t.set_active(many(5));
    assert_eq!(next_frame(&mut t).await, "{\"i\":3}");
    t.set_active(Active::Paused);
    assert_eq!(
        frame_within(&mut t, Duration::from_millis(100)).await,
        None,
        "paused"
    );
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"i\":4}");
    t.set_active(many(100));
    for i in 5..10 {
        assert_eq!(next_frame(&mut t).await, format!("{{\"i\":{i}}}"));
    }
}

/// While paused, the transport holds at most one decoded frame plus one read
/// buffer, and the peer's writes block; after resuming, every frame arrives
/// in order.
#[tokio::test]
async fn paused_consumer_pushes_back_on_the_peer() {
    const FRAMES: usize = 20_000;
    let config = IoConfig::new().read_buffer_size(4096);
    let (mut t, mut peer) = IoTransport::pair(config);
    let flood = tokio::spawn(async move {
        for i in 0..FRAMES {
            let line =
                format!("{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{{\"i\":{i}}}}}\n");
            peer.write_all(line.as_bytes()).await.unwrap();
        }
        peer
    });
    // Let the peer write as much as it can while we poll with no grant.
    assert_eq!(frame_within(&mut t, Duration::from_millis(500)).await, None);
    assert!(!flood.is_finished(), "the peer must be blocked, not done");
    let held = t.buffered_len();
    assert!(held <= 4096 + 100, "held {held} bytes while paused");

    t.set_active(Active::Many(NonZeroU32::MAX));
    for i in 0..FRAMES {
        let f = next_frame(&mut t).await;
        let expected = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{{\"i\":{i}}}}}");
        assert_eq!(f, expected.as_bytes());
        assert!(t.buffered_len() <= 4096 + 100);
    }
    let peer = flood.await.unwrap();
    drop(peer);
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Closed(CloseReason::Eof)
    ));
}

#[tokio::test]
async fn oversized_frame_is_an_error_then_a_typed_close() {
    let (mut t, mut peer) = IoTransport::pair(IoConfig::new().max_frame_len(100));
    peer.write_all(b"{\"ok\":1}\n").await.unwrap();
    peer.write_all(&[b'x'; 5000]).await.unwrap();
    t.set_active(many(10));
    assert_eq!(next_frame(&mut t).await, "{\"ok\":1}");
    match next(&mut t).await {
        TransportEvent::Error(TransportError::Frame(e)) => {
            assert!(e.to_string().contains("maximum of 100"), "{e}")
        }
        other => panic!("expected a frame error, got {other:?}"),
    }
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Closed(CloseReason::FrameTooLong { max: 100 })
    ));
    assert!(t.next_event().await.is_none(), "nothing after Closed");
    assert!(t.next_event().await.is_none());
}

#[tokio::test]
async fn garbage_lines_are_skipped_counted_and_reported_once_a_second() {
    let (mut t, mut peer) = IoTransport::pair(IoConfig::new());
    peer.write_all(b"Server starting...\n{\"a\":1}\nlog line 2\nlog line 3\n[1]\n")
        .await
        .unwrap();
    t.set_active(many(2));
    match next(&mut t).await {
        TransportEvent::Error(TransportError::NonJson { skipped, sample }) => {
            assert_eq!(skipped, 1);
            assert_eq!(sample, "Server starting...");
        }
        other => panic!("expected NonJson, got {other:?}"),
    }
    assert_eq!(next_frame(&mut t).await, "{\"a\":1}");
    // The next two are skipped within the same second: no second report.
    assert_eq!(next_frame(&mut t).await, "[1]");
    assert_eq!(t.non_json_skipped(), 3);
    // A second later, the next skipped line is reported again, with the count.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    peer.write_all(b"another log line\n{}\n").await.unwrap();
    t.set_active(Active::Once);
    match next(&mut t).await {
        TransportEvent::Error(TransportError::NonJson { skipped, sample }) => {
            assert_eq!((skipped, sample.as_str()), (4, "another log line"));
        }
        other => panic!("expected NonJson, got {other:?}"),
    }
    assert_eq!(next_frame(&mut t).await, "{}");
}

#[tokio::test]
async fn non_json_can_be_delivered() {
    let config = IoConfig::new().non_json(mcpwire_transport::NonJsonPolicy::Deliver);
    let (mut t, mut peer) = IoTransport::pair(config);
    peer.write_all(b"hello\n").await.unwrap();
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "hello");
}

#[tokio::test]
async fn crlf_blank_lines_and_unterminated_last_line() {
    let (mut t, mut peer) = IoTransport::pair(IoConfig::new());
    peer.write_all(b"{\"a\":1}\r\n\r\n{\"b\":2}\r\n{\"c\":3}")
        .await
        .unwrap();
    drop(peer);
    t.set_active(many(10));
    assert_eq!(next_frame(&mut t).await, "{\"a\":1}");
    assert_eq!(next_frame(&mut t).await, "{\"b\":2}");
    assert_eq!(next_frame(&mut t).await, "{\"c\":3}");
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Closed(CloseReason::Eof)
    ));
    assert!(t.next_event().await.is_none());
}

#[tokio::test]
async fn a_frame_split_into_one_byte_writes() {
    let (mut t, mut peer) = IoTransport::pair(IoConfig::new());
    let frame = br#"{"jsonrpc":"2.0","id":7,"result":{"text":"split"}}"#;
    let writer = tokio::spawn(async move {
        for b in frame.iter().chain(b"\n") {
            peer.write_all(&[*b]).await.unwrap();
            peer.flush().await.unwrap();
            tokio::task::yield_now().await;
        }
        peer
    });
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, &frame[..]);
    drop(writer.await.unwrap());
}

#[tokio::test]
async fn a_15_mib_frame_both_ways() {
    let (mut t, peer) = IoTransport::pair(IoConfig::new());
    let mut body = vec![b'a'; 15 << 20];
    body[..6].copy_from_slice(b"{\"d\":\"");
    body[(15 << 20) - 2..].copy_from_slice(b"\"}");
    let body = Bytes::from(body);
    let (mut pr, mut pw) = tokio::io::split(peer);
    // Echo the line back, as a server would.
    let echo = tokio::spawn(async move {
        let mut got = Vec::new();
        let mut chunk = vec![0; 1 << 16];
        while !got.ends_with(b"\n") {
            let n = pr.read(&mut chunk).await.unwrap();
            assert!(n > 0);
            got.extend_from_slice(&chunk[..n]);
        }
        pw.write_all(&got).await.unwrap();
        got.len()
    });
    t.sender().send(body.clone()).await.unwrap();
    t.set_active(Active::Once);
    let f = next_frame(&mut t).await;
    assert_eq!(f.len(), body.len());
    assert!(f == body);
    assert_eq!(echo.await.unwrap(), body.len() + 1);
}

#[tokio::test]
async fn closed_is_reported_once_even_when_paused() {
    let (mut t, peer) = IoTransport::pair(IoConfig::new());
    drop(peer);
    // No grant is needed to learn that the peer is gone.
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Closed(CloseReason::Eof)
    ));
    assert!(t.next_event().await.is_none());
    assert!(
        t.sender().is_closed() || {
            tokio::time::sleep(Duration::from_millis(200)).await;
            t.sender().is_closed()
        }
    );
}

#[tokio::test]
async fn frames_before_the_end_come_before_closed() {
    let (mut t, mut peer) = IoTransport::pair(IoConfig::new());
    peer.write_all(b"{\"last\":true}\n").await.unwrap();
    drop(peer);
    // Paused: the frame waits for a grant; Closed waits for the frame.
    assert_eq!(frame_within(&mut t, Duration::from_millis(100)).await, None);
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"last\":true}");
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Closed(CloseReason::Eof)
    ));
}

#[tokio::test]
async fn local_close_flushes_queued_frames_and_shuts_the_write_half() {
    let (mut t, peer) = IoTransport::pair(IoConfig::new().outbound_capacity(1000));
    let tx = t.sender();
    for i in 0..500 {
        tx.try_send(Bytes::from(format!("{{\"i\":{i}}}"))).unwrap();
    }
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(peer).lines();
        let mut n = 0;
        while let Some(line) = lines.next_line().await.unwrap() {
            assert_eq!(line, format!("{{\"i\":{n}}}"));
            n += 1;
        }
        n
    });
    tokio::time::timeout(LONG, t.close()).await.unwrap();
    assert_eq!(reader.await.unwrap(), 500, "every queued frame, then EOF");
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Closed(CloseReason::Local)
    ));
    assert!(t.next_event().await.is_none());
    assert!(matches!(
        tx.try_send(Bytes::from_static(b"{}")),
        Err(SendError::Closed(_))
    ));
}

#[tokio::test]
async fn busy_when_the_queue_is_full_and_the_peer_does_not_read() {
    let config = IoConfig::new().outbound_capacity(2).read_buffer_size(1024);
    let (t, _peer) = IoTransport::pair(config);
    let tx = t.sender();
    let frame = Bytes::from(vec![b'1'; 4096]);
    let mut busy = false;
    for _ in 0..100 {
        match tx.try_send(frame.clone()) {
            Ok(()) => tokio::task::yield_now().await,
            Err(SendError::Busy(f)) => {
                assert_eq!(f.frame.len(), 4096, "the frame comes back");
                busy = true;
                break;
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert!(busy, "a peer that never reads must make the queue fill");
    assert!(matches!(
        tx.try_send(Bytes::from_static(b"{\n}")),
        Err(SendError::EmbeddedNewline(_))
    ));
}

#[tokio::test]
async fn a_dead_write_side_hands_queued_frames_back() {
    // Separate pipes per direction: the inbound one stays open, the outbound
    // one has lost its reader.
    let (ours_in, _theirs_in) = tokio::io::duplex(1024);
    let (ours_out, theirs_out) = tokio::io::duplex(1024);
    drop(theirs_out);
    let mut t = IoTransport::new(ours_in, ours_out, IoConfig::new());
    let tx = t.sender();
    // The first is written directly (and fails), the others queue behind it.
    for n in 0..3 {
        tx.try_send(Bytes::from(format!("{{\"lost\":{n}}}")))
            .unwrap();
    }
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Error(TransportError::Io(_))
    ));
    for n in 0..3 {
        match next(&mut t).await {
            TransportEvent::Undelivered { frame, error } => {
                assert_eq!(frame, format!("{{\"lost\":{n}}}"), "in the order sent");
                assert!(matches!(error, TransportError::Io(_)));
            }
            other => panic!("expected the frame back, got {other:?}"),
        }
    }
    assert!(matches!(
        tx.send(Bytes::from_static(b"{}")).await,
        Err(SendError::Closed(_))
    ));
}

#[tokio::test]
async fn peer_exited_ends_a_stream_that_stays_open() {
    let (mut t, mut peer) = IoTransport::pair(IoConfig::new());
    peer.write_all(b"{\"bye\":1}\n").await.unwrap();
    t.set_active(Active::Once);
    assert_eq!(next_frame(&mut t).await, "{\"bye\":1}");
    assert!(
        tokio::time::timeout(Duration::from_millis(100), t.next_event())
            .await
            .is_err()
    );
    // The stream is still open (`peer` lives), but the process behind it is gone.
    t.peer_exited();
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Closed(CloseReason::Eof)
    ));
    drop(peer);
}

mod content_length {
    use super::*;
    use mcpwire_transport::Framing;

    fn config() -> IoConfig {
        IoConfig::new().framing(Framing::ContentLength)
    }

    #[tokio::test]
    async fn frames_flow_both_ways_and_may_contain_newlines() {
        let (mut t, peer) = IoTransport::pair(config());
        let (mut pr, mut pw) = tokio::io::split(peer);
        // Pretty-printed JSON: newlines are fine inside a Content-Length body.
        let pretty = Bytes::from_static(b"{\n  \"id\": 1\n}");
        t.sender().send(pretty.clone()).await.unwrap();
        let big = Bytes::from(vec![b'7'; 100_000]);
        t.sender().send(big.clone()).await.unwrap();
        let mut expected = Vec::new();
        expected.extend_from_slice(b"Content-Length: 13\r\n\r\n");
        expected.extend_from_slice(&pretty);
        expected.extend_from_slice(b"Content-Length: 100000\r\n\r\n");
        expected.extend_from_slice(&big);
        let mut got = vec![0; expected.len()];
        pr.read_exact(&mut got).await.unwrap();
        assert!(got == expected);

        pw.write_all(b"Content-Length: 2\r\n\r\n{}Content-Length: 12\r\nContent-Type: application/json\r\n\r\n{\"a\":\n\"b\"}\r\n")
            .await
            .unwrap();
        t.set_active(many(2));
        assert_eq!(next_frame(&mut t).await, "{}");
        assert_eq!(next_frame(&mut t).await, "{\"a\":\n\"b\"}\r\n");
    }

    #[tokio::test]
    async fn a_declared_length_over_the_maximum_closes_without_buffering_it() {
        let (mut t, mut peer) = IoTransport::pair(config().max_frame_len(1 << 20));
        peer.write_all(b"Content-Length: 2\r\n\r\n{}Content-Length: 1073741824\r\n\r\n{\"x\":")
            .await
            .unwrap();
        t.set_active(many(10));
        assert_eq!(next_frame(&mut t).await, "{}");
        assert!(matches!(
            next(&mut t).await,
            TransportEvent::Error(TransportError::Frame(_))
        ));
        assert!(t.buffered_len() < 1 << 20);
        assert!(matches!(
            next(&mut t).await,
            TransportEvent::Closed(CloseReason::FrameTooLong { max }) if max == 1 << 20
        ));
    }

    #[tokio::test]
    async fn a_malformed_header_is_a_fatal_framing_error() {
        let (mut t, mut peer) = IoTransport::pair(config());
        peer.write_all(b"Content-Length: twelve\r\n\r\n{}")
            .await
            .unwrap();
        t.set_active(Active::Once);
        match next(&mut t).await {
            TransportEvent::Closed(CloseReason::Error(TransportError::Frame(_))) => {}
            other => panic!("expected a framing close, got {other:?}"),
        }
        assert!(t.next_event().await.is_none());
    }

    #[tokio::test]
    async fn a_body_cut_short_by_the_end_is_reported_then_eof() {
        let (mut t, mut peer) = IoTransport::pair(config());
        peer.write_all(b"Content-Length: 10\r\n\r\n{\"a\"")
            .await
            .unwrap();
        drop(peer);
        t.set_active(Active::Once);
        assert!(matches!(
            next(&mut t).await,
            TransportEvent::Error(TransportError::Frame(_))
        ));
        assert!(matches!(
            next(&mut t).await,
            TransportEvent::Closed(CloseReason::Eof)
        ));
    }

    #[tokio::test]
    async fn non_json_policy_does_not_apply() {
        let (mut t, mut peer) = IoTransport::pair(config());
        peer.write_all(b"Content-Length: 5\r\n\r\nhello")
            .await
            .unwrap();
        t.set_active(Active::Once);
        assert_eq!(next_frame(&mut t).await, "hello");
    }
}

/// Direct writes (a sender writing itself when nothing is queued), queued
/// batches and leftovers of a full pipe must interleave without reordering
/// any one sender's frames or corrupting any frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_senders_keep_their_order_through_a_tight_pipe() {
    const SENDERS: usize = 4;
    const PER_SENDER: usize = 400;
    // A 1 KiB in-memory pipe: most frames do not fit in one write.
    let (t, peer) = IoTransport::pair(IoConfig::new().read_buffer_size(1024).outbound_capacity(8));
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(peer).lines();
        let mut next = [0usize; SENDERS];
        let mut total = 0;
        while total < SENDERS * PER_SENDER {
            let line = lines.next_line().await.unwrap().expect("all frames arrive");
            let v: Vec<&str> = line.splitn(3, ':').collect();
            let (s, i): (usize, usize) = (v[0].parse().unwrap(), v[1].parse().unwrap());
            assert_eq!(i, next[s], "sender {s} out of order");
            assert!(v[2].bytes().all(|b| b == b'a' + s as u8), "frame corrupted");
            next[s] += 1;
            total += 1;
            if total % 97 == 0 {
                // A slow reader now and then, so the pipe fills.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    });
    let mut tasks = Vec::new();
    for s in 0..SENDERS {
        let tx = t.sender();
        tasks.push(tokio::spawn(async move {
            for i in 0..PER_SENDER {
                let pad = (i * 37 + s * 11) % 3000;
                let body = format!(
                    "{s}:{i}:{}",
                    ((b'a' + s as u8) as char).to_string().repeat(pad)
                );
                tx.send(Bytes::from(body)).await.unwrap();
                if i % 50 == 0 {
                    // Gaps longer than a burst, so some frames take the direct path.
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        }));
    }
    for task in tasks {
        tokio::time::timeout(LONG, task).await.unwrap().unwrap();
    }
    tokio::time::timeout(LONG, reader).await.unwrap().unwrap();
    drop(t);
}

#[tokio::test]
async fn dropping_the_transport_closes_the_write_half_even_if_senders_live() {
    let (t, peer) = IoTransport::pair(IoConfig::new());
    let tx = t.sender();
    tx.send(Bytes::from_static(b"{}")).await.unwrap();
    drop(t);
    let mut lines = BufReader::new(peer).lines();
    assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("{}"));
    let eof = tokio::time::timeout(LONG, lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        eof, None,
        "the peer sees the end although a sender is alive"
    );
    assert!(matches!(
        tx.try_send(Bytes::from_static(b"{}")),
        Err(SendError::Closed(_))
    ));
}

/// A lone frame is written by the sender itself; when it does not fit in the
/// pipe, the writer task must finish it before anything sent after it.
#[tokio::test]
async fn a_direct_write_that_does_not_fit_is_finished_in_order() {
    let (t, peer) = IoTransport::pair(IoConfig::new().read_buffer_size(1024));
    let tx = t.sender();
    let frames: Vec<(String, String)> = (0..20)
        .map(|i| {
            (
                format!("{i}:{}", "x".repeat(1000 + i * 300)),
                format!("{i}:after"),
            )
        })
        .collect();
    let expected: Vec<String> = frames
        .iter()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(peer).lines();
        for want in expected {
            tokio::time::sleep(Duration::from_millis(2)).await;
            assert_eq!(lines.next_line().await.unwrap().unwrap(), want);
        }
    });
    for (lone, after) in frames {
        // Far apart: each is a lone frame, taking the direct path.
        tokio::time::sleep(Duration::from_millis(1)).await;
        tx.send(Bytes::from(lone)).await.unwrap();
        // Sent right behind it: must not overtake the rest of the first.
        tx.send(Bytes::from(after)).await.unwrap();
    }
    tokio::time::timeout(LONG, reader).await.unwrap().unwrap();
    drop(t);
}
