//! The stateless era (2026-07-28) over Streamable HTTP: no session is made
//! or named and none of the session bound is used; the header fields are
//! checked against the body; an unknown method is a 404 with a JSON-RPC
//! body; progress comes on the request's own stream and closing that
//! stream cancels the call; the project's own client in that era uses the
//! fleet, and a client of the `initialize` era on the same endpoint keeps
//! its session.

mod common;

use std::net::SocketAddr;

use common::raw_http::*;
use common::*;
use mcpwire_client::{CancellationToken, Client, ClientConfig, Era, EraChoice, ErrorKind};
use mcpwire_http::auth::Auth;
use mcpwire_http::{HeaderValue, HttpClient, HttpConfig, HttpTransport, Proxy};
use mcpwire_serve::{HttpOptions, Server};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const TOKEN: &str = "t0ken";
const BEARER: &str = "Bearer t0ken";
const FLEET: &[(&str, &[&str])] = &[("a", &["echo", "slow"]), ("b", &["add"])];
const V: &str = "2026-07-28";

async fn endpoint(fleet: &Fleet, options: HttpOptions) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::new(fleet.manager.clone());
    tokio::spawn(async move { server.serve_http(listener, options).await });
    addr
}

/// A request of the stateless era, `_meta` at `version`.
fn request(id: i64, method: &str, mut params: Value, version: &str) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "progressToken": "p"
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// The header fields of a stateless `method` request, `name` its
/// `Mcp-Name`.
fn headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![
        ("Authorization", BEARER),
        ("Accept", "application/json"),
        ("MCP-Protocol-Version", V),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    headers
}

/// Our client in `era` over Streamable HTTP at `addr`.
async fn client(addr: SocketAddr, era: EraChoice) -> Client {
    let config = HttpConfig::new()
        .proxy(Proxy::none())
        .auth(Auth::None)
        .header(
            http::header::AUTHORIZATION,
            HeaderValue::from_static(BEARER),
        );
    let http = HttpClient::new(config).unwrap();
    let transport = HttpTransport::streamable(&http, &format!("http://{addr}/mcp")).unwrap();
    within(Client::connect(transport, ClientConfig::new().era(era)))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_stateless_request_makes_no_session_and_uses_none_of_the_bound() {
    let fleet = fleet(FLEET).await;
    // One session at most, already taken by a client of the 2025 era.
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN).max_sessions(1)).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let legacy = [("Authorization", BEARER), ("Accept", "application/json")];
    let first = send(addr, "POST", &legacy, &init).await;
    let session = first
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();
    assert_eq!(send(addr, "POST", &legacy, &init).await.status, 503);

    for id in 0..3 {
        let answer = send(
            addr,
            "POST",
            &headers("tools/list", None),
            &request(id, "tools/list", json!({}), V),
        )
        .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(answer.header("mcp-session-id"), None);
        // A whole answer says its length rather than coming in chunks.
        let length: usize = answer.header("content-length").unwrap().parse().unwrap();
        assert_eq!(length, answer.body.len());
        assert_eq!(
            answer.json()["result"]["tools"].as_array().unwrap().len(),
            3
        );
    }
    // A session header on a stateless request is ignored, not echoed, and
    // an unknown one is no 404.
    let mut with_session = headers("server/discover", None);
    with_session.push(("Mcp-Session-Id", "no-such-session"));
    let found = send(
        addr,
        "POST",
        &with_session,
        &request(7, "server/discover", json!({}), V),
    )
    .await;
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(found.header("mcp-session-id"), None);
    assert_eq!(found.json()["result"]["supportedVersions"], json!([V]));

    // The 2025 session goes on as before.
    let mut in_session = legacy.to_vec();
    in_session.push(("Mcp-Session-Id", session.as_str()));
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let pong = send(addr, "POST", &in_session, &ping).await;
    assert_eq!(pong.json()["result"], json!({}), "{}", pong.body);
    fleet.manager.close().await;
}

#[tokio::test]
async fn header_fields_that_do_not_match_the_body_are_refused() {
    let fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN)).await;
    let call = request(
        1,
        "tools/call",
        json!({"name": "b__add", "arguments": {}}),
        V,
    );

    let cases: [(&str, Vec<(&str, &str)>); 5] = [
        ("no version header", {
            let mut h = headers("tools/call", Some("b__add"));
            h.retain(|(n, _)| *n != "MCP-Protocol-Version");
            h
        }),
        ("no method header", {
            let mut h = headers("tools/call", Some("b__add"));
            h.retain(|(n, _)| *n != "Mcp-Method");
            h
        }),
        ("another method", headers("tools/list", Some("b__add"))),
        ("no name", headers("tools/call", None)),
        ("another name", headers("tools/call", Some("a__echo"))),
    ];
    for (why, h) in cases {
        let answer = send(addr, "POST", &h, &call).await;
        assert_eq!(answer.status, 400, "{why}: {}", answer.body);
        assert_eq!(
            answer.json()["error"]["code"],
            -32020,
            "{why}: {}",
            answer.body
        );
        assert_eq!(answer.json()["id"], 1, "{why}");
    }
    // The version header must say what `_meta` says.
    let mut older = headers("tools/call", Some("b__add"));
    older[2] = ("MCP-Protocol-Version", "2025-11-25");
    assert_eq!(
        send(addr, "POST", &older, &call).await.json()["error"]["code"],
        -32020
    );
    // A stateless version header with no `_meta` revision is a mismatch too.
    let bare = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string();
    let answer = send(addr, "POST", &headers("tools/list", None), &bare).await;
    assert_eq!(
        (answer.status, answer.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );

    // `initialize` is the 2025 era's whatever the header says: a session.
    let init = json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let answer = send(addr, "POST", &headers("initialize", None), &init).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.header("mcp-session-id").is_some());
    // A stateless client's notification belongs to no session: accepted,
    // while one without the stateless header still needs a session.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1}})
    .to_string();
    let answer = send(
        addr,
        "POST",
        &headers("notifications/cancelled", None),
        &note,
    )
    .await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    let answer = send(addr, "POST", &[("Authorization", BEARER)], &note).await;
    assert_eq!(answer.status, 400, "{}", answer.body);

    // A read names its URI in `Mcp-Name`.
    let read = request(5, "resources/read", json!({"uri": "x:/a"}), V);
    let answer = send(
        addr,
        "POST",
        &headers("resources/read", Some("x:/b")),
        &read,
    )
    .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(answer.json()["error"]["code"], -32020);
    let answer = send(
        addr,
        "POST",
        &headers("resources/read", Some("x:/a")),
        &read,
    )
    .await;
    // Past the headers: the fleet has no such resource, which the
    // stateless revision says with invalid params (not -32002).
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["error"]["code"], -32602, "{}", answer.body);

    // Whitespace around a value is not part of it.
    let padded = headers("tools/call", Some("  b__add  "));
    let answer = send(addr, "POST", &padded, &call).await;
    assert_eq!(answer.status, 200, "{}", answer.body);

    // The name as the base64 sentinel is decoded first: `b__add`.
    let encoded = headers("tools/call", Some("=?base64?Yl9fYWRk?="));
    let answer = send(addr, "POST", &encoded, &call).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["result"]["content"][0]["text"], "b:add");
    fleet.manager.close().await;
}

#[tokio::test]
async fn an_unknown_method_is_a_404_and_an_unspoken_version_a_400_both_json_rpc() {
    let fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN)).await;
    for method in ["ping", "logging/setLevel", "no/such"] {
        let answer = send(
            addr,
            "POST",
            &headers(method, None),
            &request(5, method, json!({"level": "info"}), V),
        )
        .await;
        assert_eq!(answer.status, 404, "{method}: {}", answer.body);
        assert_eq!(answer.json()["error"]["code"], -32601, "{method}");
    }
    let mut h = headers("tools/list", None);
    h[2] = ("MCP-Protocol-Version", "2099-01-01");
    let answer = send(
        addr,
        "POST",
        &h,
        &request(6, "tools/list", json!({}), "2099-01-01"),
    )
    .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let error = &answer.json()["error"];
    assert_eq!(error["code"], -32022);
    assert_eq!(error["data"]["supported"][0], V);
    assert_eq!(error["data"]["requested"], "2099-01-01");

    // A 2025 session's request naming a version we do not speak is refused
    // the same way, before and after `initialize`.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let legacy = [("Authorization", BEARER), ("Accept", "application/json")];
    let session = send(addr, "POST", &legacy, &init).await;
    let session = session.header("mcp-session-id").unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    for with_session in [false, true] {
        let mut h = legacy.to_vec();
        h.push(("MCP-Protocol-Version", "2000-01-01"));
        if with_session {
            h.push(("Mcp-Session-Id", session.as_str()));
        }
        let answer = send(addr, "POST", &h, &list).await;
        assert_eq!(answer.status, 400, "{}", answer.body);
        assert_eq!(answer.json()["error"]["code"], -32022, "{}", answer.body);
        assert_eq!(answer.json()["id"], 2);
    }
    // The version the session negotiated is spoken: answered.
    let mut h = legacy.to_vec();
    h.push(("MCP-Protocol-Version", "2025-11-25"));
    h.push(("Mcp-Session-Id", session.as_str()));
    let answer = send(addr, "POST", &h, &list).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    fleet.manager.close().await;
}

#[tokio::test]
async fn progress_comes_on_the_requests_stream_and_closing_it_cancels_the_call() {
    let mut fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN).max_stateless_requests(1)).await;
    let mut h = headers("tools/call", Some("a__slow"));
    h[1] = ("Accept", "application/json, text/event-stream");
    let call = request(
        8,
        "tools/call",
        json!({"name": "a__slow", "arguments": {}}),
        V,
    );
    let (status, mut stream) = open_stream(addr, "POST", &h, &call).await;
    assert_eq!(status, 200);
    let progress = next_event(&mut stream).await;
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], "p");
    assert_eq!(progress["params"]["message"], "a quarter");
    assert_eq!(seen_at_least(&mut fleet.seen, 1).await, ["a call slow {}"]);

    // The one stateless place is taken while the call runs.
    let busy = send(
        addr,
        "POST",
        &headers("tools/list", None),
        &request(9, "tools/list", json!({}), V),
    )
    .await;
    assert_eq!(busy.status, 503, "{}", busy.body);

    drop(stream);
    let upstream = seen_at_least(&mut fleet.seen, 1).await;
    assert!(upstream[0].starts_with("a cancelled "), "{upstream:?}");
    // And the place is free again once the call is gone.
    let mut freed = false;
    for _ in 0..100 {
        let answer = send(
            addr,
            "POST",
            &headers("tools/list", None),
            &request(10, "tools/list", json!({}), V),
        )
        .await;
        if answer.status == 200 {
            freed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(freed, "the place of the cancelled call was not given back");
    fleet.manager.close().await;
}

#[tokio::test]
async fn our_stateless_client_uses_the_fleet_over_http_beside_a_2025_one() {
    let mut fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN)).await;
    let modern = client(addr, EraChoice::Modern).await;
    let legacy = client(addr, EraChoice::Legacy).await;
    assert_eq!(modern.era(), Some(Era::Modern));
    assert_eq!(modern.protocol_version().as_deref(), Some(V));
    assert_eq!(legacy.era(), Some(Era::Legacy));

    let mut names: Vec<String> = within(modern.list_all_tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    assert_eq!(names, ["a__echo", "a__slow", "b__add"]);
    let a = within(modern.call_tool("a__echo", &json!({})))
        .await
        .unwrap();
    let b = within(modern.call_tool("b__add", &json!({})))
        .await
        .unwrap();
    let c = within(legacy.call_tool("b__add", &json!({})))
        .await
        .unwrap();
    assert_eq!([a.text(), b.text(), c.text()], ["a:echo", "b:add", "b:add"]);
    within(modern.ping()).await.unwrap();
    within(legacy.ping()).await.unwrap();
    let _ = seen_at_least(&mut fleet.seen, 3).await;

    // Progress and cancellation in the stateless era, over HTTP.
    let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let (caller, token) = (modern.clone(), cancel.clone());
    let running = tokio::spawn(async move {
        caller
            .call_tool("a__slow", &json!({}))
            .on_progress(move |p| {
                let _ = progress_tx.send(p.message.clone());
            })
            .cancel_token(token)
            .await
            .map(|r| r.text())
    });
    let progress = within(progress_rx.recv()).await.unwrap();
    assert_eq!(progress.as_deref(), Some("a quarter"));
    cancel.cancel();
    let outcome = within(running).await.unwrap();
    assert_eq!(outcome.unwrap_err().kind(), ErrorKind::Cancelled);
    let upstream = seen_at_least(&mut fleet.seen, 2).await;
    assert_eq!(upstream[0], "a call slow {}");
    assert!(upstream[1].starts_with("a cancelled "), "{upstream:?}");

    modern.close().await;
    legacy.close().await;
    fleet.manager.close().await;
}
