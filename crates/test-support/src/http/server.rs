//! The scripted server: a handler maps each request to a [`Reply`].

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
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::tls::{TestCert, TestTls};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The HTTP method.
    pub method: String,
    /// The path and query.
    pub path: String,
    /// The request headers.
    pub headers: HeaderMap,
    /// The whole request body.
    pub body: Bytes,
    /// The HTTP version.
    pub version: Version,
    /// When the server had read the whole request.
    pub at: std::time::Instant,
}

impl Seen {
    /// A header's value, if present and visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as UTF-8 (empty if it is not).
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
    /// Sends these bytes.
    Data(Bytes),
    /// Waits.
    Delay(Duration),
    /// Breaks the connection mid-body.
    Abort,
    /// Keeps the body open until the client goes away.
    Hold,
    /// Sends what arrives on the channel, until it closes.
    Feed(Arc<Mutex<Option<mpsc::UnboundedReceiver<String>>>>),
    /// Sends `f(0)`, `f(1)`, ... until `f` returns `None`, each piece made
    /// only once the previous one was taken: a long body never held whole.
    Generate(Generator),
}

/// The piece maker of [`Chunk::Generate`].
#[derive(Clone)]
pub struct Generator(pub Arc<dyn Fn(usize) -> Option<Bytes> + Send + Sync>);

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Generator")
    }
}

/// A scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, step by step.
    pub chunks: Vec<Chunk>,
}

impl Reply {
    /// An empty answer with `status`.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            chunks: Vec::new(),
        }
    }

    /// `200 application/json` with `body`.
    pub fn json(body: &str) -> Self {
        Self::new(200)
            .header("content-type", "application/json")
            .body(body)
    }

    /// `200 text/event-stream`, events to be added.
    pub fn sse() -> Self {
        Self::new(200)
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-cache")
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds body bytes without copying them (a large body, say).
    pub fn data(mut self, data: Bytes) -> Self {
        self.chunks.push(Chunk::Data(data));
        self
    }

    /// Adds body text.
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

    /// Waits `ms` milliseconds before the next step.
    pub fn delay(mut self, ms: u64) -> Self {
        self.chunks.push(Chunk::Delay(Duration::from_millis(ms)));
        self
    }

    /// Breaks the connection here.
    pub fn abort(mut self) -> Self {
        self.chunks.push(Chunk::Abort);
        self
    }

    /// Sends what arrives on `rx` until it closes.
    pub fn feed(mut self, rx: mpsc::UnboundedReceiver<String>) -> Self {
        self.chunks
            .push(Chunk::Feed(Arc::new(Mutex::new(Some(rx)))));
        self
    }

    /// Sends the pieces `f` makes, one at a time, until it returns `None`.
    pub fn generate(mut self, f: impl Fn(usize) -> Option<Bytes> + Send + Sync + 'static) -> Self {
        self.chunks.push(Chunk::Generate(Generator(Arc::new(f))));
        self
    }

    /// Keeps the body open until the client goes away.
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

/// The running server. Dropping it stops accepting and ends every
/// connection it served.
pub struct Server {
    /// Where it listens (127.0.0.1).
    pub addr: SocketAddr,
    /// Whether it speaks TLS.
    pub tls: bool,
    /// The test CA's certificate (DER), to trust it.
    pub ca_der: Option<Vec<u8>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    connections: Arc<AtomicUsize>,
    chunks: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
    served: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
        for conn in self.served.lock().unwrap().drain(..) {
            conn.abort();
        }
    }
}

impl Server {
    /// Starts a plain-HTTP server (HTTP/1.1, or HTTP/2 with prior knowledge).
    pub async fn start<F, Fut>(handler: F) -> Server
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        Self::start_inner(handler, None, "127.0.0.1:0".parse().unwrap(), true).await
    }

    /// Starts a plain-HTTP server whose sockets keep Nagle's algorithm on
    /// (no `TCP_NODELAY`), as tokio's and hyper-util's defaults leave them.
    pub async fn start_nagle<F, Fut>(handler: F) -> Server
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        Self::start_inner(handler, None, "127.0.0.1:0".parse().unwrap(), false).await
    }

    /// Starts a plain-HTTP server on `addr` (a port a dropped server used:
    /// a restart behind the same URL).
    pub async fn start_on<F, Fut>(addr: SocketAddr, handler: F) -> Server
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        Self::start_inner(handler, None, addr, true).await
    }

    /// Starts an HTTPS server with a certificate from a fresh test CA; ALPN
    /// offers h2 and http/1.1.
    pub async fn start_tls<F, Fut>(handler: F) -> Server
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        Self::start_with_tls(TestTls::new(TestCert::Valid), handler).await
    }

    /// Starts an HTTPS server with the certificate of `tls` (an expired
    /// one, say).
    pub async fn start_with_tls<F, Fut>(tls: TestTls, handler: F) -> Server
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        Self::start_inner(handler, Some(tls), "127.0.0.1:0".parse().unwrap(), true).await
    }

    async fn start_inner<F, Fut>(
        handler: F,
        tls: Option<TestTls>,
        addr: SocketAddr,
        nodelay: bool,
    ) -> Server
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |seen| Box::pin(handler(seen)));
        let listener = bind(addr).await;
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let chunks = Arc::new(AtomicUsize::new(0));
        let served = Arc::new(Mutex::new(Vec::<AbortHandle>::new()));
        let is_tls = tls.is_some();
        let (acceptor, ca_der) = match tls {
            Some(tls) => (Some(tls.acceptor), Some(tls.ca_der)),
            None => (None, None),
        };
        let task = {
            let seen = seen.clone();
            let connections = connections.clone();
            let chunks = chunks.clone();
            let served = served.clone();
            tokio::spawn(async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        continue;
                    };
                    connections.fetch_add(1, Ordering::SeqCst);
                    // Scripted bodies go out in several writes: without
                    // no-delay, Nagle and delayed ACKs would add 40 ms.
                    if nodelay {
                        let _ = stream.set_nodelay(true);
                    }
                    let handler = handler.clone();
                    let seen = seen.clone();
                    let acceptor = acceptor.clone();
                    let chunks = chunks.clone();
                    let conn = tokio::spawn(async move {
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
                    let mut served = served.lock().unwrap();
                    served.retain(|c| !c.is_finished());
                    served.push(conn.abort_handle());
                }
            })
        };
        Server {
            addr,
            tls: is_tls,
            ca_der,
            seen,
            connections,
            chunks,
            task,
            served,
        }
    }

    /// How many scripted data chunks the server has handed to hyper.
    pub fn chunks_sent(&self) -> usize {
        self.chunks.load(Ordering::SeqCst)
    }

    /// The URL of `path` on this server (`localhost` for TLS, whose
    /// certificate names it).
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        let host = if self.tls { "localhost" } else { "127.0.0.1" };
        format!("{scheme}://{host}:{}{path}", self.addr.port())
    }

    /// Every request received so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Forgets the requests received so far (a long-running test keeps its
    /// memory flat).
    pub fn clear_seen(&self) {
        self.seen.lock().unwrap().clear();
    }

    /// How many connections were accepted.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// How many accepted connections are still open (their client has not
    /// closed them).
    pub fn open_connections(&self) -> usize {
        let served = self.served.lock().unwrap();
        served.iter().filter(|c| !c.is_finished()).count()
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
                Chunk::Generate(Generator(f)) => {
                    let mut i = 0;
                    while let Some(piece) = f(i) {
                        if tx.send(Ok(piece)).await.is_err() {
                            return;
                        }
                        chunks.fetch_add(1, Ordering::SeqCst);
                        i += 1;
                    }
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

/// Binds `addr`; a fixed port a dropped server held may take a moment to be
/// released (its accept task ends on its next poll), so that is retried for
/// up to 2 s.
async fn bind(addr: SocketAddr) -> TcpListener {
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    loop {
        match TcpListener::bind(addr).await {
            Ok(l) => return l,
            Err(e) if addr.port() != 0 && std::time::Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => panic!("cannot bind {addr}: {e}"),
        }
    }
}
