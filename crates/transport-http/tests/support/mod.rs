//! A scripted HTTP test server (hyper, HTTP/1.1 and HTTP/2, optional TLS with
//! a test CA) and helpers to drive an `HttpTransport` in tests.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the support code"
)]
#![allow(unreachable_pub, reason = "support code shared by test binaries")]

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, Response, Version};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcpwire_http::{HttpClient, HttpConfig, Proxy, RetryPolicy};
use mcpwire_transport::{Active, Transport, TransportEvent, TransportExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub version: Version,
    pub at: std::time::Instant,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn body_str(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap_or("")
    }

    /// The JSON-RPC method of a POSTed message, if any.
    pub fn rpc_method(&self) -> Option<String> {
        let v: serde_json::Value = serde_json::from_slice(&self.body).ok()?;
        v.get("method")?.as_str().map(str::to_owned)
    }
}

/// A step of a scripted body.
#[derive(Debug, Clone)]
pub enum Chunk {
    Data(Bytes),
    Delay(Duration),
    /// Breaks the connection mid-body.
    Abort,
    /// Keeps the body open until the client goes away.
    Hold,
    /// Sends what arrives on the channel, until it closes.
    Feed(Arc<Mutex<Option<mpsc::UnboundedReceiver<String>>>>),
}

/// A scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Chunk>,
}

impl Reply {
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            chunks: Vec::new(),
        }
    }

    pub fn json(body: &str) -> Self {
        Self::new(200)
            .header("content-type", "application/json")
            .body(body)
    }

    pub fn sse() -> Self {
        Self::new(200)
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-cache")
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn body(mut self, data: &str) -> Self {
        self.chunks
            .push(Chunk::Data(Bytes::copy_from_slice(data.as_bytes())));
        self
    }

    /// One SSE `message` event with `data` (and an id if given).
    pub fn event(self, id: Option<&str>, data: &str) -> Self {
        let mut text = String::new();
        if let Some(id) = id {
            text.push_str(&format!("id: {id}\n"));
        }
        text.push_str("event: message\n");
        text.push_str(&format!("data: {data}\n\n"));
        self.body(&text)
    }

    pub fn delay(mut self, ms: u64) -> Self {
        self.chunks.push(Chunk::Delay(Duration::from_millis(ms)));
        self
    }

    pub fn abort(mut self) -> Self {
        self.chunks.push(Chunk::Abort);
        self
    }

    pub fn feed(mut self, rx: mpsc::UnboundedReceiver<String>) -> Self {
        self.chunks
            .push(Chunk::Feed(Arc::new(Mutex::new(Some(rx)))));
        self
    }

    pub fn hold(mut self) -> Self {
        self.chunks.push(Chunk::Hold);
        self
    }
}

/// A response body fed by a task running the script.
pub struct ChanBody {
    rx: mpsc::Receiver<Result<Bytes, io::Error>>,
}

impl Body for ChanBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.rx
            .poll_recv(cx)
            .map(|item| item.map(|r| r.map(Frame::data)))
    }
}

type Handler =
    Arc<dyn Fn(Seen) -> Pin<Box<dyn Future<Output = Reply> + Send>> + Send + Sync + 'static>;

/// The running server. Dropping it stops accepting.
pub struct Server {
    pub addr: SocketAddr,
    pub tls: bool,
    pub ca_der: Option<Vec<u8>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    connections: Arc<AtomicUsize>,
    chunks: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Starts a plain-HTTP server (HTTP/1.1, or HTTP/2 with prior knowledge).
    pub async fn start<F, Fut>(handler: F) -> Server
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        Self::start_inner(handler, false).await
    }

    /// Starts an HTTPS server with a certificate from a fresh test CA; ALPN
    /// offers h2 and http/1.1.
    pub async fn start_tls<F, Fut>(handler: F) -> Server
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        Self::start_inner(handler, true).await
    }

    async fn start_inner<F, Fut>(handler: F, tls: bool) -> Server
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |seen| Box::pin(handler(seen)));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let chunks = Arc::new(AtomicUsize::new(0));
        let (acceptor, ca_der) = if tls {
            let (acceptor, ca) = test_tls();
            (Some(acceptor), Some(ca))
        } else {
            (None, None)
        };
        let task = {
            let seen = seen.clone();
            let connections = connections.clone();
            let chunks = chunks.clone();
            tokio::spawn(async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        continue;
                    };
                    connections.fetch_add(1, Ordering::SeqCst);
                    // Scripted bodies go out in several writes: without
                    // no-delay, Nagle and delayed ACKs would add 40 ms.
                    let _ = stream.set_nodelay(true);
                    let handler = handler.clone();
                    let seen = seen.clone();
                    let acceptor = acceptor.clone();
                    let chunks = chunks.clone();
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req| {
                            serve(req, handler.clone(), seen.clone(), chunks.clone())
                        });
                        let builder =
                            hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                        match acceptor {
                            Some(acceptor) => {
                                let Ok(stream) = acceptor.accept(stream).await else {
                                    return;
                                };
                                let _ = builder
                                    .serve_connection(TokioIo::new(stream), service)
                                    .await;
                            }
                            None => {
                                let _ = builder
                                    .serve_connection(TokioIo::new(stream), service)
                                    .await;
                            }
                        }
                    });
                }
            })
        };
        Server {
            addr,
            tls,
            ca_der,
            seen,
            connections,
            chunks,
            task,
        }
    }

    /// How many scripted data chunks the server has handed to hyper.
    pub fn chunks_sent(&self) -> usize {
        self.chunks.load(Ordering::SeqCst)
    }

    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        let host = if self.tls { "localhost" } else { "127.0.0.1" };
        format!("{scheme}://{host}:{}{path}", self.addr.port())
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

async fn serve(
    req: Request<Incoming>,
    handler: Handler,
    seen: Arc<Mutex<Vec<Seen>>>,
    chunks: Arc<AtomicUsize>,
) -> Result<Response<ChanBody>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let record = Seen {
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        headers: parts.headers,
        body,
        version: parts.version,
        at: std::time::Instant::now(),
    };
    seen.lock().unwrap().push(record.clone());
    let reply = handler(record).await;
    let (tx, rx) = mpsc::channel(1);
    let mut resp = Response::new(ChanBody { rx });
    *resp.status_mut() = http::StatusCode::from_u16(reply.status).unwrap();
    for (name, value) in &reply.headers {
        resp.headers_mut().append(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    tokio::spawn(async move {
        for chunk in reply.chunks {
            match chunk {
                Chunk::Data(data) => {
                    if tx.send(Ok(data)).await.is_err() {
                        return;
                    }
                    chunks.fetch_add(1, Ordering::SeqCst);
                }
                Chunk::Delay(d) => tokio::time::sleep(d).await,
                Chunk::Abort => {
                    let _ = tx.send(Err(io::Error::other("scripted abort"))).await;
                    return;
                }
                Chunk::Hold => {
                    tx.closed().await;
                    return;
                }
                Chunk::Feed(feed) => {
                    let Some(mut rx) = feed.lock().unwrap().take() else {
                        continue;
                    };
                    loop {
                        tokio::select! {
                            item = rx.recv() => match item {
                                Some(text) => {
                                    if tx.send(Ok(Bytes::from(text))).await.is_err() {
                                        return;
                                    }
                                }
                                None => break,
                            },
                            _ = tx.closed() => return,
                        }
                    }
                }
            }
        }
    });
    Ok(resp)
}

/// A TLS acceptor for `localhost` with a certificate signed by a fresh CA,
/// and that CA's certificate (DER).
fn test_tls() -> (tokio_rustls::TlsAcceptor, Vec<u8>) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
        )
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    (
        tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        ca.as_ref().der().to_vec(),
    )
}

/// A config with a quick retry policy, so tests of retries stay short.
pub fn quick_config() -> HttpConfig {
    // Loopback tests must not depend on the machine's proxy settings.
    HttpConfig::new().proxy(Proxy::none()).retry(
        RetryPolicy::default()
            .initial_delay(Duration::from_millis(20))
            .max_delay(Duration::from_millis(100))
            .max_attempts(5)
            .max_elapsed(Duration::from_secs(30)),
    )
}

pub fn client() -> HttpClient {
    HttpClient::new(quick_config()).unwrap()
}

/// Generous: "it happens" waits on a loaded machine.
pub const WAIT: Duration = Duration::from_secs(20);

/// The next event, within [`WAIT`].
pub async fn next(t: &mut impl Transport) -> TransportEvent {
    tokio::time::timeout(WAIT, t.next_event())
        .await
        .expect("timed out waiting for a transport event")
        .expect("transport ended")
}

/// The next frame as a JSON value, failing on any other event.
pub async fn next_frame(t: &mut impl Transport) -> serde_json::Value {
    t.set_active(Active::Once);
    match next(t).await {
        TransportEvent::Frame(f) => serde_json::from_slice(&f).unwrap(),
        other => panic!("expected a frame, got {other:?}"),
    }
}

/// An SSE `message` event's text.
pub fn sse_message(id: Option<&str>, data: &str) -> String {
    match id {
        Some(id) => format!("id: {id}\nevent: message\ndata: {data}\n\n"),
        None => format!("event: message\ndata: {data}\n\n"),
    }
}

pub fn frame(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

pub const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
pub const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

pub fn init_result(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-06-18","capabilities":{{}},"serverInfo":{{"name":"s","version":"1"}}}}}}"#
    )
}

pub fn result(id: u64, value: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{value}}}"#)
}

/// Waits until `cond` holds on what the server saw, within [`WAIT`].
pub async fn wait_seen(server: &Server, cond: impl Fn(&[Seen]) -> bool) -> Vec<Seen> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let seen = server.seen();
        if cond(&seen) {
            return seen;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition never held; seen: {seen:#?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
