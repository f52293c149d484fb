//! Draining the server's stderr, whatever the mode, and keeping its tail.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::BytesMut;
use mcpwire_codec::LineDecoder;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::StderrMode;

/// How many stderr lines are kept for error reports.
pub(crate) const TAIL_LINES: usize = 50;
/// Longer stderr lines are cut to this many bytes.
const MAX_LINE: usize = 4 << 10;
/// How far a capturing owner may fall behind before lines are dropped.
pub(crate) const CAPTURE_BACKLOG: usize = 256;

/// The last [`TAIL_LINES`] lines of stderr, shared between the drain task and
/// the transport. The lock is only ever held to push or copy, never across an
/// await.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn push(&self, line: String) {
        let mut tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }

    /// The lines kept, oldest first.
    pub(crate) fn lines(&self) -> Vec<String> {
        let tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tail.iter().cloned().collect()
    }
}

/// Reads stderr to its end, line by line, doing what `mode` says with each
/// line and keeping the tail. Ends at EOF or on a read error.
pub(crate) async fn drain<R: AsyncRead + Unpin>(
    mut stderr: R,
    mode: StderrMode,
    tail: Tail,
    capture: Option<mpsc::Sender<String>>,
    command: String,
) {
    let mut decoder = LineDecoder::with_max_frame_len(MAX_LINE);
    // Empty until the server writes: a quiet server's stderr costs no
    // buffer (the first read of a burst takes what fits in a few bytes,
    // the rest get room for a whole line).
    let mut buf = BytesMut::new();
    let mut dropped: u64 = 0;
    let mut out = tokio::io::stderr();
    loop {
        let eof = match stderr.read_buf(&mut buf).await {
            Ok(0) | Err(_) => true,
            Ok(_) => false,
        };
        loop {
            let line = if eof {
                decoder.decode_eof(&mut buf)
            } else {
                decoder.decode(&mut buf)
            };
            let line = match line {
                Ok(Some(line)) => String::from_utf8_lossy(&line).into_owned(),
                Ok(None) => break,
                // The decoder discards the rest of an overlong line itself.
                Err(_) => "[stderr line over 4 KiB cut]".to_owned(),
            };
            match mode {
                StderrMode::Inherit => {
                    let mut bytes = line.clone().into_bytes();
                    bytes.push(b'\n');
                    // Our own stderr failing is no reason to stop draining.
                    let _ = out.write_all(&bytes).await;
                }
                StderrMode::Discard => {}
                StderrMode::Capture => {
                    if let Some(tx) = &capture
                        && tx.try_send(line.clone()).is_err()
                    {
                        dropped += 1;
                        if dropped.is_power_of_two() {
                            tracing::warn!(command = %command, dropped, "stderr lines dropped: the owner is not reading events");
                        }
                    }
                }
                StderrMode::Log => {
                    tracing::info!(target: "mcpwire_stdio::stderr", command = %command, "{line}");
                }
            }
            tail.push(line);
        }
        if eof {
            return;
        }
        if buf.is_empty() {
            // Nothing partial is held: let the allocation go until the
            // server writes again.
            buf = BytesMut::new();
        } else {
            buf.reserve(MAX_LINE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_last_lines_and_cuts_long_ones() {
        let mut input = String::new();
        for i in 0..80 {
            input.push_str(&format!("line {i}\n"));
        }
        input.push_str(&"x".repeat(10_000));
        input.push_str("\nlast without newline");
        let tail = Tail::default();
        let (tx, mut rx) = mpsc::channel(1000);
        drain(
            input.as_bytes(),
            StderrMode::Capture,
            tail.clone(),
            Some(tx),
            "t".into(),
        )
        .await;
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "line 32");
        assert_eq!(lines[TAIL_LINES - 2], "[stderr line over 4 KiB cut]");
        assert_eq!(lines[TAIL_LINES - 1], "last without newline");
        assert_eq!(rx.recv().await.unwrap(), "line 0");
    }

    /// Hands out scripted chunks and records the room each read offered.
    struct Script {
        chunks: std::collections::VecDeque<&'static [u8]>,
        offered: Vec<usize>,
    }

    impl AsyncRead for Script {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            self.offered.push(buf.remaining());
            if let Some(chunk) = self.chunks.pop_front() {
                buf.put_slice(chunk);
            }
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn holds_no_buffer_between_bursts() {
        let mut script = Script {
            chunks: [&b"hello\n"[..], b"wor", b"ld\n"].into(),
            offered: Vec::new(),
        };
        let tail = Tail::default();
        drain(
            &mut script,
            StderrMode::Discard,
            tail.clone(),
            None,
            "t".into(),
        )
        .await;
        assert_eq!(tail.lines(), ["hello", "world"]);
        let offered = &script.offered;
        assert_eq!(offered.len(), 4, "{offered:?}");
        // Empty between lines: each burst starts with a small read.
        assert!(offered[0] < 1024 && offered[1] < 1024, "{offered:?}");
        // A partial line gets room for the rest of a whole line.
        assert!(offered[2] >= MAX_LINE, "{offered:?}");
        assert!(offered[3] < 1024, "{offered:?}");
    }

    #[tokio::test]
    async fn capture_never_blocks_on_a_slow_owner() {
        let input = "a\n".repeat(1000);
        let (tx, _rx) = mpsc::channel(2);
        let tail = Tail::default();
        // Would hang if a full channel blocked the drain.
        drain(
            input.as_bytes(),
            StderrMode::Capture,
            tail.clone(),
            Some(tx),
            "t".into(),
        )
        .await;
        assert_eq!(tail.lines().len(), TAIL_LINES);
    }
}
