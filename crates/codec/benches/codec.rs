//! Decoding throughput of the framings and the cost of envelope
//! classification. Run with `cargo bench -p mcpwire-codec --bench codec`;
//! `docs/benchmarks.md` records figures and the exact command.
//!
//! Each decoder is measured on 100-byte messages (many small frames in one
//! buffer), and on single 1 MiB and 16 MiB frames: already buffered
//! (`whole`), and arriving in 64 KiB reads, which includes copying each read
//! into the buffer as a reader would and shows that a growing partial frame
//! is not rescanned. The read buffer either starts at 64 KiB and grows
//! (`reads_64k`) or is allocated at the frame's size up front
//! (`reads_64k_presized`); the `baseline` group measures the copying alone.

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mcpwire_codec::jsonrpc::{Id, Message, encode_request_vec};
use mcpwire_codec::{LineDecoder, SseDecoder};

const READ: usize = 64 << 10;

/// A JSON-RPC response of exactly `len` bytes (`len >= 64`).
fn json_message(len: usize) -> Vec<u8> {
    let head = br#"{"jsonrpc":"2.0","id":1,"result":{"text":""#;
    let tail = br#""}}"#;
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(head);
    out.extend(
        b"lorem ipsum dolor sit amet "
            .iter()
            .cycle()
            .take(len - head.len() - tail.len()),
    );
    out.extend_from_slice(tail);
    out
}

/// `count` copies of `message`, each wrapped as `prefix message suffix`.
fn stream(message: &[u8], count: usize, prefix: &[u8], suffix: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(count * (prefix.len() + message.len() + suffix.len()));
    for _ in 0..count {
        out.extend_from_slice(prefix);
        out.extend_from_slice(message);
        out.extend_from_slice(suffix);
    }
    Bytes::from(out)
}

/// The framings under test, driven the same way.
trait Framing {
    const NAME: &'static str;
    const PREFIX: &'static [u8];
    const SUFFIX: &'static [u8];
    /// Decodes every complete item in `buf`, returning how many there were.
    fn drain(&mut self, buf: &mut BytesMut) -> usize;
    fn fresh() -> Self;
}

impl Framing for LineDecoder {
    const NAME: &'static str = "newline";
    const PREFIX: &'static [u8] = b"";
    const SUFFIX: &'static [u8] = b"\n";
    fn drain(&mut self, buf: &mut BytesMut) -> usize {
        let mut n = 0;
        while let Some(frame) = self.decode(buf).expect("valid input") {
            black_box(frame);
            n += 1;
        }
        n
    }
    fn fresh() -> Self {
        LineDecoder::new()
    }
}

impl Framing for SseDecoder {
    const NAME: &'static str = "sse";
    const PREFIX: &'static [u8] = b"data: ";
    const SUFFIX: &'static [u8] = b"\n\n";
    fn drain(&mut self, buf: &mut BytesMut) -> usize {
        let mut n = 0;
        while let Some(event) = self.decode(buf).expect("valid input") {
            black_box(event);
            n += 1;
        }
        n
    }
    fn fresh() -> Self {
        SseDecoder::new()
    }
}

fn bench_framing<F: Framing>(c: &mut Criterion) {
    let mut group = c.benchmark_group(F::NAME);

    // 10,000 messages of 100 bytes, all in one buffer.
    let small = stream(&json_message(100), 10_000, F::PREFIX, F::SUFFIX);
    group.throughput(Throughput::Bytes(small.len() as u64));
    group.bench_function("100B_messages", |b| {
        b.iter_batched(
            || BytesMut::from(&small[..]),
            |mut buf| {
                let n = F::fresh().drain(&mut buf);
                assert_eq!(n, 10_000);
            },
            BatchSize::LargeInput,
        )
    });

    for (label, size) in [("1MiB", 1usize << 20), ("16MiB", 16 << 20)] {
        let big = stream(&json_message(size), 1, F::PREFIX, F::SUFFIX);
        group.throughput(Throughput::Bytes(big.len() as u64));
        group.sample_size(if size > 1 << 20 { 10 } else { 30 });
        group.bench_function(format!("{label}_frame/whole"), |b| {
            b.iter_batched(
                || BytesMut::from(&big[..]),
                |mut buf| assert_eq!(F::fresh().drain(&mut buf), 1),
                BatchSize::LargeInput,
            )
        });
        for (variant, capacity) in [("reads_64k", READ), ("reads_64k_presized", big.len())] {
            group.bench_function(format!("{label}_frame/{variant}"), |b| {
                b.iter(|| {
                    let mut dec = F::fresh();
                    let mut buf = BytesMut::with_capacity(capacity);
                    let mut n = 0;
                    for read in big.chunks(READ) {
                        buf.extend_from_slice(read);
                        n += dec.drain(&mut buf);
                    }
                    assert_eq!(n, 1);
                })
            });
        }
    }
    group.finish();
}

/// The cost of the reads alone: copying a frame into a buffer in 64 KiB
/// pieces and taking it out, with no decoder, into a buffer that grows from
/// 64 KiB (`copy_only`) or is allocated at the frame's size (`presized`). The
/// `reads_64k` figures above include this.
fn bench_copy_baseline(c: &mut Criterion) {
    let mut group = c.benchmark_group("baseline");
    for (label, size) in [("1MiB", 1usize << 20), ("16MiB", 16 << 20)] {
        let big = stream(&json_message(size), 1, b"", b"\n");
        group.throughput(Throughput::Bytes(big.len() as u64));
        group.sample_size(if size > 1 << 20 { 10 } else { 30 });
        for (variant, capacity) in [("copy_only", READ), ("copy_only_presized", big.len())] {
            group.bench_function(format!("{label}_frame/reads_64k_{variant}"), |b| {
                b.iter(|| {
                    let mut buf = BytesMut::with_capacity(capacity);
                    for read in big.chunks(READ) {
                        buf.extend_from_slice(read);
                    }
                    black_box(buf.split().freeze())
                })
            });
        }
    }
    group.finish();
}

fn bench_envelope(c: &mut Criterion) {
    let mut group = c.benchmark_group("envelope");
    let request = Bytes::from_static(
        br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello, world"}}}"#,
    );
    group.throughput(Throughput::Bytes(request.len() as u64));
    group.bench_function("parse_request_111B", |b| {
        b.iter(|| Message::parse(black_box(request.clone())).expect("valid request"))
    });
    let response = Bytes::from(json_message(1 << 20));
    group.throughput(Throughput::Bytes(response.len() as u64));
    group.sample_size(30);
    group.bench_function("parse_response_1MiB", |b| {
        b.iter(|| Message::parse(black_box(response.clone())).expect("valid response"))
    });
    // A result of just over 1 MiB, parsed and read as a value the way the
    // client reads a tool's answer (its text decoded in the frame's own
    // memory). Each round takes a fresh frame, made outside the timing.
    let frame = json_message((1 << 20) + 64);
    group.throughput(Throughput::Bytes(frame.len() as u64));
    group.bench_function("take_result_1MiB", |b| {
        b.iter_batched(
            || Bytes::from(frame.clone()),
            |frame| {
                let Ok(Message::Response(response)) = Message::parse(frame) else {
                    panic!("a response")
                };
                let payload = response.outcome.expect("a result");
                payload.take::<serde_json::Value>().expect("valid result")
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// A request built the way the client builds one (`encode_request_vec`):
/// a small `tools/call`, and one carrying a 1 MiB text argument.
fn bench_encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode");
    let id = Id::Number(42);
    let small = serde_json::json!({"name": "echo", "arguments": {"message": "x".repeat(100)}});
    group.bench_function("request_100B_text", |b| {
        b.iter(|| {
            let mut buf = Vec::with_capacity(256);
            encode_request_vec(&mut buf, &id, "tools/call", Some(black_box(&small)))
                .expect("encodes");
            buf
        })
    });
    let text: String = "lorem ipsum dolor sit amet "
        .chars()
        .cycle()
        .take(1 << 20)
        .collect();
    let large = serde_json::json!({"name": "echo", "arguments": {"message": text}});
    group.throughput(Throughput::Bytes(1 << 20));
    group.sample_size(30);
    group.bench_function("request_1MiB_text", |b| {
        let mut buf = Vec::with_capacity(2 << 20);
        b.iter(|| {
            buf.clear();
            encode_request_vec(&mut buf, &id, "tools/call", Some(black_box(&large)))
                .expect("encodes");
        })
    });
    group.finish();
}

fn newline(c: &mut Criterion) {
    bench_framing::<LineDecoder>(c);
}

fn sse(c: &mut Criterion) {
    bench_framing::<SseDecoder>(c);
}

criterion_group!(
    benches,
    newline,
    sse,
    bench_copy_baseline,
    bench_envelope,
    bench_encode
);
criterion_main!(benches);
