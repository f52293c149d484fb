//! The stateless era over real Streamable HTTP (a scripted hyper server):
//! a cancelled request closes its answer stream, which the server sees, and
//! no `notifications/cancelled` is posted; the `subscriptions/listen` stream
//! delivers tagged notifications and is opened again when it breaks; the
//! first `tools/call` lists the tools first, for its parameter headers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::client::{CancellationToken, ListKind};
use mcpwire::http::{HttpConfig, Proxy};
use mcpwire::{ClientConfig, EraChoice, ErrorKind, Server};
use mcpwire_test_support::http::{Reply, Seen, Server as HttpServer};
use serde_json::{Value, json};
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(20);

fn body(seen: &Seen) -> Value {
    serde_json::from_str(seen.body_str()).unwrap_or(Value::Null)
}

fn answer(seen: &Seen, result: Value) -> Reply {
    Reply::json(&json!({"jsonrpc": "2.0", "id": body(seen)["id"], "result": result}).to_string())
}

fn discover(caps: Value) -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": caps,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}}})
}

fn sse(data: Value) -> String {
    format!("event: message\ndata: {data}\n\n")
}

async fn connect(server: &HttpServer) -> mcpwire::Client {
    let http = Server::http(server.url("/mcp")).config(HttpConfig::new().proxy(Proxy::none()));
    let config = ClientConfig::new().era(EraChoice::Modern);
    tokio::time::timeout(WAIT, mcpwire::connect(http, config))
        .await
        .expect("in time")
        .expect("connected")
}

#[tokio::test]
async fn a_cancelled_request_closes_its_answer_stream_and_sends_no_notification() {
    let (feed_tx, feed_rx) = mpsc::unbounded_channel::<String>();
    let feed = Arc::new(Mutex::new(Some(feed_rx)));
    let server = HttpServer::start(move |seen| {
        let feed = feed.clone();
        async move {
            match body(&seen)["method"].as_str() {
                Some("server/discover") => answer(&seen, discover(json!({"tools": {}}))),
                Some("tools/list") => answer(
                    &seen,
                    json!({"tools": [{"name": "slow", "inputSchema": {"type": "object"}}]}),
                ),
                Some("tools/call") => Reply::sse().feed(feed.lock().unwrap().take().unwrap()),
                _ => Reply::new(202),
            }
        }
    })
    .await;
    let client = connect(&server).await;
    let token = CancellationToken::new();
    let call = tokio::spawn({
        let client = client.clone();
        let token = token.clone();
        async move {
            client
                .call_tool("slow", &json!({}))
                .cancel_token(token)
                .await
        }
    });
    tokio::time::timeout(WAIT, async {
        while !server
            .seen()
            .iter()
            .any(|s| s.body_str().contains("tools/call"))
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the call reached the server");
    token.cancel();
    let err = tokio::time::timeout(Duration::from_secs(2), call)
        .await
        .expect("the caller is told at once")
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    tokio::time::timeout(WAIT, feed_tx.closed())
        .await
        .expect("the server saw the answer stream closed");
    // The connection is still good, and nothing else was posted for it.
    client.list_tools(None).await.unwrap();
    assert!(
        !server
            .seen()
            .iter()
            .any(|s| s.body_str().contains("notifications/cancelled")),
        "closing the stream is the cancellation"
    );
}

#[tokio::test]
async fn the_listen_stream_delivers_and_is_opened_again_when_it_breaks() {
    let listens = Arc::new(Mutex::new(0usize));
    let server = HttpServer::start({
        let listens = listens.clone();
        move |seen| {
            let listens = listens.clone();
            async move {
                let msg = body(&seen);
                match msg["method"].as_str() {
                    Some("server/discover") => {
                        answer(&seen, discover(json!({"tools": {"listChanged": true}})))
                    }
                    Some("subscriptions/listen") => {
                        let n = {
                            let mut l = listens.lock().unwrap();
                            *l += 1;
                            *l
                        };
                        let tag = json!({"io.modelcontextprotocol/subscriptionId": msg["id"]});
                        let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                            "params": {"_meta": tag, "notifications": msg["params"]["notifications"]}});
                        let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                            "params": {"_meta": tag}});
                        let reply = Reply::sse().body(&sse(ack)).body(&sse(changed));
                        // The first stream breaks; the next one stays.
                        if n == 1 { reply.delay(20).abort() } else { reply.hold() }
                    }
                    _ => Reply::new(202),
                }
            }
        }
    })
    .await;
    let client = connect(&server).await;
    let mut tools = client.list_changed(ListKind::Tools);
    tokio::time::timeout(WAIT, tools.wait_for(|n| *n >= 2))
        .await
        .expect("a change from each stream")
        .unwrap();
    let asked: Vec<Value> = server
        .seen()
        .iter()
        .map(body)
        .filter(|b| b["method"] == "subscriptions/listen")
        .collect();
    assert_eq!(asked.len(), 2, "opened again once");
    assert_eq!(
        asked[1]["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert_ne!(asked[0]["id"], asked[1]["id"]);
    let post = server
        .seen()
        .into_iter()
        .find(|s| s.body_str().contains("subscriptions/listen"))
        .unwrap();
    assert_eq!(post.header("mcp-method"), Some("subscriptions/listen"));
    client.close().await;
}

/// The stateless era needs the tool's definition to send a call (its
/// `x-mcp-header` parameters become headers), so the first call of a client
/// lists the tools before it, unlike the `initialize` era's (which goes at
/// once; `crates/client/tests/typed_api.rs`).
#[tokio::test]
async fn the_first_call_lists_first_and_carries_the_parameter_headers() {
    let server = HttpServer::start(|seen| async move {
        match body(&seen)["method"].as_str() {
            Some("server/discover") => answer(&seen, discover(json!({"tools": {}}))),
            Some("tools/list") => answer(
                &seen,
                json!({"resultType": "complete", "tools": [{"name": "book", "inputSchema": {
                    "type": "object", "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"}}}}]}),
            ),
            Some("tools/call") => answer(
                &seen,
                json!({"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}),
            ),
            _ => Reply::new(202),
        }
    })
    .await;
    let client = connect(&server).await;
    let result = tokio::time::timeout(
        WAIT,
        client.call_tool("book", &json!({"region": "eu-west", "seat": "12A"})),
    )
    .await
    .expect("in time")
    .unwrap();
    assert_eq!(result.text(), "ok");
    let seen = server.seen();
    let methods: Vec<String> = seen.iter().filter_map(|s| s.rpc_method()).collect();
    let list = methods.iter().position(|m| m == "tools/list");
    let call = methods.iter().position(|m| m == "tools/call");
    assert!(list.is_some() && list < call, "listed first: {methods:?}");
    let post = seen
        .iter()
        .find(|s| s.rpc_method().as_deref() == Some("tools/call"))
        .unwrap();
    assert_eq!(post.header("mcp-name"), Some("book"));
    assert_eq!(post.header("mcp-param-region"), Some("eu-west"));
    client.close().await;
}

fn servers_dir() -> std::path::PathBuf {
    match std::env::var_os("MCPWIRE_SERVERS_DIR") {
        Some(d) => d.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"),
    }
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn python_sdk_server_over_http_listen_and_cancel() {
    let python = servers_dir().join("venv/bin/python");
    assert!(
        python.exists(),
        "{} is not installed: run `cargo xtask servers`",
        python.display()
    );
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../client/tests/mcpserver_script.py");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(&python)
        .arg(&script)
        .args(["streamable-http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("python starts");
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Listening first: a probe refused for want of a listener falls back
    // to `initialize`, which this dual-era server accepts if it came up
    // meanwhile, and the session is then of the legacy era.
    tokio::time::timeout(WAIT, async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the server listens");
    let client = tokio::time::timeout(WAIT, async {
        loop {
            let http = Server::http(url.clone()).config(HttpConfig::new().proxy(Proxy::none()));
            match mcpwire::connect(http, ClientConfig::new()).await {
                Ok(c) => break c,
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    })
    .await
    .expect("the server answers");
    assert_eq!(client.era(), Some(mcpwire::Era::Modern));

    // subscriptions/listen over HTTP: its SSE answer carries both.
    let mut tools = client.list_changed(ListKind::Tools);
    let mut greeting = tokio::time::timeout(WAIT, client.subscribe_resource("fixture://greeting"))
        .await
        .expect("in time")
        .expect("acknowledged");
    client.call_tool("touch", &json!({})).await.unwrap();
    let update = tokio::time::timeout(WAIT, greeting.changed())
        .await
        .expect("an update in time")
        .unwrap();
    assert_eq!(update.uri, "fixture://greeting");
    tokio::time::timeout(WAIT, tools.wait_for(|n| *n >= 1))
        .await
        .expect("a tools change in time")
        .unwrap();

    // A cancelled call closes its stream; the caller is told at once and
    // the client goes on.
    let token = CancellationToken::new();
    let call = tokio::spawn({
        let client = client.clone();
        let token = token.clone();
        async move {
            client
                .call_tool("slow", &json!({"steps": 1000}))
                .cancel_token(token)
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    token.cancel();
    let err = tokio::time::timeout(Duration::from_secs(2), call)
        .await
        .expect("at once")
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    let r = client
        .call_tool("echo", &json!({"message": "still here"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "still here");
    client.close().await;
    let _ = child.kill().await;
}
