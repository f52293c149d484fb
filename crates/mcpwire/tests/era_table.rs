//! The era decision table of `docs/eras.md`, one test per row: what the
//! client does after each answer to its `server/discover` probe, over real
//! Streamable HTTP (a scripted hyper server) and real processes. Each row
//! asserts the era chosen, what reached the server in which order, and that
//! it took no longer than the row allows.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire::http::{HttpConfig, Proxy};
use mcpwire::{ClientConfig, Era, ErrorKind, Server};
use mcpwire_test_support::http::{Reply, Seen, Server as HttpServer};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Longer than any row may take: a row that hangs fails here.
const WAIT: Duration = Duration::from_secs(25);

fn body(seen: &Seen) -> Value {
    serde_json::from_str(seen.body_str()).unwrap_or(Value::Null)
}

fn method(seen: &Seen) -> String {
    body(seen)["method"].as_str().unwrap_or("").to_owned()
}

fn answer(seen: &Seen, result: Value) -> Reply {
    Reply::json(&json!({"jsonrpc": "2.0", "id": body(seen)["id"], "result": result}).to_string())
}

fn discover_result() -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "stateless", "version": "1"}}})
}

fn init_result() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "serverInfo": {"name": "initializes", "version": "1"}})
}

/// A server of the `initialize` era at `/mcp` whose answer to anything
/// before `initialize` is `refusal`; its GET opens an SSE stream that never
/// says anything (as a Streamable HTTP server's may), so a client that
/// wrongly looks for a legacy `endpoint` event there waits.
async fn initializes_after(refusal: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> HttpServer {
    HttpServer::start(move |seen| {
        let reply = match (seen.method.as_str(), method(&seen).as_str()) {
            ("GET", _) => Reply::sse().hold(),
            ("POST", "initialize") => answer(&seen, init_result()),
            ("POST", "ping") => answer(&seen, json!({})),
            ("POST", m) if m.starts_with("notifications/") => Reply::new(202),
            ("POST", _) => refusal(&seen),
            _ => Reply::new(405),
        };
        async move { reply }
    })
    .await
}

fn http(server: &HttpServer) -> mcpwire::HttpServer {
    Server::http(server.url("/mcp")).config(HttpConfig::new().proxy(Proxy::none()))
}

/// Connects with the defaults (`EraChoice::Auto`), bounded by [`WAIT`].
async fn connect(
    server: &HttpServer,
    config: ClientConfig,
) -> (Result<mcpwire::Client, mcpwire::Error>, Duration) {
    let started = Instant::now();
    let outcome = tokio::time::timeout(WAIT, mcpwire::connect(http(server), config))
        .await
        .expect("the connection settles in time");
    (outcome, started.elapsed())
}

/// The requests the server saw: `METHOD rpc-method`.
fn seen(server: &HttpServer) -> Vec<String> {
    server
        .seen()
        .iter()
        .map(|s| format!("{} {}", s.method, method(s)).trim_end().to_owned())
        .collect()
}

/// Asserts the client initialized over the same Streamable HTTP endpoint
/// right after the refused probe, with no GET before `initialize`.
async fn falls_back_to_initialize(refusal: impl Fn(&Seen) -> Reply + Send + Sync + 'static) {
    let server = initializes_after(refusal).await;
    let (client, took) = connect(&server, ClientConfig::new()).await;
    let client = client.expect("connected");
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(client.server_info().unwrap().name, "initializes");
    client.ping().await.expect("usable");
    client.close().await;
    let seen = seen(&server);
    assert_eq!(
        seen[..3],
        [
            "POST server/discover",
            "POST initialize",
            "POST notifications/initialized"
        ],
        "{seen:?}"
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[tokio::test]
async fn a_discover_result_keeps_the_stateless_era() {
    let server = HttpServer::start(|seen| {
        let reply = match method(&seen).as_str() {
            "server/discover" => answer(&seen, discover_result()),
            _ => Reply::new(405),
        };
        async move { reply }
    })
    .await;
    let (client, _) = connect(&server, ClientConfig::new()).await;
    let client = client.expect("connected");
    assert_eq!(client.era(), Some(Era::Modern));
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    assert!(!seen(&server).iter().any(|s| s.contains("initialize")));
    client.close().await;
}

#[tokio::test]
async fn a_discover_result_on_an_sse_stream_keeps_the_stateless_era() {
    let server = HttpServer::start(|seen| {
        let reply = match method(&seen).as_str() {
            "server/discover" => {
                let msg =
                    json!({"jsonrpc": "2.0", "id": body(&seen)["id"], "result": discover_result()});
                Reply::sse().body(&format!("event: message\ndata: {msg}\n\n"))
            }
            _ => Reply::new(405),
        };
        async move { reply }
    })
    .await;
    let (client, _) = connect(&server, ClientConfig::new()).await;
    assert_eq!(client.expect("connected").era(), Some(Era::Modern));
}

#[tokio::test]
async fn a_json_rpc_error_for_the_probe_falls_back_to_initialize() {
    // Answered as itself, at 200 or at a 4xx (the stateless SDKs' way).
    for status in [200, 400, 404] {
        falls_back_to_initialize(move |seen| {
            let err = json!({"jsonrpc": "2.0", "id": body(seen)["id"],
                "error": {"code": -32601, "message": "Method not found"}});
            Reply::new(status)
                .header("content-type", "application/json")
                .body(&err.to_string())
        })
        .await;
    }
}

/// The Python SDK 1.x in stateless mode: 400 with a JSON-RPC error whose id
/// is not the probe's (`"server-error"`).
#[tokio::test]
async fn a_400_whose_error_names_another_id_falls_back_to_initialize_on_the_same_endpoint() {
    falls_back_to_initialize(|_| {
        let err = json!({"jsonrpc": "2.0", "id": "server-error",
            "error": {"code": -32600, "message": "Bad Request: Unsupported protocol version: 2026-07-28"}});
        Reply::new(400)
            .header("content-type", "application/json")
            .body(&err.to_string())
    })
    .await;
}

#[tokio::test]
async fn any_4xx_without_a_json_rpc_answer_falls_back_to_initialize_on_the_same_endpoint() {
    for status in [400, 404, 405, 406, 409, 415, 422] {
        falls_back_to_initialize(move |_| Reply::new(status).body("no")).await;
    }
}

#[tokio::test]
async fn a_5xx_with_or_without_a_json_rpc_body_falls_back_to_initialize() {
    falls_back_to_initialize(|_| Reply::new(500).body("Internal Server Error")).await;
    falls_back_to_initialize(|seen| {
        let err = json!({"jsonrpc": "2.0", "id": body(seen)["id"],
            "error": {"code": -32603, "message": "Internal error"}});
        Reply::new(500)
            .header("content-type", "application/json")
            .body(&err.to_string())
    })
    .await;
}

#[tokio::test]
async fn a_connection_closed_at_the_probe_falls_back_to_initialize() {
    falls_back_to_initialize(|_| Reply::sse().abort()).await;
}

#[tokio::test]
async fn a_401_at_the_probe_is_an_authorization_error_and_initialize_is_not_tried() {
    // Every POST wants a token, and no authorization server is offered.
    let server = HttpServer::start(|seen| {
        let reply = match seen.method.as_str() {
            "POST" => Reply::new(401).header("www-authenticate", "Bearer realm=\"mcp\""),
            _ => Reply::new(404),
        };
        async move { reply }
    })
    .await;
    let (client, _) = connect(&server, ClientConfig::new()).await;
    let error = client
        .map(|c| format!("{:?}", c.era()))
        .expect_err("needs credentials");
    assert_eq!(error.kind(), ErrorKind::Authorization, "{error}");
    let seen = seen(&server);
    assert!(
        !seen.iter().any(|s| s == "POST initialize"),
        "asked once, not again for initialize: {seen:?}"
    );
}

#[tokio::test]
async fn a_silent_probe_falls_back_after_the_probe_timeout_without_waiting_behind_it() {
    // The probe's POST gets no answer at all, not even headers.
    let server = HttpServer::start(|seen| async move {
        match (seen.method.as_str(), method(&seen).as_str()) {
            ("POST", "server/discover") => {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Reply::new(500)
            }
            ("POST", "initialize") => answer(&seen, init_result()),
            ("POST", _) => Reply::new(202),
            _ => Reply::new(405),
        }
    })
    .await;
    let config = ClientConfig::new().probe_timeout(Duration::from_millis(300));
    let (client, took) = connect(&server, config).await;
    let client = client.expect("connected");
    assert_eq!(client.era(), Some(Era::Legacy));
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(
        seen(&server)[..2],
        ["POST server/discover", "POST initialize"]
    );
    client.close().await;
}

/// A server of 2024-11-05 that speaks only HTTP+SSE: every POST to the SSE
/// URL is refused, and the GET announces the endpoint.
async fn legacy_server() -> HttpServer {
    type Feeds = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<String>>>>;
    let feeds: Feeds = Arc::default();
    HttpServer::start(move |seen| {
        let feeds = feeds.clone();
        async move {
            match (seen.method.as_str(), seen.path.as_str()) {
                ("GET", "/mcp") => {
                    let (tx, rx) = mpsc::unbounded_channel();
                    let mut feeds = feeds.lock().unwrap();
                    let sid = (feeds.len() + 1).to_string();
                    feeds.insert(sid.clone(), tx);
                    Reply::sse()
                        .body(&format!("event: endpoint\ndata: /messages?sid={sid}\n\n"))
                        .feed(rx)
                }
                ("POST", path) if path.starts_with("/messages?sid=") => {
                    let sid = &path["/messages?sid=".len()..];
                    let v = body(&seen);
                    if v.get("id").is_some() {
                        let result = if v["method"] == "initialize" {
                            init_result()
                        } else {
                            json!({})
                        };
                        let msg = json!({"jsonrpc": "2.0", "id": v["id"], "result": result});
                        let tx = feeds.lock().unwrap().get(sid).cloned().unwrap();
                        tx.send(format!("event: message\ndata: {msg}\n\n")).unwrap();
                    }
                    Reply::new(202)
                }
                _ => Reply::new(405),
            }
        }
    })
    .await
}

#[tokio::test]
async fn a_server_that_refuses_initialize_too_is_reached_over_legacy_http_sse() {
    let server = legacy_server().await;
    let (client, _) = connect(&server, ClientConfig::new()).await;
    let client = client.expect("connected");
    assert_eq!(client.era(), Some(Era::Legacy));
    client.ping().await.expect("usable");
    client.close().await;
    let seen = seen(&server);
    assert_eq!(
        seen[..4],
        [
            "POST server/discover",
            "POST initialize",
            "GET",
            "POST initialize"
        ],
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_sse_stream_without_an_endpoint_event_fails_within_seconds_and_says_so() {
    let server = HttpServer::start(|seen| {
        let reply = match seen.method.as_str() {
            "GET" => Reply::sse().hold(),
            _ => Reply::new(404).body("Not Found"),
        };
        async move { reply }
    })
    .await;
    let (client, took) = connect(&server, ClientConfig::new()).await;
    let error = client.expect_err("no MCP endpoint here");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let chain = chain(&error);
    assert!(
        chain.contains("HTTP 404") && chain.contains("sent no endpoint event"),
        "{chain}"
    );
}

fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpwire-era-table-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn a_cached_stateless_era_that_is_refused_now_falls_back_and_the_file_is_corrected() {
    let server = initializes_after(|_| Reply::new(400).body("unknown method")).await;
    let file = scratch("cached-http").join("eras.json");
    let key = format!("http {}", server.url("/mcp"));
    std::fs::write(
        &file,
        json!({ key.clone(): "modern", "http other": "modern" }).to_string(),
    )
    .unwrap();
    let config = ClientConfig::new().era_cache_file(&file);
    let (client, took) = connect(&server, config).await;
    let client = client.expect("connected");
    assert_eq!(client.era(), Some(Era::Legacy));
    assert!(took < Duration::from_secs(5), "took {took:?}");
    client.close().await;
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved[&key], "legacy", "{saved}");
    assert_eq!(saved["http other"], "modern", "{saved}");
}

/// A stdio server of the `initialize` era that exits at any request before
/// `initialize`, logging each start and method.
const EXITS_AT_UNKNOWN: &str = r#"
import json, sys
log = open(sys.argv[1], "a")
log.write("start\n"); log.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    log.write(f"{method}\n"); log.flush()
    if method == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "exits", "version": "1"}}}), flush=True)
    elif method == "ping":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}), flush=True)
    elif method != "notifications/initialized":
        sys.exit(3)
"#;

#[tokio::test]
async fn a_cached_stateless_era_whose_stdio_server_exits_is_corrected_for_good() {
    let dir = scratch("cached-stdio");
    let script = dir.join("server.py");
    std::fs::write(&script, EXITS_AT_UNKNOWN).unwrap();
    let log = dir.join("log");
    let args = [script.to_str().unwrap(), log.to_str().unwrap()];
    let file = dir.join("eras.json");
    // The cache names a stdio server by its resolved program.
    let python = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("python3"))
        .find(|p| p.is_file())
        .expect("python3 on PATH");
    let key = format!("stdio {} {} {}", python.display(), args[0], args[1]);
    std::fs::write(&file, json!({ key.clone(): "modern" }).to_string()).unwrap();
    let config = || ClientConfig::new().era_cache_file(&file);
    let client = tokio::time::timeout(
        WAIT,
        mcpwire::connect(Server::command("python3", args), config()),
    )
    .await
    .expect("in time")
    .expect("connected despite the stale entry");
    assert_eq!(client.era(), Some(Era::Legacy));
    client.ping().await.expect("usable");
    client.close().await;
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved[&key], "legacy", "{saved}");
    let seen = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        [
            "start",
            "server/discover",
            "start",
            "initialize",
            "notifications/initialized",
            "ping"
        ]
    );
}
