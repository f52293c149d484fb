//! Property: over a real child's stdout pipe, however the child chunks its
//! writes, the transport delivers the same frames in the same order.

// The servers here are `sh`, `cat` and `python3` scripts, and shutdowns are
// checked in /proc: Unix only. `windows.rs` holds the Windows tests.
#![cfg(unix)]

mod common;

use std::num::NonZeroU32;

use common::*;
use mcpwire_transport::{Active, CloseReason, Framing, Transport, TransportEvent};
use proptest::prelude::*;

/// Writes the hex-encoded wire bytes in argv[1] in chunks of the sizes in
/// argv[2], flushing after each, then exits.
const CHUNKER: &str = r#"
import sys, os
wire = bytes.fromhex(sys.argv[1])
sizes = [int(s) for s in sys.argv[2].split(",")]
i = 0
k = 0
while i < len(wire):
    n = sizes[k % len(sizes)]
    os.write(1, wire[i:i + n])
    i += n
    k += 1
"#;

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn run(wire: Vec<u8>, chunks: &[usize], framing: Framing, read_buffer: usize) -> Vec<String> {
    let sizes: Vec<String> = chunks.iter().map(|c| c.to_string()).collect();
    let config = python(CHUNKER)
        .arg(to_hex(&wire))
        .arg(sizes.join(","))
        .framing(framing)
        .read_buffer_size(read_buffer)
        .startup_grace(std::time::Duration::ZERO);
    let mut t = spawn(config).await;
    t.set_active(Active::Many(NonZeroU32::MAX));
    let mut got = Vec::new();
    loop {
        match next(&mut t).await {
            TransportEvent::Frame(f) => got.push(String::from_utf8(f.to_vec()).unwrap()),
            TransportEvent::Closed(CloseReason::Exited(e)) => {
                assert_eq!(e.code, Some(0), "{e}");
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    got
}

proptest! {
    // Each case spawns a Python process: few cases, still many chunkings.
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_chunking_of_the_childs_writes_gives_the_same_frames(
        frames in prop::collection::vec(("[a-z0-9 :,]{0,200}", any::<bool>()), 1..30),
        chunks in prop::collection::vec(1usize..600, 1..10),
        content_length in any::<bool>(),
        read_buffer in 1024usize..8192,
    ) {
        let framing = if content_length { Framing::ContentLength } else { Framing::Newline };
        let bodies: Vec<String> = frames.iter().map(|(b, _)| format!("{{\"v\":\"{b}\"}}")).collect();
        let mut wire = bytes::BytesMut::new();
        for (body, (_, crlf)) in bodies.iter().zip(&frames) {
            if content_length {
                mcpwire_codec::encode_content_length(body.as_bytes(), &mut wire).unwrap();
            } else {
                wire.extend_from_slice(body.as_bytes());
                wire.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
        }
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let got = rt.block_on(run(wire.to_vec(), &chunks, framing, read_buffer));
        prop_assert_eq!(got, bodies);
    }
}
