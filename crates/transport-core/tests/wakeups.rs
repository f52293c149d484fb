//! Lost wake-ups between the senders' direct writes and the writer task
//! (issue 18): sequential request/answer round trips, each bounded, over
//! write halves that remember only the last waker they were polled with.
//!
//! The transport under test plays the server: it answers each request it
//! receives through its own [`FrameSender`](mcpwire_transport::FrameSender),
//! as a real server does. The test plays the client: it sends one request,
//! waits (bounded) for the answer, and only then sends the next, so an
//! answer left unsent shows as a timeout instead of being pushed out by the
//! next request.

// Unix pipes (`F_SETPIPE_SZ`, tokio's `unix::pipe`) are what this test
// shrinks to force partial writes; on other platforms it is not built.
#![cfg(unix)]

use std::io::{self, Write};
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use mcpwire_transport::{Active, IoConfig, IoTransport, Transport, TransportEvent, TransportExt};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::task::JoinHandle;

/// How long one round trip may take before its answer counts as stranded:
/// generous for a loaded machine, far below "forever".
const ROUND_TRIP: Duration = Duration::from_secs(10);

/// An `AsyncWrite` shaped like tokio's `Stdout` (its `Blocking` wrapper):
/// `poll_write` copies the bytes and hands them to a blocking-pool job, then
/// answers `Ready` at once; a later `poll_write` or `poll_flush` first waits
/// for that job, through its `JoinHandle`, which keeps one waker only, the
/// last one it was polled with. `poll_flush` runs the inner flush as a job
/// of its own, which takes `flush_delay`.
struct SingleWakerWrite<W> {
    inner: Option<W>,
    job: Option<JoinHandle<(io::Result<()>, W)>>,
    need_flush: bool,
    flush_delay: Duration,
    /// How many times a job was polled while not finished (the waker it was
    /// polled with replaced the one before).
    pending_polls: Arc<AtomicUsize>,
}

impl<W: Write + Send + Unpin + 'static> SingleWakerWrite<W> {
    fn new(inner: W, flush_delay: Duration) -> Self {
        Self {
            inner: Some(inner),
            job: None,
            need_flush: false,
            flush_delay,
            pending_polls: Arc::default(),
        }
    }

    /// Waits for the job in flight, if any, with the caller's waker.
    fn poll_job(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(job) = self.job.as_mut() {
            let polled = Pin::new(job).poll(cx);
            if polled.is_pending() {
                self.pending_polls.fetch_add(1, Ordering::Relaxed);
            }
            let (result, inner) = ready!(polled).map_err(io::Error::other)?;
            self.job = None;
            self.inner = Some(inner);
            result?;
        }
        Poll::Ready(Ok(()))
    }
}

impl<W: Write + Send + Unpin + 'static> AsyncWrite for SingleWakerWrite<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_job(cx))?;
        let mut inner = self.inner.take().expect("idle");
        let data = buf.to_vec();
        self.job = Some(tokio::task::spawn_blocking(move || {
            (inner.write_all(&data), inner)
        }));
        self.need_flush = true;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_job(cx))?;
            if !self.need_flush {
                return Poll::Ready(Ok(()));
            }
            self.need_flush = false;
            let mut inner = self.inner.take().expect("idle");
            let delay = self.flush_delay;
            self.job = Some(tokio::task::spawn_blocking(move || {
                std::thread::sleep(delay);
                (inner.flush(), inner)
            }));
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

/// The answer to the request line `req` (`{"id":N}`): the same id, padded to
/// `sizes[N % sizes.len()]` bytes exactly (newline not included).
fn answer(req: &[u8], sizes: &[usize]) -> Bytes {
    let id = std::str::from_utf8(req).expect("utf-8");
    let id = id.trim_start_matches("{\"id\":").trim_end_matches('}');
    let n: usize = id.parse().expect("a numeric id");
    // `{"id":` and `,"result":{"pad":"` and `"}}` around the id and the pad.
    let pad = sizes[n % sizes.len()].saturating_sub(id.len() + 27);
    Bytes::from(format!(
        "{{\"id\":{id},\"result\":{{\"pad\":\"{}\"}}}}",
        "p".repeat(pad)
    ))
}

/// Answers every request `t` receives, from its own task, until the peer
/// goes away.
fn serve(mut t: IoTransport, sizes: &'static [usize]) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        t.set_active(Active::Many(NonZeroU32::MAX));
        let tx = t.sender();
        while let Some(event) = t.next_event().await {
            match event {
                TransportEvent::Frame(req) if tx.send(answer(&req, sizes)).await.is_err() => break,
                TransportEvent::Closed(_) => break,
                _ => {}
            }
        }
    })
}

/// Small answers, written in one piece by a sender.
const SMALL: &[usize] = &[64];
/// Answer sizes around the pipe's capacity once [`shrink`] made it one page:
/// below it, one byte over it with the newline (the largest frame a direct
/// write joins with its newline), and well over it.
const AROUND_A_PAGE: &[usize] = &[200, 3000, 4096, 9000, 70_000];

/// Shrinks a pipe to one page, so an answer of a few KiB fills it.
fn shrink(pipe: impl std::os::fd::AsFd) {
    let size = rustix::pipe::fcntl_setpipe_size(&pipe, 4096).expect("F_SETPIPE_SZ");
    assert_eq!(size, 4096);
}

/// Sends `rounds` requests one at a time over `requests`, each only after
/// the answer to the one before arrived on `answers`, within [`ROUND_TRIP`].
/// `slow` makes the reader take the answer in small pieces, with a pause
/// after each, so the pipe between them fills.
async fn round_trips<W, R>(mut requests: W, answers: R, rounds: usize, slow: bool)
where
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let capacity = if slow { 4096 } else { 64 << 10 };
    let mut answers = BufReader::with_capacity(capacity, answers);
    for i in 1..=rounds {
        requests
            .write_all(format!("{{\"id\":{i}}}\n").as_bytes())
            .await
            .expect("the transport reads requests");
        let read = async {
            let mut line = Vec::new();
            loop {
                let chunk = answers.fill_buf().await.expect("read");
                assert!(!chunk.is_empty(), "the transport ended at request {i}");
                let (take, done) = match newline_at(chunk) {
                    Some(at) => (at + 1, true),
                    None => (chunk.len(), false),
                };
                line.extend_from_slice(&chunk[..take]);
                answers.consume(take);
                if done {
                    return line;
                }
                if slow {
                    tokio::time::sleep(Duration::from_micros(200)).await;
                }
            }
        };
        let line = tokio::time::timeout(ROUND_TRIP, read)
            .await
            .unwrap_or_else(|_| {
                panic!("the answer to request {i} of {rounds} was never written (stranded)")
            });
        let want = format!("{{\"id\":{i},");
        assert!(
            line.starts_with(want.as_bytes()),
            "answer {i} out of order: {}",
            String::from_utf8_lossy(&line[..line.len().min(40)])
        );
    }
}

fn newline_at(chunk: &[u8]) -> Option<usize> {
    chunk.iter().position(|&b| b == b'\n')
}

/// Over a write half shaped like tokio's `Stdout`, thousands of sequential
/// answers each arrive. Before the fix, a direct write that came while the
/// writer task waited for its flush polled the write half with a no-op
/// waker, which replaced the writer task's: the flush finished, nobody was
/// woken, and the answer stayed in the hand-off until the next request.
#[tokio::test]
async fn a_single_waker_write_half_never_strands_an_answer() {
    let (requests_in, requests_out) = tokio::io::duplex(64 << 10);
    let (answer_writer, answer_reader) = blocking_pipe();
    let write = SingleWakerWrite::new(answer_writer, Duration::from_micros(300));
    let stolen = write.pending_polls.clone();
    let t = IoTransport::new(requests_in, write, IoConfig::new());
    let server = serve(t, SMALL);
    round_trips(requests_out, answer_reader, 3_000, false).await;
    assert!(
        stolen.load(Ordering::Relaxed) > 0,
        "the write half never had a job in flight when polled: the test did not exercise it"
    );
    server.abort();
}

/// The same, with the pipe full: the pipe is one page, most answers are
/// larger, and the reader takes them slowly, so the write half's jobs block
/// in the kernel until the reader makes room. Fails before the fix too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_waker_write_half_over_a_full_pipe_never_strands_an_answer() {
    let (requests_in, requests_out) = tokio::io::duplex(64 << 10);
    let (answer_writer, answer_reader) = blocking_pipe();
    let write = SingleWakerWrite::new(answer_writer, Duration::from_micros(100));
    let t = IoTransport::new(requests_in, write, IoConfig::new());
    let server = serve(t, AROUND_A_PAGE);
    round_trips(requests_out, answer_reader, 1_000, true).await;
    server.abort();
}

/// Over tokio's own pipe (readiness-based: it keeps the last waker that
/// found it full), one page large, with most answers larger and a slow
/// reader: a direct write of such an answer ends on a full pipe and hands
/// its rest to the writer task, which must be the one woken when the reader
/// makes room. (This is the kind of write half a client has for a child's
/// stdin.) This one passed before the fix as well: the writer task never
/// waited on such a pipe while a sender could poll it, since a pipe's flush
/// never waits. It fails if the hand-off stops waking the writer task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_os_pipe_with_a_slow_reader_never_strands_an_answer() {
    let (requests_in, requests_out) = tokio::io::duplex(64 << 10);
    let (answer_writer, answer_reader) = tokio::net::unix::pipe::pipe().expect("a pipe");
    shrink(&answer_reader);
    let t = IoTransport::new(requests_in, answer_writer, IoConfig::new());
    let server = serve(t, AROUND_A_PAGE);
    round_trips(requests_out, answer_reader, 1_000, true).await;
    server.abort();
}

/// The same with small answers and a fast reader, many times: the direct
/// path's common case over a pipe.
#[tokio::test]
async fn thousands_of_round_trips_over_an_os_pipe() {
    let (requests_in, requests_out) = tokio::io::duplex(64 << 10);
    let (answer_writer, answer_reader) = tokio::net::unix::pipe::pipe().expect("a pipe");
    let t = IoTransport::new(requests_in, answer_writer, IoConfig::new());
    let server = serve(t, SMALL);
    round_trips(requests_out, answer_reader, 5_000, false).await;
    server.abort();
}

/// An OS pipe whose write end is blocking (for [`SingleWakerWrite`]'s jobs,
/// as a process's stdout is) and whose read end is the runtime's.
fn blocking_pipe() -> (std::fs::File, tokio::net::unix::pipe::Receiver) {
    let (writer, reader) = tokio::net::unix::pipe::pipe().expect("a pipe");
    shrink(&reader);
    let writer = writer.into_blocking_fd().expect("a blocking write end");
    (std::fs::File::from(writer), reader)
}
