//! Property: however the peer's writes are chunked, `IoTransport` delivers
//! the same frames in the same order (the framing over the real reader path,
//! not just the sans-IO decoder).

use std::num::NonZeroU32;

use bytes::{Bytes, BytesMut};
use mcpwire_codec::encode_content_length;
use mcpwire_transport::{
    Active, CloseReason, Framing, IoConfig, IoTransport, Transport, TransportEvent, TransportExt,
};
use proptest::prelude::*;
use tokio::io::AsyncWriteExt;

fn frame_strategy() -> impl Strategy<Value = (String, bool)> {
    // JSON-looking bodies with varied lengths, and a CRLF or LF line end.
    ("[a-z0-9 \"\\\\:,{}]{0,300}", any::<bool>()).prop_map(|(body, crlf)| {
        (
            format!("{{\"v\":\"{}\"}}", body.replace(['"', '\\'], "")),
            crlf,
        )
    })
}

async fn run(
    frames: &[(String, bool)],
    chunks: &[usize],
    read_buffer: usize,
    framing: Framing,
) -> Vec<Bytes> {
    let mut wire = BytesMut::new();
    for (f, crlf) in frames {
        match framing {
            Framing::ContentLength => encode_content_length(f.as_bytes(), &mut wire).unwrap(),
            _ => {
                wire.extend_from_slice(f.as_bytes());
                wire.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
        }
    }
    let config = IoConfig::new()
        .read_buffer_size(read_buffer)
        .framing(framing);
    let (mut t, mut peer) = IoTransport::pair(config);
    let chunks = chunks.to_vec();
    let writer = tokio::spawn(async move {
        let mut rest = &wire[..];
        let mut i = 0;
        while !rest.is_empty() {
            let n = chunks[i % chunks.len()].min(rest.len());
            peer.write_all(&rest[..n]).await.unwrap();
            rest = &rest[n..];
            i += 1;
        }
    });
    t.set_active(Active::Many(NonZeroU32::MAX));
    let mut got = Vec::new();
    loop {
        match t.next_event().await.unwrap() {
            TransportEvent::Frame(f) => got.push(f),
            TransportEvent::Closed(CloseReason::Eof) => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    writer.await.unwrap();
    got
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_chunking_gives_the_same_frames(
        frames in prop::collection::vec(frame_strategy(), 0..40),
        chunks in prop::collection::vec(1usize..700, 1..20),
        read_buffer in 1024usize..4096,
        content_length in any::<bool>(),
    ) {
        let framing = if content_length { Framing::ContentLength } else { Framing::Newline };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let got = rt.block_on(run(&frames, &chunks, read_buffer, framing));
        let expected: Vec<&str> = frames.iter().map(|(f, _)| f.as_str()).collect();
        let got: Vec<&str> = got.iter().map(|f| std::str::from_utf8(f).unwrap()).collect();
        prop_assert_eq!(got, expected);
    }
}
