#![no_main]

//! A Streamable HTTP answer, as a hostile server writes it: status line,
//! headers, a JSON or SSE body, in any chunking, then the end of the
//! connection. It is served on loopback to an `HttpTransport` (public API
//! only) that has just sent `initialize`.
//!
//! Whatever the bytes, the transport must not panic, must not deliver a
//! frame over its limit, must not produce events without end, and must
//! close within its close timeout whatever state the answer left it in.
//! (Some answers legitimately leave the request waiting, such as `202` or
//! an SSE stream of notifications only: the client's own timeout covers
//! those, so a quiet transport just ends the input.)

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use mcpwire_http::{HttpClient, HttpConfig, HttpTransport, Proxy, RetryPolicy};
use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

/// The largest frame the transport may deliver in this harness.
const MAX_FRAME: usize = 64 * 1024;

const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;

/// What the loopback server writes: the answer and its write sizes.
type Script = Arc<Mutex<(Vec<u8>, Vec<usize>)>>;

struct Harness {
    runtime: Runtime,
    url: String,
    script: Script,
    client: HttpClient,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let script: Script = Arc::new(Mutex::new((Vec::new(), Vec::new())));
        let addr: SocketAddr = runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("addr");
            let script = script.clone();
            tokio::spawn(async move {
                loop {
                    let Ok((mut stream, _)) = listener.accept().await else {
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let (answer, sizes) = script.lock().unwrap().clone();
                    tokio::spawn(async move {
                        // Read the request's head (enough to get it all
                        // from this client), then answer and close.
                        let mut buf = [0u8; 4096];
                        let _ = stream.read(&mut buf).await;
                        let mut rest = &answer[..];
                        let mut sizes = sizes.iter().cycle();
                        while !rest.is_empty() {
                            let n = (*sizes.next().unwrap_or(&rest.len())).clamp(1, rest.len());
                            if stream.write_all(&rest[..n]).await.is_err() {
                                return;
                            }
                            rest = &rest[n..];
                            tokio::task::yield_now().await;
                        }
                        let _ = stream.shutdown().await;
                    });
                }
            });
            addr
        });
        let config = HttpConfig::new()
            .proxy(Proxy::none())
            .max_frame_len(MAX_FRAME)
            .request_timeout(Duration::from_secs(1))
            .close_timeout(Duration::from_millis(300))
            .retry(RetryPolicy::never());
        Harness {
            url: format!("http://{addr}/mcp"),
            runtime,
            script,
            client: HttpClient::new(config).expect("a client"),
        }
    })
}

fuzz_target!(|raw: &[u8]| {
    let Some((&[s0, s1, s2], answer)) = raw.split_first_chunk::<3>() else {
        return;
    };
    let h = harness();
    let sizes = [s0, s1, s2]
        .iter()
        .map(|&s| usize::from(s) * 4 + 1)
        .collect();
    *h.script.lock().unwrap() = (answer.to_vec(), sizes);
    h.runtime.block_on(async {
        let mut t = HttpTransport::streamable(&h.client, &h.url).expect("a transport");
        t.set_active(Active::Many(std::num::NonZeroU32::new(64).unwrap()));
        t.sender()
            .send(Bytes::from_static(INIT))
            .await
            .expect("the queue takes the first frame");
        let mut events = 0usize;
        // Until a terminal event, or until the transport has been quiet
        // for a moment after the server closed.
        while let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_millis(5), t.next_event()).await
        {
            events += 1;
            assert!(events <= 4 * raw.len() + 16, "events without end");
            match event {
                TransportEvent::Frame(f) => {
                    assert!(f.len() <= MAX_FRAME, "a frame over the limit");
                }
                TransportEvent::Undelivered { .. } | TransportEvent::Closed(_) => break,
                _ => {}
            }
        }
        let closed = tokio::time::timeout(Duration::from_secs(2), t.close()).await;
        assert!(closed.is_ok(), "close did not finish within its bound");
    });
});
