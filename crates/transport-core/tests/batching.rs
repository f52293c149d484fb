//! How `IoTransport` groups frames into writes: a lone frame is one write,
//! frames sent back to back share writes, and frames queued behind a write
//! in progress leave in few bounded writes, each sender's in its order.
//!
//! Every test here counts the writes a recording write half accepts, so
//! none depends on how fast the machine is beyond "a tight loop of sends is
//! a burst".

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use mcpwire_transport::{IoConfig, IoTransport, Transport};
use tokio::io::AsyncWrite;

/// Generous: "it happens" waits on a loaded machine.
const LONG: Duration = Duration::from_secs(20);

/// The writes a write half accepted, and whether it accepts any yet.
#[derive(Default)]
struct Log {
    writes: Vec<Vec<u8>>,
    /// While false, every write is `Pending` (a peer that does not read).
    open: bool,
    /// The waker of the last write refused while closed.
    waiting: Option<Waker>,
}

/// A write half that records every write it accepts.
#[derive(Clone)]
struct RecordingWrite(Arc<Mutex<Log>>);

impl RecordingWrite {
    /// Accepts every write at once.
    fn open() -> Self {
        Self(Arc::new(Mutex::new(Log {
            open: true,
            ..Log::default()
        })))
    }

    /// Accepts nothing until [`release`](Self::release).
    fn held() -> Self {
        Self(Arc::new(Mutex::new(Log::default())))
    }

    fn release(&self) {
        let mut log = self.0.lock().unwrap();
        log.open = true;
        if let Some(w) = log.waiting.take() {
            w.wake();
        }
    }

    fn writes(&self) -> Vec<Vec<u8>> {
        self.0.lock().unwrap().writes.clone()
    }

    /// Frames written so far (newlines in every write).
    fn frames(&self) -> usize {
        let log = self.0.lock().unwrap();
        log.writes
            .iter()
            .map(|w| w.iter().filter(|&&b| b == b'\n').count())
            .sum()
    }

    /// Waits until `n` frames were written.
    async fn until_frames(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + LONG;
        loop {
            let got = self.frames();
            if got == n {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{got} of {n} frames written"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl AsyncWrite for RecordingWrite {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut log = self.0.lock().unwrap();
        if !log.open {
            log.waiting = Some(cx.waker().clone());
            return Poll::Pending;
        }
        log.writes.push(buf.to_vec());
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn transport(w: &RecordingWrite, capacity: usize) -> (IoTransport, tokio::io::DuplexStream) {
    let (keep, reader) = tokio::io::duplex(64);
    let t = IoTransport::new(
        reader,
        w.clone(),
        IoConfig::new().outbound_capacity(capacity),
    );
    (t, keep)
}

/// Each write's frames, checked to be whole `"sender:index"` lines in each
/// sender's order, with no write over one batch (256 frames).
fn check_order(writes: &[Vec<u8>], senders: usize, rounds: usize) {
    for w in writes {
        let frames = w.iter().filter(|&&b| b == b'\n').count();
        assert!(frames <= 256, "one write carried {frames} frames");
    }
    let mut next = vec![0usize; senders];
    for line in writes
        .concat()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
    {
        let line = std::str::from_utf8(line).unwrap();
        let (s, i) = line.split_once(':').unwrap();
        let (s, i): (usize, usize) = (s.parse().unwrap(), i.parse().unwrap());
        assert_eq!(i, next[s], "sender {s} out of order");
        next[s] += 1;
    }
    assert!(
        next.iter().all(|&n| n == rounds),
        "every frame arrives once: {next:?}"
    );
}

/// Many tasks sending at once (the shape of many calls in flight) while a
/// write is in progress: their frames wait in the queue and then share few
/// writes, no write carries more than one batch, and every frame arrives
/// whole and in each sender's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_queued_behind_a_write_share_few_bounded_writes() {
    const TASKS: usize = 64;
    const ROUNDS: usize = 20;
    let w = RecordingWrite::held();
    let (t, _keep) = transport(&w, TASKS * ROUNDS);
    let start = Arc::new(tokio::sync::Barrier::new(TASKS));
    let mut tasks = Vec::new();
    for s in 0..TASKS {
        let (tx, start) = (t.sender(), start.clone());
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            for i in 0..ROUNDS {
                tx.send(Bytes::from(format!("{s}:{i}"))).await.unwrap();
                tokio::task::yield_now().await;
            }
        }));
    }
    for task in tasks {
        tokio::time::timeout(LONG, task).await.unwrap().unwrap();
    }
    assert!(
        w.writes().is_empty(),
        "nothing written while the peer does not read"
    );
    w.release();
    w.until_frames(TASKS * ROUNDS).await;
    let writes = w.writes();
    check_order(&writes, TASKS, ROUNDS);
    // The first frame's own write, then 1,279 frames in batches of 256.
    assert!(
        writes.len() <= 1 + (TASKS * ROUNDS).div_ceil(256) + 1,
        "{} writes for {} frames",
        writes.len(),
        TASKS * ROUNDS
    );
    drop(t);
}

/// Frames sent back to back by one task (a burst, each closer than 10 µs to
/// the one before) are left to the writer task to coalesce, although the
/// peer reads at once: far fewer writes than frames, in order.
#[tokio::test]
async fn frames_sent_back_to_back_share_writes() {
    const FRAMES: usize = 1000;
    let w = RecordingWrite::open();
    let (t, _keep) = transport(&w, FRAMES);
    let tx = t.sender();
    // No await in between: on this one-thread runtime the writer task runs
    // only after the loop, so once a frame is queued the rest queue behind.
    for i in 0..FRAMES {
        tx.try_send(Bytes::from(format!("0:{i}"))).unwrap();
    }
    w.until_frames(FRAMES).await;
    let writes = w.writes();
    check_order(&writes, 1, FRAMES);
    assert!(
        writes.len() * 4 < FRAMES,
        "{} writes for {FRAMES} frames",
        writes.len()
    );
    drop(t);
}

/// A lone small frame leaves in one plain write with its newline: one system
/// call, nothing split.
#[tokio::test]
async fn a_lone_small_frame_is_one_write_with_its_newline() {
    let w = RecordingWrite::open();
    let (t, _keep) = transport(&w, 16);
    t.sender()
        .try_send(Bytes::from_static(br#"{"jsonrpc":"2.0","method":"m"}"#))
        .unwrap();
    assert_eq!(
        w.writes(),
        vec![br#"{"jsonrpc":"2.0","method":"m"}"#.to_vec().into_iter().chain([b'\n']).collect::<Vec<u8>>()],
        "written at once by the sender, in one piece"
    );
    drop(t);
}
