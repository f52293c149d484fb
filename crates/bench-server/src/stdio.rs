//! The stdio front end: a blocking loop over stdin and stdout.
//!
//! Blocking reads are the cheapest way to wait on one pipe: no reactor, no
//! task, no wake-up. Every complete line already read is answered before the
//! answers are written with one `write`, so pipelined requests cost one
//! system call per batch, not one per answer.

use std::io::{self, Read, Write};

use bytes::BytesMut;
use mcpwire_codec::LineDecoder;

use crate::echo::{answer, end_line};

/// How much one read asks for.
const READ_CHUNK: usize = 256 << 10;
/// The longest request line accepted: room for the 10 MiB echo and more.
const MAX_FRAME_LEN: usize = 64 << 20;

/// Serves newline-delimited JSON-RPC on stdin and stdout until stdin ends.
pub(crate) fn serve() -> io::Result<()> {
    let mut stdin = io::stdin().lock();
    let mut stdout = io::stdout().lock();
    let mut decoder = LineDecoder::with_max_frame_len(MAX_FRAME_LEN);
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    let mut out = BytesMut::with_capacity(READ_CHUNK);
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => {
                    if answer(frame, &mut out) {
                        end_line(&mut out);
                    }
                }
                Ok(None) => break,
                // An oversized line is skipped by the decoder; go on with
                // the next one.
                Err(_) => continue,
            }
        }
        if !out.is_empty() {
            stdout.write_all(&out)?;
            stdout.flush()?;
            out.clear();
        }
        let n = stdin.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}
