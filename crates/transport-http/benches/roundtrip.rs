//! Request/response round trips through `HttpTransport` against an in-process
//! hyper server on loopback: JSON answers over HTTP/1.1 and HTTP/2, and SSE
//! answers. Run with `cargo bench -p mcpwire-http`.

#![allow(missing_docs, reason = "a benchmark binary")]

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mcpwire_http::{Http2, HttpClient, HttpTransport};
use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};
use support::{Reply, Server, quick_config};

fn answer_id(seen: &support::Seen) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
    v["id"].as_u64().unwrap()
}

async fn json_server() -> Server {
    Server::start(|seen| async move { Reply::json(&support::result(answer_id(&seen), "{}")) }).await
}

async fn sse_server() -> Server {
    Server::start(|seen| async move {
        Reply::sse().event(None, &support::result(answer_id(&seen), "{}"))
    })
    .await
}

async fn round_trips(t: &mut HttpTransport, iters: u64) -> Duration {
    let tx = t.sender();
    let start = Instant::now();
    for i in 0..iters {
        let req = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
        tx.send(bytes::Bytes::from(req)).await.unwrap();
        t.set_active(Active::Once);
        match t.next_event().await {
            Some(TransportEvent::Frame(_)) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("http_round_trip");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));
    for (name, h2, sse) in [
        ("json_http1", false, false),
        ("json_h2c", true, false),
        ("sse_http1", false, true),
    ] {
        let (server, mut t) = rt.block_on(async {
            let server = if sse {
                sse_server().await
            } else {
                json_server().await
            };
            let client = HttpClient::new(quick_config().http2(if h2 {
                Http2::PriorKnowledge
            } else {
                Http2::Negotiated
            }))
            .unwrap();
            let t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
            (server, t)
        });
        group.bench_function(name, |b| {
            b.iter_custom(|iters| rt.block_on(round_trips(&mut t, iters)))
        });
        eprintln!("{name}: {} connection(s) opened", server.connections());
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
