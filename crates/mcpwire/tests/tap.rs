//! The message tap only observes: a session with a tap sends the same bytes
//! and the same headers as one without, over stdio and over Streamable HTTP
//! in both eras, and the tap sees every frame, with the headers it went
//! with.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::http::{HttpConfig, Proxy};
use mcpwire::transport::{Direction, Tap, Tapped};
use mcpwire::{ClientConfig, Era, Server};
use mcpwire_test_support::http::{Reply, Seen, Server as HttpServer};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// Header fields, in order.
type Fields = Vec<(String, String)>;

/// What a tap saw: direction, frame, headers.
#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<(Direction, String, Fields)>>);

impl Tap for Recorder {
    fn frame(&self, tapped: &Tapped<'_>) {
        let headers = tapped
            .headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        self.0.lock().unwrap().push((
            tapped.direction,
            String::from_utf8_lossy(tapped.frame).into_owned(),
            headers,
        ));
    }
}

fn body(seen: &Seen) -> Value {
    serde_json::from_str(seen.body_str()).unwrap_or(Value::Null)
}

fn answer(seen: &Seen, result: Value) -> Reply {
    Reply::json(&json!({"jsonrpc": "2.0", "id": body(seen)["id"], "result": result}).to_string())
}

/// A server of either era: `modern` answers `server/discover`, else it
/// refuses it and initializes with a session.
async fn server(modern: bool) -> HttpServer {
    HttpServer::start(move |seen| {
        let method = body(&seen)["method"].as_str().unwrap_or("").to_owned();
        let reply = match (seen.method.as_str(), method.as_str()) {
            ("POST", "server/discover") if modern => answer(
                &seen,
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}),
            ),
            ("POST", "server/discover") => Reply::new(400).body("unknown"),
            ("POST", "initialize") => answer(
                &seen,
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"}}),
            )
            .header("mcp-session-id", "session-1"),
            ("POST", "tools/list") => answer(
                &seen,
                json!({"tools": [{"name": "echo", "inputSchema": {"type": "object",
                    "properties": {"who": {"type": "string", "x-mcp-header": "Who"}}}}]}),
            ),
            ("POST", "tools/call") => answer(
                &seen,
                json!({"content": [{"type": "text", "text": "hi"}]}),
            ),
            ("POST", _) => Reply::new(202),
            _ => Reply::new(405),
        };
        async move { reply }
    })
    .await
}

/// What the server received: method, body and every header but `host`
/// (each server has its own port).
fn wire(server: &HttpServer) -> Vec<(String, String, Fields)> {
    server
        .seen()
        .iter()
        .map(|s| {
            let headers = s
                .headers
                .iter()
                .filter(|(n, _)| n.as_str() != "host")
                .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("?").to_owned()))
                .collect();
            (s.method.clone(), s.body_str().to_owned(), headers)
        })
        .collect()
}

async fn session(server: &HttpServer, tap: Option<Arc<Recorder>>) -> Era {
    let http = Server::http(server.url("/mcp"))
        .config(HttpConfig::new().proxy(Proxy::none()))
        .bearer_token("secret-token-1")
        .expect("a valid token");
    let mut config = ClientConfig::new();
    if let Some(tap) = tap {
        config = config.tap(tap);
    }
    let client = tokio::time::timeout(WAIT, mcpwire::connect(http, config))
        .await
        .expect("in time")
        .expect("connected");
    client
        .call_tool("echo", &json!({"who": "ada"}))
        .await
        .expect("called");
    let era = client.era().unwrap();
    client.close().await;
    era
}

#[tokio::test]
async fn over_http_the_tap_changes_no_byte_and_no_header_in_either_era() {
    for modern in [true, false] {
        let plain = server(modern).await;
        let tapped = server(modern).await;
        let recorder = Arc::new(Recorder::default());
        let era = session(&plain, None).await;
        assert_eq!(session(&tapped, Some(recorder.clone())).await, era);
        assert_eq!(era == Era::Modern, modern);
        assert_eq!(wire(&plain), wire(&tapped), "modern: {modern}");

        // The tap saw each POSTed frame with the headers it went with, the
        // credential redacted.
        let seen = recorder.0.lock().unwrap();
        let posts: Vec<_> = tapped
            .seen()
            .into_iter()
            .filter(|s| s.method == "POST")
            .collect();
        let sent: Vec<_> = seen
            .iter()
            .filter(|(d, ..)| *d == Direction::Sent)
            .collect();
        assert_eq!(sent.len(), posts.len(), "{seen:?}");
        for ((_, frame, headers), post) in sent.iter().zip(&posts) {
            assert_eq!(frame, post.body_str());
            // All but the framing fields hyper writes itself.
            let shown_fields = post
                .headers
                .iter()
                .filter(|(n, _)| !["host", "content-length"].contains(&n.as_str()));
            for (name, value) in shown_fields {
                let shown = headers
                    .iter()
                    .find(|(n, _)| n == name.as_str())
                    .map(|(_, v)| v);
                let want = if name == "authorization" {
                    "[redacted]"
                } else {
                    value.to_str().unwrap()
                };
                assert_eq!(shown.map(String::as_str), Some(want), "{name} of {frame}");
            }
        }
        assert!(!format!("{seen:?}").contains("secret-token-1"));
        let received = seen
            .iter()
            .filter(|(d, ..)| *d == Direction::Received)
            .count();
        assert!(received >= 2, "{seen:?}");
        if modern {
            let call = sent
                .iter()
                .find(|(_, f, _)| f.contains("tools/call"))
                .unwrap();
            assert!(
                call.2
                    .iter()
                    .any(|(n, v)| n == "mcp-param-who" && v == "ada"),
                "{call:?}"
            );
        }
    }
}

/// A stdio server that writes every line it receives to a file (its first
/// argument), and answers as a server of the `initialize` era.
const RECORDING_SERVER: &str = r#"
import json, sys
log = open(sys.argv[1], "w")
for line in sys.stdin:
    log.write(line); log.flush()
    msg = json.loads(line)
    m = msg.get("method")
    if "id" not in msg:
        continue
    if m == "initialize":
        r = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "rec", "version": "1"}}
    elif m == "tools/call":
        r = {"content": [{"type": "text", "text": "hi"}]}
    elif m == "tools/list":
        r = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": r}), flush=True)
"#;

#[tokio::test]
async fn over_stdio_the_tap_changes_no_byte() {
    let dir = std::env::temp_dir().join(format!("mcpwire-tap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("server.py");
    std::fs::write(&script, RECORDING_SERVER).unwrap();
    let mut logs = Vec::new();
    let recorder = Arc::new(Recorder::default());
    for (name, tap) in [("plain", None), ("tapped", Some(recorder.clone()))] {
        let log = dir.join(name);
        let server = Server::command("python3", [script.to_str().unwrap(), log.to_str().unwrap()]);
        let mut config = ClientConfig::new();
        if let Some(tap) = tap {
            config = config.tap(tap);
        }
        let client = tokio::time::timeout(WAIT, mcpwire::connect(server, config))
            .await
            .expect("in time")
            .expect("connected");
        client
            .call_tool("echo", &json!({"who": "ada"}))
            .await
            .unwrap();
        client.close().await;
        logs.push(std::fs::read_to_string(&log).unwrap());
    }
    assert_eq!(logs[0], logs[1]);
    let seen = recorder.0.lock().unwrap();
    let sent: Vec<&str> = seen
        .iter()
        .filter(|(d, ..)| *d == Direction::Sent)
        .map(|(_, f, _)| f.as_str())
        .collect();
    assert_eq!(sent, logs[1].lines().collect::<Vec<_>>());
    assert!(
        seen.iter().all(|(_, _, h)| h.is_empty()),
        "no headers on stdio"
    );
    let received = seen
        .iter()
        .filter(|(d, ..)| *d == Direction::Received)
        .count();
    assert_eq!(received, 3, "discover refused, initialize, call: {seen:?}");
}
