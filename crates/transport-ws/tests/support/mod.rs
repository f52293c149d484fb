//! A scripted WebSocket server on 127.0.0.1 (tokio-tungstenite's server
//! side): each test accepts one connection, chooses what the upgrade
//! answers, and then plays a script against the server end of the socket.

#![allow(dead_code, unreachable_pub, reason = "each test binary uses a part")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, StatusCode};
use mcpwire_transport::{CloseReason, Transport, TransportEvent, TransportExt};
use mcpwire_ws::{WsConfig, WsConnector, WsTransport};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// The server end of one connection.
pub type ServerWs = WebSocketStream<TcpStream>;

/// What the upgrade answer says.
#[derive(Debug, Clone)]
pub enum Upgrade {
    /// 101 with `Sec-WebSocket-Protocol: mcp`.
    Mcp,
    /// 101 with no subprotocol.
    NoSubprotocol,
    /// 101 with this subprotocol.
    Subprotocol(&'static str),
    /// This status with a `WWW-Authenticate` header and a body.
    Refuse(u16),
}

/// A server that accepts one connection.
pub struct Server<T> {
    pub url: String,
    /// The upgrade request's headers, once it arrived.
    pub headers: Arc<Mutex<Option<HeaderMap>>>,
    pub task: JoinHandle<T>,
}

/// Listens on 127.0.0.1, answers the first upgrade as `upgrade` says, and
/// runs `script` on the connection if it was accepted.
pub async fn serve<F, Fut, T>(upgrade: Upgrade, script: F) -> Server<Option<T>>
where
    F: FnOnce(ServerWs) -> Fut + Send + 'static,
    Fut: Future<Output = T> + Send,
    T: Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let headers = Arc::new(Mutex::new(None));
    let seen = headers.clone();
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        // The error type is tungstenite's, not ours to shrink.
        #[allow(clippy::result_large_err, reason = "tungstenite's callback signature")]
        let callback = move |req: &Request, mut resp: Response| {
            *seen.lock().unwrap() = Some(req.headers().clone());
            let h = resp.headers_mut();
            match upgrade {
                Upgrade::Mcp => {
                    h.insert("sec-websocket-protocol", "mcp".parse().unwrap());
                }
                Upgrade::NoSubprotocol => {}
                Upgrade::Subprotocol(p) => {
                    h.insert("sec-websocket-protocol", p.parse().unwrap());
                }
                Upgrade::Refuse(status) => {
                    let mut refusal = ErrorResponse::new(Some("no entry".into()));
                    *refusal.status_mut() = StatusCode::from_u16(status).unwrap();
                    refusal
                        .headers_mut()
                        .insert("www-authenticate", "Bearer realm=\"test\"".parse().unwrap());
                    return Err(refusal);
                }
            }
            Ok(resp)
        };
        // The server side sends what the test asks, however large.
        let config = WebSocketConfig::default()
            .max_message_size(None)
            .max_frame_size(None);
        match tokio_tungstenite::accept_hdr_async_with_config(tcp, callback, Some(config)).await {
            Ok(ws) => Some(script(ws).await),
            Err(_) => None,
        }
    });
    Server { url, headers, task }
}

/// A client configuration for tests: no keepalive unless a test sets one,
/// short close bound.
pub fn config() -> WsConfig {
    WsConfig::new()
        .ping_interval(None)
        .close_timeout(Duration::from_millis(500))
}

/// Connects with `config`.
pub async fn connect(url: &str, config: WsConfig) -> WsTransport {
    let connector = WsConnector::new(config).unwrap();
    WsTransport::connect(&connector, url).await.unwrap()
}

/// The next event within `limit` (panics on a timeout).
pub async fn event_within<T: Transport>(t: &mut T, limit: Duration) -> Option<TransportEvent> {
    tokio::time::timeout(limit, t.next_event())
        .await
        .expect("no event in time")
}

/// The next event, within 10 s.
pub async fn event<T: Transport>(t: &mut T) -> Option<TransportEvent> {
    event_within(t, Duration::from_secs(10)).await
}

/// Events until `Closed`, which is returned with the ones before it.
pub async fn until_closed<T: Transport>(t: &mut T) -> (Vec<TransportEvent>, CloseReason) {
    let mut before = Vec::new();
    loop {
        match event(t).await {
            Some(TransportEvent::Closed(reason)) => return (before, reason),
            Some(other) => before.push(other),
            None => panic!("Ready(None) before Closed"),
        }
    }
}

/// The `Display` of the error inside a close reason or an error event.
pub fn describe(reason: &CloseReason) -> String {
    match reason {
        CloseReason::Error(e) => {
            let mut out = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                out.push_str(": ");
                out.push_str(&s.to_string());
                source = s.source();
            }
            out
        }
        other => other.to_string(),
    }
}

/// Reads raw bytes from the server's socket, bypassing tungstenite (so
/// nothing is answered), until EOF or `limit` bytes; returns them and
/// whether EOF was seen.
pub async fn read_raw(ws: &mut ServerWs, limit: usize, wait: Duration) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + wait;
    while out.len() < limit {
        match tokio::time::timeout_at(deadline, ws.get_mut().read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (out, true),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => break,
        }
    }
    (out, false)
}

/// Reads messages on the server side until the client's close and the end
/// of the connection; returns the text messages seen.
pub async fn drain_texts(ws: &mut ServerWs) -> Vec<String> {
    let mut texts = Vec::new();
    while let Some(Ok(message)) = ws.next().await {
        if let Ok(text) = message.to_text()
            && message.is_text()
        {
            texts.push(text.to_owned());
        }
    }
    texts
}

/// A JSON-RPC notification of about `len` bytes, numbered `n`.
pub fn numbered(n: usize, len: usize) -> String {
    let head = format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"n":{n},"pad":""#);
    let pad = len.saturating_sub(head.len() + 3);
    format!("{head}{}\"}}}}", "x".repeat(pad))
}

/// The `n` of a [`numbered`] frame.
pub fn number_of(frame: &Bytes) -> usize {
    let v: serde_json::Value = serde_json::from_slice(frame).unwrap();
    v["params"]["n"].as_u64().unwrap() as usize
}
