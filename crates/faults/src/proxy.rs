//! A TCP fault proxy on 127.0.0.1 in front of any server.
//!
//! Every accepted connection is forwarded to the upstream address. The
//! [`Fault`] in force is read for each piece of an answer (upstream to
//! client), so a case can let the handshake through and then break what
//! follows; a byte budget (`CutAfter`, `ResetAfter`) counts from the moment
//! the fault was set.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// What the proxy does to connections.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// Forwards everything.
    Pass,
    /// Holds each piece of an answer this long before forwarding it.
    Delay(Duration),
    /// Forwards this many more answer bytes, then closes both sides
    /// (FIN): a connection cut mid-body.
    CutAfter(usize),
    /// Forwards this many more answer bytes, then resets (RST).
    ResetAfter(usize),
    /// Forwards an answer's headers and half of the body bytes that came
    /// with them, then closes (FIN): a truncated chunked body.
    TruncateBody,
    /// Forwards requests, never answers, never closes (on new and open
    /// connections).
    Stall,
    /// Answers every request with these bytes, then closes.
    Garbage(Bytes),
    /// Forwards answers one byte per interval (a slow-loris server).
    Drip(Duration),
    /// Stops forwarding in both directions without closing anything, on
    /// open and new connections alike: a peer that vanished without FIN or
    /// RST.
    HalfOpen,
}

struct Shared {
    fault: Mutex<(Fault, u64)>,
    accepted: AtomicUsize,
}

impl Shared {
    fn fault(&self) -> (Fault, u64) {
        self.fault.lock().unwrap().clone()
    }
}

/// A running proxy; dropping it stops it and ends every connection it
/// holds.
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: AbortHandle,
    conns: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
        for c in self.conns.lock().unwrap().drain(..) {
            c.abort();
        }
    }
}

impl FaultProxy {
    /// Starts a proxy to `upstream`, passing everything.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            fault: Mutex::new((Fault::Pass, 0)),
            accepted: AtomicUsize::new(0),
        });
        let conns = Arc::new(Mutex::new(Vec::<AbortHandle>::new()));
        let accept = {
            let shared = shared.clone();
            let conns = conns.clone();
            tokio::spawn(async move {
                loop {
                    let Ok((client, _)) = listener.accept().await else {
                        continue;
                    };
                    shared.accepted.fetch_add(1, Ordering::Relaxed);
                    let _ = client.set_nodelay(true);
                    let task = tokio::spawn(serve(client, upstream, shared.clone()));
                    let mut conns = conns.lock().unwrap();
                    conns.retain(|c| !c.is_finished());
                    conns.push(task.abort_handle());
                }
            })
            .abort_handle()
        };
        Ok(FaultProxy {
            addr,
            shared,
            accept,
            conns,
        })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Puts `fault` in force from now on.
    pub fn set(&self, fault: Fault) {
        let mut f = self.shared.fault.lock().unwrap();
        f.1 += 1;
        f.0 = fault;
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::Relaxed)
    }
}

/// An address on 127.0.0.1 where nothing listens: connecting is refused.
pub fn refusing_addr() -> std::io::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.local_addr()
}

async fn serve(client: TcpStream, upstream: SocketAddr, shared: Arc<Shared>) {
    match shared.fault().0 {
        Fault::Stall | Fault::HalfOpen => {
            // Keep the socket, read nothing more, answer nothing.
            let _held = client;
            std::future::pending::<()>().await;
        }
        Fault::Garbage(bytes) => {
            let mut client = client;
            let mut buf = [0u8; 4096];
            let _ = client.read(&mut buf).await;
            let _ = client.write_all(&bytes).await;
            let _ = client.shutdown().await;
        }
        _ => {
            let Ok(server) = TcpStream::connect(upstream).await else {
                return;
            };
            let _ = server.set_nodelay(true);
            let (client_r, client_w) = client.into_split();
            let (server_r, server_w) = server.into_split();
            // Aborted with this task too (the proxy's drop aborts it).
            let up = AbortOnDrop(tokio::spawn(requests(client_r, server_w, shared.clone())));
            answers(server_r, client_w, shared).await;
            drop(up);
        }
    }
}

/// Client to upstream: forwarded unless the proxy went half-open.
async fn requests(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, shared: Arc<Shared>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let Some(n) = read_or_close(&mut from, &mut to, &mut buf).await else {
            return;
        };
        if shared.fault().0 == Fault::HalfOpen {
            std::future::pending::<()>().await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// Upstream to client, through the fault in force.
async fn answers(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, shared: Arc<Shared>) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut generation = u64::MAX;
    let mut sent_since = 0usize;
    loop {
        let Some(n) = read_or_close(&mut from, &mut to, &mut buf).await else {
            return;
        };
        let (fault, g) = shared.fault();
        if g != generation {
            generation = g;
            sent_since = 0;
        }
        let piece = &buf[..n];
        match fault {
            Fault::Stall | Fault::HalfOpen => {
                // Never answer, never close.
                std::future::pending::<()>().await;
            }
            Fault::Pass | Fault::Garbage(_) => {
                if to.write_all(piece).await.is_err() {
                    return;
                }
            }
            Fault::Delay(d) => {
                tokio::time::sleep(d).await;
                if to.write_all(piece).await.is_err() {
                    return;
                }
            }
            Fault::Drip(every) => {
                for b in piece {
                    if to.write_all(std::slice::from_ref(b)).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(every).await;
                }
            }
            Fault::CutAfter(budget) | Fault::ResetAfter(budget) => {
                let room = budget.saturating_sub(sent_since);
                let take = room.min(n);
                let _ = to.write_all(&piece[..take]).await;
                sent_since += take;
                if take < n || sent_since >= budget {
                    if matches!(fault, Fault::ResetAfter(_)) {
                        reset(to);
                    } else {
                        let _ = to.shutdown().await;
                    }
                    return;
                }
            }
            Fault::TruncateBody => {
                let cut = match find(piece, b"\r\n\r\n") {
                    Some(end) => end + 4 + (n - end - 4) / 2,
                    None => n / 2,
                };
                let _ = to.write_all(&piece[..cut]).await;
                let _ = to.shutdown().await;
                return;
            }
        }
    }
}

/// Reads into `buf`; at the end of `from` (or an error) passes the end on
/// to `to` and returns `None`.
async fn read_or_close(
    from: &mut OwnedReadHalf,
    to: &mut OwnedWriteHalf,
    buf: &mut [u8],
) -> Option<usize> {
    match from.read(buf).await {
        Ok(0) | Err(_) => {
            let _ = to.shutdown().await;
            None
        }
        Ok(n) => Some(n),
    }
}

/// Aborts the task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Closes with RST instead of FIN: zero linger, and no shutdown on drop
/// (which would send a FIN first). The socket closes once the read half,
/// held by the aborted request pump, is dropped too.
fn reset(half: OwnedWriteHalf) {
    let _ = half.as_ref().set_zero_linger();
    half.forget();
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
