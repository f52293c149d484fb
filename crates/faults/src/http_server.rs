//! A scripted Streamable HTTP MCP server, in process, on
//! `mcpwire-test-support`'s scripted HTTP server: sessions, an `echo` tool,
//! and the misbehaviours the fault cases need.
//!
//! Tools: `echo {message}`; `block` (an SSE answer held open forever; a
//! `notifications/cancelled` for it is recorded); `flood {count}` (an SSE
//! answer with that many `notifications/message` before the result, made
//! piece by piece); `big {bytes}` (a JSON answer with a text that long,
//! made piece by piece); `html` (`200 text/html`); `status500` (a 500
//! with an HTML page); `slow {steps, ms}`
//! (progress every `ms`, then the result).

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use mcpwire_test_support::http::{Reply, Seen, Server};
use serde_json::{Value, json};

/// What the GET stream gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetStream {
    /// `200 text/event-stream`, held open with nothing on it.
    Hold,
    /// This status, empty.
    Status(u16),
}

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct Behaviour {
    /// Answer requests with SSE (else JSON).
    pub sse: bool,
    /// Start each SSE answer with a priming event, written before the
    /// result (two writes, as rmcp's server does).
    pub priming: bool,
    /// The GET stream.
    pub get: GetStream,
    /// The first `count` `tools/call`s get `status` with `Retry-After:
    /// retry_after` seconds.
    pub busy: Option<(u16, u64, usize)>,
    /// Never answer `initialize` (hold the answer open forever).
    pub init_never: bool,
    /// Keep Nagle's algorithm on (no `TCP_NODELAY`).
    pub nagle: bool,
}

impl Default for Behaviour {
    fn default() -> Self {
        Self {
            sse: false,
            priming: false,
            get: GetStream::Hold,
            busy: None,
            init_never: false,
            nagle: false,
        }
    }
}

/// What the server saw, shared with the test.
#[derive(Debug, Default)]
pub struct Record {
    calls: Mutex<HashMap<String, usize>>,
    cancelled: Mutex<Vec<Value>>,
    unknown_session: AtomicUsize,
}

impl Record {
    /// How many requests of `method` arrived (for `tools/call`, also
    /// counted as `tools/call:<tool>`).
    pub fn count(&self, method: &str) -> usize {
        self.calls.lock().unwrap().get(method).copied().unwrap_or(0)
    }

    /// The request ids of the `notifications/cancelled` received.
    pub fn cancelled(&self) -> Vec<Value> {
        self.cancelled.lock().unwrap().clone()
    }

    /// Requests refused with 404 because their session id was unknown.
    pub fn unknown_session(&self) -> usize {
        self.unknown_session.load(Ordering::Relaxed)
    }

    fn bump(&self, key: &str) {
        *self
            .calls
            .lock()
            .unwrap()
            .entry(key.to_owned())
            .or_default() += 1;
    }
}

struct State {
    behaviour: Behaviour,
    prefix: String,
    next: AtomicUsize,
    sessions: Mutex<HashSet<String>>,
    busy_left: AtomicUsize,
    record: Arc<Record>,
}

/// A running scripted server. Dropping it stops it and ends its
/// connections.
pub struct McpHttp {
    server: Server,
    behaviour: Behaviour,
    record: Arc<Record>,
}

/// Distinguishes the session ids of servers restarted on one port.
static INSTANCES: AtomicUsize = AtomicUsize::new(0);

impl McpHttp {
    /// Starts a server on a free port.
    pub async fn start(behaviour: Behaviour) -> McpHttp {
        Self::start_on(behaviour, None).await
    }

    async fn start_on(behaviour: Behaviour, addr: Option<SocketAddr>) -> McpHttp {
        let record = Arc::new(Record::default());
        let state = Arc::new(State {
            prefix: format!("s{}-", INSTANCES.fetch_add(1, Ordering::Relaxed)),
            next: AtomicUsize::new(0),
            sessions: Mutex::new(HashSet::new()),
            busy_left: AtomicUsize::new(behaviour.busy.map_or(0, |b| b.2)),
            record: record.clone(),
            behaviour: behaviour.clone(),
        });
        let handler = move |seen: Seen| {
            let state = state.clone();
            async move { handle(&state, seen) }
        };
        let server = match (addr, behaviour.nagle) {
            (Some(addr), _) => Server::start_on(addr, handler).await,
            (None, true) => Server::start_nagle(handler).await,
            (None, false) => Server::start(handler).await,
        };
        McpHttp {
            server,
            behaviour,
            record,
        }
    }

    /// Stops this server and starts a new one, with no sessions, behind the
    /// same URL.
    pub async fn restart(self) -> McpHttp {
        let addr = self.server.addr;
        let behaviour = self.behaviour.clone();
        drop(self);
        Self::start_on(behaviour, Some(addr)).await
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        self.server.url("/mcp")
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr
    }

    /// What it saw.
    pub fn record(&self) -> &Arc<Record> {
        &self.record
    }

    /// Forgets the requests received so far (see [`Self::http_requests`]).
    pub fn clear_seen(&self) {
        self.server.clear_seen();
    }

    /// Requests received, by HTTP method.
    pub fn http_requests(&self, method: &str) -> usize {
        self.server
            .seen()
            .iter()
            .filter(|s| s.method == method)
            .count()
    }
}

fn handle(state: &State, seen: Seen) -> Reply {
    let session = seen.header("mcp-session-id").map(str::to_owned);
    let known = session
        .as_ref()
        .is_some_and(|s| state.sessions.lock().unwrap().contains(s));
    match seen.method.as_str() {
        "GET" => {
            if !known {
                state.record.unknown_session.fetch_add(1, Ordering::Relaxed);
                return Reply::new(404);
            }
            match state.behaviour.get {
                GetStream::Hold => Reply::sse().hold(),
                GetStream::Status(s) => Reply::new(s),
            }
        }
        "DELETE" => {
            if let Some(s) = session {
                state.sessions.lock().unwrap().remove(&s);
            }
            Reply::new(200)
        }
        "POST" => post(state, &seen, session, known),
        _ => Reply::new(405),
    }
}

fn post(state: &State, seen: &Seen, session: Option<String>, known: bool) -> Reply {
    let Ok(msg) = serde_json::from_slice::<Value>(&seen.body) else {
        return Reply::new(400).body("not JSON");
    };
    let method = msg["method"].as_str().unwrap_or("").to_owned();
    if method == "initialize" {
        state.record.bump("initialize");
        if state.behaviour.init_never {
            return Reply::sse().hold();
        }
        let id = format!(
            "{}{}",
            state.prefix,
            state.next.fetch_add(1, Ordering::Relaxed)
        );
        state.sessions.lock().unwrap().insert(id.clone());
        let version = msg["params"]["protocolVersion"]
            .as_str()
            .unwrap_or("2025-11-25");
        let result = json!({
            "protocolVersion": version,
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "faults-http", "version": "1"}
        });
        return answer(state, &msg["id"], result).header("mcp-session-id", &id);
    }
    if !known {
        state.record.unknown_session.fetch_add(1, Ordering::Relaxed);
        return Reply::new(if session.is_some() { 404 } else { 400 });
    }
    state.record.bump(&method);
    let id = msg["id"].clone();
    if id.is_null() {
        if method == "notifications/cancelled" {
            let request = msg["params"]["requestId"].clone();
            state.record.cancelled.lock().unwrap().push(request);
        }
        return Reply::new(202);
    }
    match method.as_str() {
        "ping" => answer(state, &id, json!({})),
        "tools/list" => {
            let tools: Vec<Value> = ["echo", "block", "flood", "big", "html", "status500", "slow"]
                .iter()
                .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
                .collect();
            answer(state, &id, json!({ "tools": tools }))
        }
        "tools/call" => tool(state, &id, &msg["params"]),
        _ => Reply::json(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}})
                .to_string(),
        ),
    }
}

fn tool(state: &State, id: &Value, params: &Value) -> Reply {
    let name = params["name"].as_str().unwrap_or("");
    state.record.bump(&format!("tools/call:{name}"));
    if let Some((status, retry_after, _)) = state.behaviour.busy {
        let left = state
            .busy_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        if left.is_ok() {
            return Reply::new(status).header("retry-after", &retry_after.to_string());
        }
    }
    let args = &params["arguments"];
    match name {
        "echo" => answer(
            state,
            id,
            text(args["message"].as_str().unwrap_or_default()),
        ),
        "block" => Reply::sse().hold(),
        "status500" => Reply::new(500)
            .header("content-type", "text/html")
            .body("<html><body><h1>500 Internal Server Error</h1></body></html>"),
        "html" => Reply::new(200)
            .header("content-type", "text/html")
            .body("<html><body>Service Unavailable</body></html>"),
        "flood" => flood(id, args["count"].as_u64().unwrap_or(0) as usize),
        "big" => big(id, args["bytes"].as_u64().unwrap_or(0) as usize),
        "slow" => {
            let steps = args["steps"].as_u64().unwrap_or(1);
            let ms = args["ms"].as_u64().unwrap_or(100);
            let token = params["_meta"]["progressToken"].clone();
            let mut reply = Reply::sse();
            for i in 1..=steps {
                reply = reply.delay(ms);
                if !token.is_null() {
                    let p = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": i, "total": steps}});
                    reply = reply.event(None, &p.to_string());
                }
            }
            let done =
                json!({"jsonrpc": "2.0", "id": id, "result": text(&format!("done {steps}"))});
            reply.event(None, &done.to_string())
        }
        other => answer(
            state,
            id,
            json!({"content": [{"type": "text", "text": format!("no tool {other}")}], "isError": true}),
        ),
    }
}

fn text(s: &str) -> Value {
    json!({"content": [{"type": "text", "text": s}]})
}

fn answer(state: &State, id: &Value, result: Value) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    if !state.behaviour.sse {
        return Reply::json(&body);
    }
    let reply = Reply::sse();
    let reply = if state.behaviour.priming {
        // The priming event goes out with the headers; the result a moment
        // later, in a second write.
        reply.body("id: 0\nretry: 3000\ndata: \n\n").delay(2)
    } else {
        reply
    };
    reply.event(Some("1"), &body)
}

/// `count` log notifications, 1,000 to a piece, then the result.
fn flood(id: &Value, count: usize) -> Reply {
    const PER_PIECE: usize = 1000;
    let pieces = count.div_ceil(PER_PIECE);
    let done = format!(
        "event: message\ndata: {}\n\n",
        json!({"jsonrpc": "2.0", "id": id, "result": text(&format!("flooded {count}"))})
    );
    Reply::sse().generate(move |i| {
        if i < pieces {
            let mut s = String::with_capacity(PER_PIECE * 100);
            for n in i * PER_PIECE..((i + 1) * PER_PIECE).min(count) {
                s.push_str("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":");
                s.push_str(&n.to_string());
                s.push_str("}}\n\n");
            }
            Some(Bytes::from(s))
        } else if i == pieces {
            Some(Bytes::from(done.clone()))
        } else {
            None
        }
    })
}

/// A JSON answer whose text is `bytes` long, in 64 KiB pieces.
fn big(id: &Value, bytes: usize) -> Reply {
    const PIECE: usize = 64 * 1024;
    let head =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#);
    let filler = Bytes::from(vec![b'x'; PIECE]);
    let pieces = bytes.div_ceil(PIECE);
    Reply::new(200)
        .header("content-type", "application/json")
        .generate(move |i| match i {
            0 => Some(Bytes::from(head.clone())),
            i if i <= pieces => {
                let len = if i == pieces {
                    bytes - (pieces - 1) * PIECE
                } else {
                    PIECE
                };
                Some(filler.slice(..len))
            }
            i if i == pieces + 1 => Some(Bytes::from_static(b"\"}]}}")),
            _ => None,
        })
}
