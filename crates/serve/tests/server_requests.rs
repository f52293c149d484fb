//! The fleet's server requests relayed to the client that caused them:
//! sampling and elicitation during a tool call go to the calling client
//! and its answer (or refusal) back upstream; a client without the
//! capability gets nothing and the server gets `-32601`; two clients
//! calling one server at once are refused rather than guessed; a client
//! that does not answer in time is cancelled; roots are the calling
//! client's, or every client's, and their changes reach the fleet.

mod common;

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use common::{LONG, Raw, serve_raw, within};
use mcpwire_client::types::{
    CompletionReference, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    ListRootsResult, Root,
};
use mcpwire_client::{Client, ClientConfig, EraChoice, HandlerError, TransportFactory};
use mcpwire_codec::jsonrpc::{
    ErrorCode, ErrorObject, Message, encode_error_response, encode_notification, encode_request,
    encode_result,
};
use mcpwire_manager::{Connector, Manager, ServerSpec};
use mcpwire_serve::{ServeOptions, Server, ServerRequests};
use mcpwire_test_support::{MemoryPeer, memory_pair};
use mcpwire_transport::{IoConfig, IoTransport, Transport};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// One upstream server named `label` with prompts `greet` and `wait`,
/// resources `file:///{label}/readme` and `file:///{label}/wait` (`wait`
/// never answered), and a template `file:///{label}/{path}`, whose
/// completion is
/// `"{label}:{name or template}:{value}"`, and whose tools ask its client:
/// `sample` (sampling), `elicit` and `elicit_url` (elicitation in form and
/// URL mode), `roots` (`roots/list`); each answers the call with what it
/// got: `"ok {result}"` or `"error {code} {message}"`. `slow` never
/// answers; `sample_pending` asks for a sample and waits for `withdraw`,
/// which cancels that request and answers both calls. On `notifications/roots/list_changed` it asks for the roots
/// and reports `"{label} roots [uri, ...]"` (sorted) on `seen`.
fn asker(mut peer: MemoryPeer, label: String, seen: mpsc::UnboundedSender<String>) {
    tokio::spawn(async move {
        // Our request id -> the call it answers (`None`: a roots check).
        let mut waiting: std::collections::HashMap<String, Option<Value>> = Default::default();
        let mut next = 0;
        // The `sample_pending` request not answered yet, and its call.
        let mut pending: Option<(String, Value)> = None;
        while let Some(frame) = peer.recv_frame().await {
            match Message::parse(frame).expect("the manager sends JSON-RPC") {
                Message::Request(req) => {
                    let params: Value = req
                        .params
                        .as_ref()
                        .map(|p| p.deserialize().unwrap())
                        .unwrap_or(Value::Null);
                    let call_id = serde_json::to_value(&req.id).unwrap();
                    let ask = |method: &str, params: Value| (method.to_owned(), params);
                    let question = match req.method.as_str() {
                        "initialize" => {
                            answer(
                                &peer,
                                call_id,
                                json!({
                                    "protocolVersion": "2025-11-25",
                                    "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "completions": {}},
                                    "serverInfo": {"name": label, "version": "1"}
                                }),
                            )
                            .await;
                            let _ = seen
                                .send(format!("{label} capabilities {}", params["capabilities"]));
                            continue;
                        }
                        "tools/list" => {
                            let tools: Vec<Value> = [
                                "sample",
                                "sample_pending",
                                "withdraw",
                                "elicit",
                                "elicit_url",
                                "roots",
                                "slow",
                            ]
                            .iter()
                            .map(|t| json!({"name": t, "inputSchema": {"type": "object"}}))
                            .collect();
                            answer(&peer, call_id, json!({"tools": tools})).await;
                            continue;
                        }
                        "prompts/list" => {
                            answer(
                                &peer,
                                call_id,
                                json!({"prompts": [{"name": "greet"}, {"name": "wait"}]}),
                            )
                            .await;
                            continue;
                        }
                        // `wait` (a prompt, a resource) is never answered.
                        "prompts/get" | "resources/read" => {
                            let what = params["name"]
                                .as_str()
                                .or(params["uri"].as_str())
                                .unwrap_or_default();
                            if !what.ends_with("wait") {
                                answer(&peer, call_id, json!({"messages": [], "contents": []}))
                                    .await;
                            }
                            continue;
                        }
                        "resources/list" => {
                            let resources: Vec<Value> = ["readme", "wait"]
                                .iter()
                                .map(|n| json!({"uri": format!("file:///{label}/{n}"), "name": n}))
                                .collect();
                            answer(&peer, call_id, json!({"resources": resources})).await;
                            continue;
                        }
                        "resources/templates/list" => {
                            let template = format!("file:///{label}/{{path}}");
                            answer(
                                &peer,
                                call_id,
                                json!({"resourceTemplates":
                                [{"uriTemplate": template, "name": "files"}]}),
                            )
                            .await;
                            continue;
                        }
                        "completion/complete" => {
                            let what = params["ref"]["name"]
                                .as_str()
                                .or(params["ref"]["uri"].as_str());
                            let value = format!(
                                "{label}:{}:{}",
                                what.unwrap_or_default(),
                                params["argument"]["value"].as_str().unwrap_or_default()
                            );
                            answer(&peer, call_id, json!({"completion": {"values": [value]}}))
                                .await;
                            continue;
                        }
                        "tools/call" => {
                            match params["name"].as_str().unwrap_or_default() {
                                "sample" => ask(
                                    "sampling/createMessage",
                                    json!({
                                        "messages": [{"role": "user", "content": {"type": "text", "text": format!("from {label}")}}],
                                        "maxTokens": 5
                                    }),
                                ),
                                "elicit" => ask(
                                    "elicitation/create",
                                    json!({
                                        "message": "your name?",
                                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"},
                                        "city": {"type": "string", "default": "Paris"}}}
                                    }),
                                ),
                                "elicit_url" => ask(
                                    "elicitation/create",
                                    json!({
                                        "mode": "url", "message": "sign in", "url": "https://example.com/x",
                                        "elicitationId": "e1"
                                    }),
                                ),
                                "roots" => ask("roots/list", json!({})),
                                "sample_pending" => {
                                    next += 1;
                                    let id = format!("up-{next}");
                                    request(
                                        &peer,
                                        &id,
                                        "sampling/createMessage",
                                        json!({
                                    "messages": [], "maxTokens": 5}),
                                    )
                                    .await;
                                    pending = Some((id, call_id));
                                    continue;
                                }
                                "withdraw" => {
                                    if let Some((id, call)) = pending.take() {
                                        let mut buf = BytesMut::new();
                                        encode_notification(
                                            &mut buf,
                                            "notifications/cancelled",
                                            Some(&json!({"requestId": id})),
                                        )
                                        .unwrap();
                                        let _ = peer.send_frame(buf.freeze()).await;
                                        answer(&peer, call, json!({"content": [{"type": "text", "text": "withdrawn"}]})).await;
                                    }
                                    answer(&peer, call_id, json!({"content": []})).await;
                                    continue;
                                }
                                _ => continue,
                            }
                        }
                        // A server of the 2025 era: `server/discover` (the
                        // client's probe) and anything else is unknown.
                        _ => {
                            let mut buf = BytesMut::new();
                            let error =
                                ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no such method");
                            encode_error_response(&mut buf, Some(&req.id), &error).unwrap();
                            let _ = peer.send_frame(buf.freeze()).await;
                            continue;
                        }
                    };
                    next += 1;
                    let id = format!("up-{next}");
                    waiting.insert(id.clone(), Some(call_id));
                    request(&peer, &id, &question.0, question.1).await;
                }
                Message::Notification(n) if n.method == "notifications/roots/list_changed" => {
                    next += 1;
                    let id = format!("up-{next}");
                    waiting.insert(id.clone(), None);
                    request(&peer, &id, "roots/list", json!({})).await;
                }
                Message::Response(response) => {
                    let id = serde_json::to_value(&response.id).unwrap();
                    let Some(call) = waiting.remove(id.as_str().unwrap_or_default()) else {
                        continue;
                    };
                    let text = match response.outcome {
                        Ok(result) => format!("ok {}", result.deserialize::<Value>().unwrap()),
                        Err(e) => format!("error {} {}", e.code.0, e.message),
                    };
                    match call {
                        Some(call) => {
                            answer(
                                &peer,
                                call,
                                json!({"content": [{"type": "text", "text": text}]}),
                            )
                            .await;
                        }
                        None => {
                            let listed: Value =
                                serde_json::from_str(text.trim_start_matches("ok "))
                                    .unwrap_or_default();
                            let mut uris: Vec<String> = listed["roots"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(|r| r["uri"].as_str().map(str::to_owned))
                                .collect();
                            uris.sort();
                            let _ = seen.send(format!("{label} roots {uris:?}"));
                        }
                    }
                }
                Message::Notification(_) => {}
            }
        }
    });
}

async fn answer(peer: &MemoryPeer, id: Value, result: Value) {
    let id: mcpwire_codec::jsonrpc::Id = serde_json::from_value(id).unwrap();
    let mut buf = BytesMut::new();
    encode_result(&mut buf, &id, &result).unwrap();
    let _ = peer.send_frame(buf.freeze()).await;
}

async fn request(peer: &MemoryPeer, id: &str, method: &str, params: Value) {
    let mut buf = BytesMut::new();
    encode_request(&mut buf, &id.into(), method, Some(&params)).unwrap();
    let _ = peer.send_frame(Bytes::from(buf)).await;
}

/// A fleet of askers named `labels`, relaying through `requests`.
async fn fleet(
    labels: &[&str],
    requests: &ServerRequests,
) -> (Manager, mpsc::UnboundedReceiver<String>) {
    let (seen_tx, seen) = mpsc::unbounded_channel();
    let mut builder = Manager::builder().debounce(Duration::from_millis(10));
    for label in labels {
        let (label, seen_tx) = ((*label).to_owned(), seen_tx.clone());
        let name = label.clone();
        let connector: Connector = Arc::new(move || {
            let (label, seen_tx) = (label.clone(), seen_tx.clone());
            let factory: TransportFactory = Box::new(move || {
                let (t, p) = memory_pair(64);
                asker(p, label.clone(), seen_tx.clone());
                Box::pin(async move { Ok(Box::new(t) as Box<dyn Transport>) })
            });
            Ok(factory)
        });
        builder = builder.server(ServerSpec::with_connector(name, connector));
    }
    let manager = requests.install(builder).build().unwrap();
    let report = within(manager.connect_all()).await.unwrap();
    assert!(report.all_connected(), "{report:?}");
    (manager, seen)
}

/// Serves `manager` to our own client configured by `config`, in the
/// `initialize` era: only its clients get the servers' requests (the
/// stateless era has none outside a request's own input rounds).
async fn connect(manager: &Manager, requests: &ServerRequests, config: ClientConfig) -> Client {
    let options = ServeOptions::new().server_requests(requests.clone());
    serve_to(manager, options, config.era(EraChoice::Legacy)).await
}

/// Serves `manager` with `options` to our own client configured by
/// `config`, over an in-memory byte stream.
async fn serve_to(manager: &Manager, options: ServeOptions, config: ClientConfig) -> Client {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let server = Server::with_options(manager.clone(), options);
    tokio::spawn(async move {
        server
            .serve(IoTransport::from_stream(ours, IoConfig::new()))
            .await
    });
    within(Client::connect(
        IoTransport::from_stream(theirs, IoConfig::new()),
        config,
    ))
    .await
    .unwrap()
}

/// A client whose sampling answers `"{who} says hi"`.
fn sampler(who: &'static str) -> ClientConfig {
    ClientConfig::new().sampling(move |params: CreateMessageParams, _| async move {
        let asked = params.messages[0].text();
        Ok(serde_json::from_value::<CreateMessageResult>(json!({
            "role": "assistant",
            "content": {"type": "text", "text": format!("{who} says hi to {asked}")},
            "model": who
        }))
        .unwrap())
    })
}

async fn text_of(client: &Client, tool: &str) -> String {
    within(client.call_tool(tool, &json!({})))
        .await
        .unwrap()
        .text()
}

/// Waits for the next line on `seen` that starts with `prefix`.
async fn next_seen(seen: &mut mpsc::UnboundedReceiver<String>, prefix: &str) -> String {
    loop {
        let line = within(seen.recv()).await.expect("a line");
        if line.starts_with(prefix) {
            return line;
        }
    }
}

#[tokio::test]
async fn sampling_goes_to_the_client_whose_call_caused_it_and_a_refusal_passes_back() {
    let requests = ServerRequests::new();
    let (manager, mut seen) = fleet(&["a", "b"], &requests).await;
    // The fleet's servers are offered the three capabilities.
    let caps = next_seen(&mut seen, "a capabilities").await;
    assert!(caps.contains("\"sampling\":{}"), "{caps}");
    assert!(caps.contains("\"roots\":{\"listChanged\":true}"), "{caps}");
    assert!(caps.contains("\"elicitation\""), "{caps}");

    let alice = connect(&manager, &requests, sampler("alice")).await;
    let refuses = ClientConfig::new().sampling(|_: CreateMessageParams, _| async {
        Err::<CreateMessageResult, _>(HandlerError::rejected("no thanks"))
    });
    let bob = connect(&manager, &requests, refuses).await;

    // Bob has a call in flight to server b: it does not make him a
    // candidate for server a's requests.
    let bob_slow = tokio::spawn({
        let bob = bob.clone();
        async move { bob.call_tool("b__slow", &json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;

    let text = text_of(&alice, "a__sample").await;
    assert!(text.starts_with("ok "), "{text}");
    assert!(text.contains("alice says hi to from a"), "{text}");

    let text = text_of(&bob, "a__sample").await;
    assert_eq!(text, "error -1 no thanks");
    bob_slow.abort();
    manager.close().await;
}

#[tokio::test]
async fn a_client_without_sampling_gets_no_request_and_the_server_gets_method_not_found() {
    let requests = ServerRequests::new();
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let mut raw = serve_raw(
        &manager,
        ServeOptions::new().server_requests(requests.clone()),
    );
    raw.initialize("2025-11-25").await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "a__sample", "arguments": {}}}))
        .await;
    // The first thing the client gets is its answer: no request came.
    let answer = raw.recv().await;
    assert_eq!(answer["id"], 1, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("error -32601 "), "{text}");
    assert!(text.contains("does not support sampling"), "{text}");
    raw.close().await.unwrap();
    manager.close().await;
}

#[tokio::test]
async fn two_clients_calling_one_server_at_once_are_refused_rather_than_guessed() {
    let requests = ServerRequests::new();
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let alice = connect(&manager, &requests, sampler("alice")).await;
    let bob = connect(&manager, &requests, sampler("bob")).await;
    let bob_slow = tokio::spawn({
        let bob = bob.clone();
        async move { bob.call_tool("a__slow", &json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let text = text_of(&alice, "a__sample").await;
    assert!(text.starts_with("error -32603 2 clients"), "{text}");
    bob_slow.abort();
    manager.close().await;
}

/// A raw client that declares `capabilities`, served with `requests`.
async fn raw_client(manager: &Manager, requests: &ServerRequests, capabilities: Value) -> Raw {
    let mut raw = serve_raw(
        manager,
        ServeOptions::new().server_requests(requests.clone()),
    );
    let answer = raw
        .request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "raw", "version": "0"}}),
        )
        .await;
    assert!(answer.get("result").is_some(), "{answer}");
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    raw
}

#[tokio::test]
async fn a_client_that_does_not_answer_in_time_is_cancelled_and_the_server_told() {
    let requests = ServerRequests::with_timeout(Duration::from_millis(300));
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let mut raw = raw_client(&manager, &requests, json!({"sampling": {}})).await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "a__sample", "arguments": {}}}))
        .await;
    let asked = raw.recv().await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    assert_eq!(
        asked["params"]["messages"][0]["content"]["text"], "from a",
        "{asked}"
    );
    assert_eq!(asked["params"]["maxTokens"], 5);
    // We never answer: the request is withdrawn, then the call answered.
    let cancelled = raw.recv().await;
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{cancelled}"
    );
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);
    let answer = raw.recv().await;
    assert_eq!(answer["id"], 1, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("error -32603 "), "{text}");
    assert!(text.contains("did not answer"), "{text}");
    // A late answer is dropped, not misread.
    raw.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {}}))
        .await;
    let pong = raw.request(2, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    raw.close().await.unwrap();
    manager.close().await;
}

#[tokio::test]
async fn an_answer_from_a_raw_client_reaches_the_server_as_it_was_given() {
    let requests = ServerRequests::with_timeout(LONG);
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let mut raw = raw_client(&manager, &requests, json!({"sampling": {}})).await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "a__sample", "arguments": {}}}))
        .await;
    let asked = raw.recv().await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    raw.send(json!({"jsonrpc": "2.0", "id": asked["id"], "error":
        {"code": -32000, "message": "model unavailable"}}))
        .await;
    let answer = raw.recv().await;
    assert_eq!(
        answer["result"]["content"][0]["text"], "error -32000 model unavailable",
        "{answer}"
    );
    raw.close().await.unwrap();
    manager.close().await;
}

#[tokio::test]
async fn elicitation_is_relayed_in_the_modes_the_client_declared() {
    let requests = ServerRequests::new();
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let config = ClientConfig::new().elicitation(|params: ElicitParams, _| async move {
        assert_eq!(params.message, "your name?");
        Ok(serde_json::from_value::<ElicitResult>(
            json!({"action": "accept", "content": {"name": "Ada"}}),
        )
        .unwrap())
    });
    let client = connect(&manager, &requests, config).await;
    let text = text_of(&client, "a__elicit").await;
    assert!(text.starts_with("ok "), "{text}");
    assert!(text.contains("\"name\":\"Ada\""), "{text}");
    // Form mode only was declared: a URL-mode request is not sent.
    let text = text_of(&client, "a__elicit_url").await;
    assert!(text.starts_with("error -32601 "), "{text}");
    manager.close().await;
}

fn with_roots(uri: &'static str) -> ClientConfig {
    ClientConfig::new()
        .roots(move |_| async move { Ok(ListRootsResult::new(vec![Root::new(uri, None)])) })
        .roots_list_changed(true)
}

#[tokio::test]
async fn roots_are_the_calling_clients_or_else_every_clients_and_changes_reach_the_fleet() {
    let requests = ServerRequests::new();
    let (manager, mut seen) = fleet(&["a"], &requests).await;
    // A client that declares roots joining: the fleet asks again, and the
    // one client answers.
    let alice = connect(&manager, &requests, with_roots("file:///alice")).await;
    let line = next_seen(&mut seen, "a roots").await;
    assert_eq!(line, r#"a roots ["file:///alice"]"#);
    let bob = connect(&manager, &requests, with_roots("file:///bob")).await;
    let line = next_seen(&mut seen, "a roots").await;
    assert_eq!(line, r#"a roots ["file:///alice", "file:///bob"]"#);

    // During Bob's call, the roots are Bob's alone.
    let text = text_of(&bob, "a__roots").await;
    assert!(text.contains("file:///bob"), "{text}");
    assert!(!text.contains("file:///alice"), "{text}");

    // A client's own change reaches the fleet, which asks again.
    within(alice.roots_list_changed()).await.unwrap();
    let line = next_seen(&mut seen, "a roots").await;
    assert_eq!(line, r#"a roots ["file:///alice", "file:///bob"]"#);

    // Bob leaving changes the roots too.
    bob.close().await;
    let line = next_seen(&mut seen, "a roots").await;
    assert_eq!(line, r#"a roots ["file:///alice"]"#);

    // A client without roots coming and going changes nothing: the fleet
    // is not asked to list them again.
    let carol = raw_client(&manager, &requests, json!({"sampling": {}})).await;
    carol.close().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Ok(line) = seen.try_recv() {
        assert!(!line.starts_with("a roots"), "{line}");
    }
    manager.close().await;
}

/// Posts `body` on a new connection to the session `session` (none for
/// `initialize`) and returns the connection, its answer's head read.
async fn post(
    addr: std::net::SocketAddr,
    session: Option<&str>,
    body: &Value,
) -> (
    String,
    tokio::io::Lines<tokio::io::BufReader<tokio::net::TcpStream>>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let body = body.to_string();
    let mut text = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Authorization: Bearer t0ken\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(id) = session {
        text.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(&body);
    let mut stream = within(tokio::net::TcpStream::connect(addr)).await.unwrap();
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut lines = tokio::io::BufReader::new(stream).lines();
    let mut head = String::new();
    loop {
        let line = within(lines.next_line()).await.unwrap().expect("a head");
        if line.is_empty() {
            return (head, lines);
        }
        head.push_str(&line.to_ascii_lowercase());
        head.push('\n');
    }
}

/// The next SSE event's message on `lines`.
async fn next_event(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::net::TcpStream>>,
) -> Value {
    loop {
        let line = within(lines.next_line()).await.unwrap().expect("an event");
        if let Some(data) = line.strip_prefix("data: ") {
            return serde_json::from_str(data).unwrap();
        }
    }
}

#[tokio::test]
async fn over_http_the_request_comes_on_the_stream_of_the_call_it_belongs_to() {
    let requests = ServerRequests::new();
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::with_options(
        manager.clone(),
        ServeOptions::new().server_requests(requests.clone()),
    );
    tokio::spawn(async move {
        server
            .serve_http(listener, mcpwire_serve::HttpOptions::new("t0ken"))
            .await
    });
    let (head, mut lines) = post(
        addr,
        None,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .to_owned();
    assert_eq!(next_event(&mut lines).await["id"], 0);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (head, _) = post(addr, Some(&session), &initialized).await;
    assert!(head.starts_with("http/1.1 202"), "{head}");

    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "a__sample", "arguments": {}}});
    let (head, mut call_stream) = post(addr, Some(&session), &call).await;
    assert!(head.contains("text/event-stream"), "{head}");
    let asked = next_event(&mut call_stream).await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "over http"}, "model": "m"}});
    let (head, _) = post(addr, Some(&session), &answer).await;
    assert!(head.starts_with("http/1.1 202"), "{head}");
    let done = next_event(&mut call_stream).await;
    assert_eq!(done["id"], 7, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("over http"), "{text}");
    manager.close().await;
}

/// What `client` is offered to complete `argument` from `value`, for a
/// prompt (`prompt:NAME`) or a resource or template (`resource:URI`).
async fn completions(
    client: &Client,
    reference: &str,
    argument: &str,
    value: &str,
) -> Result<Vec<String>, mcpwire_client::Error> {
    let reference = match reference.split_once(':') {
        Some(("prompt", name)) => CompletionReference::Prompt { name: name.into() },
        Some(("resource", uri)) => CompletionReference::Resource { uri: uri.into() },
        _ => panic!("a prompt: or resource: reference, not {reference}"),
    };
    within(client.complete(reference, argument, value, None))
        .await
        .map(|result| result.completion.values)
}

#[tokio::test]
async fn completion_goes_to_the_server_that_owns_the_prompt_or_template() {
    let requests = ServerRequests::new();
    let (manager, _seen) = fleet(&["a", "b"], &requests).await;
    let client = connect(&manager, &requests, ClientConfig::new()).await;
    let caps = client.server_capabilities().unwrap();
    assert!(caps.completions.is_some(), "{caps:?}");

    // Asked of b, under the prompt's own name.
    let values = completions(&client, "prompt:b__greet", "who", "Ad").await;
    assert_eq!(values.unwrap(), ["b:greet:Ad"]);
    let values = completions(&client, "resource:file:///a/{path}", "path", "x").await;
    assert_eq!(values.unwrap(), ["a:file:///a/{path}:x"]);
    // A resource's own URI goes to the server that lists it.
    let values = completions(&client, "resource:file:///b/readme", "part", "y").await;
    assert_eq!(values.unwrap(), ["b:file:///b/readme:y"]);

    let error = completions(&client, "prompt:c__greet", "who", "")
        .await
        .unwrap_err();
    let upstream = error.server_error().expect("a JSON-RPC error");
    assert_eq!(upstream.code.0, -32602, "{upstream:?}");

    // A client of the stateless era completes the same way.
    let modern = ClientConfig::new().era(EraChoice::Modern);
    let stateless = serve_to(&manager, ServeOptions::new(), modern).await;
    let values = completions(&stateless, "prompt:b__greet", "who", "Zo").await;
    assert_eq!(values.unwrap(), ["b:greet:Zo"]);
    manager.close().await;
}

#[tokio::test]
async fn an_elicitation_answer_goes_upstream_as_the_client_gave_it() {
    let requests = ServerRequests::with_timeout(LONG);
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let mut raw = raw_client(&manager, &requests, json!({"elicitation": {}})).await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "a__elicit", "arguments": {}}}))
        .await;
    let asked = raw.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["message"], "your name?");
    // `city` has a default the client chose not to fill in.
    raw.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result":
        {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    let answer = raw.recv().await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        r#"ok {"action":"accept","content":{"name":"Ada"}}"#,
        "{answer}"
    );
    raw.close().await.unwrap();
    manager.close().await;
}

#[tokio::test]
async fn a_session_dropped_without_ending_is_no_longer_a_client_of_the_relay() {
    let requests = ServerRequests::new();
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let alice = connect(&manager, &requests, sampler("alice")).await;
    let mut bob = raw_client(&manager, &requests, json!({"sampling": {}})).await;
    // Each answered after the `initialized` before it was handled.
    within(alice.ping()).await.unwrap();
    bob.request(1, "ping", json!({})).await;
    assert!(
        format!("{requests:?}").contains("clients: 2, entries: 2"),
        "{requests:?}"
    );
    // Bob's serving future is dropped (aborted), not ended.
    bob.served.abort();
    let _ = bob.served.await;
    // Showing the count forgets the dead entry.
    assert!(
        format!("{requests:?}").contains("clients: 1, entries: 1"),
        "{requests:?}"
    );
    manager.close().await;
}

#[tokio::test]
async fn a_request_the_server_cancels_is_withdrawn_from_the_client() {
    let requests = ServerRequests::with_timeout(LONG);
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let mut raw = raw_client(&manager, &requests, json!({"sampling": {}})).await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "a__sample_pending", "arguments": {}}}))
        .await;
    let asked = raw.recv().await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "a__withdraw", "arguments": {}}}))
        .await;
    let mut cancelled = None;
    let mut answered = Vec::new();
    while cancelled.is_none() || answered.len() < 2 {
        let message = raw.recv().await;
        if message["method"] == "notifications/cancelled" {
            cancelled = Some(message["params"]["requestId"].clone());
        } else {
            assert!(message.get("result").is_some(), "{message}");
            answered.push(message["id"].clone());
        }
    }
    assert_eq!(cancelled.as_ref(), Some(&asked["id"]));
    answered.sort_by_key(|id| id.as_i64());
    assert_eq!(answered, [json!(1), json!(2)]);
    raw.close().await.unwrap();
    manager.close().await;
}

#[tokio::test]
async fn a_prompt_or_resource_read_in_flight_counts_for_its_own_server_only() {
    let requests = ServerRequests::new();
    let (manager, _seen) = fleet(&["a", "b"], &requests).await;
    let alice = connect(&manager, &requests, sampler("alice")).await;
    for (method, params, to_a) in [
        ("prompts/get", json!({"name": "a__wait"}), true),
        ("prompts/get", json!({"name": "b__wait"}), false),
        ("resources/read", json!({"uri": "file:///a/wait"}), true),
        ("resources/read", json!({"uri": "file:///b/wait"}), false),
    ] {
        let mut bob = raw_client(&manager, &requests, json!({"sampling": {}})).await;
        bob.send(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .await;
        // Handled in order: the request is in flight once this is answered.
        bob.request(2, "ping", json!({})).await;
        let text = text_of(&alice, "a__sample").await;
        if to_a {
            assert!(
                text.starts_with("error -32603 2 clients"),
                "{params}: {text}"
            );
        } else {
            assert!(text.contains("alice says hi"), "{params}: {text}");
        }
        bob.close().await.unwrap();
    }
    manager.close().await;
}

/// A call of the stateless era makes its client no candidate for the
/// server's requests (that era has no requests from server to client
/// outside a request's own input rounds): the request goes to the one
/// initialized client instead.
#[tokio::test]
async fn a_stateless_clients_call_does_not_draw_the_servers_requests() {
    let requests = ServerRequests::new();
    let (manager, _seen) = fleet(&["a"], &requests).await;
    let alice = connect(&manager, &requests, sampler("alice")).await;

    let options = ServeOptions::new().server_requests(requests.clone());
    let modern = sampler("stateless").era(EraChoice::Modern);
    let stateless = serve_to(&manager, options, modern).await;

    let text = text_of(&stateless, "a__sample").await;
    assert!(text.starts_with("ok "), "{text}");
    assert!(text.contains("alice says hi"), "{text}");
    drop(alice);
    manager.close().await;
}
