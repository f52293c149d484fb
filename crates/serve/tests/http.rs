//! Streamable HTTP: the token, the Origin and Host checks, sessions made
//! by `initialize` and ended by DELETE or idleness, and the bounds, seen
//! from a client that writes HTTP/1.1 by hand.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::raw_http::*;
use common::*;
use mcpwire_serve::{HttpOptions, Server};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const TOKEN: &str = "t0ken";
const FLEET: &[(&str, &[&str])] = &[("a", &["echo", "slow"]), ("b", &["add"])];

/// Serves `fleet` with `options` on a free loopback port.
async fn endpoint(fleet: &Fleet, options: HttpOptions) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::new(fleet.manager.clone());
    tokio::spawn(async move { server.serve_http(listener, options).await });
    addr
}

const BEARER: &str = "Bearer t0ken";

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

/// Initializes a session (JSON answers); returns its id.
async fn session(addr: SocketAddr) -> String {
    let answer = send(
        addr,
        "POST",
        &[("Authorization", BEARER), ("Accept", "application/json")],
        &initialize(),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["result"]["protocolVersion"], "2025-06-18");
    answer
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

#[tokio::test]
async fn without_the_token_it_is_401_and_from_another_site_403() {
    let fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN)).await;
    let answer = send(addr, "POST", &[], &initialize()).await;
    assert_eq!(answer.status, 401);
    assert_eq!(answer.header("www-authenticate"), Some("Bearer"));
    let answer = send(
        addr,
        "POST",
        &[("Authorization", "Bearer t0kem")],
        &initialize(),
    )
    .await;
    assert_eq!(answer.status, 401);
    let answer = send(
        addr,
        "POST",
        &[
            ("Authorization", BEARER),
            ("Origin", "https://evil.example"),
        ],
        &initialize(),
    )
    .await;
    assert_eq!(answer.status, 403);
    // DNS rebinding: a page's own name, resolved to 127.0.0.1.
    let answer = send(
        addr,
        "POST",
        &[("Authorization", BEARER), ("Host", "evil.example:80")],
        &initialize(),
    )
    .await;
    assert_eq!(answer.status, 403);
    // A page served from the loopback may.
    let answer = send(
        addr,
        "POST",
        &[
            ("Authorization", BEARER),
            ("Origin", "http://localhost:3000"),
            ("Accept", "application/json"),
        ],
        &initialize(),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    fleet.manager.close().await;
}

#[tokio::test]
async fn initialize_makes_a_session_that_later_requests_name_and_delete_ends() {
    let fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN)).await;
    let id = session(addr).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let json_accept = ("Accept", "application/json");

    let answer = send(
        addr,
        "POST",
        &[("Authorization", BEARER), json_accept],
        &list,
    )
    .await;
    assert_eq!(answer.status, 400, "no session id");
    let answer = send(
        addr,
        "POST",
        &[
            ("Authorization", BEARER),
            json_accept,
            ("Mcp-Session-Id", "nope"),
        ],
        &list,
    )
    .await;
    assert_eq!(answer.status, 404, "an unknown session");

    let with_id = [
        ("Authorization", BEARER),
        json_accept,
        ("Mcp-Session-Id", id.as_str()),
    ];
    let answer = send(addr, "POST", &with_id, &list).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let names: Vec<String> = answer.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["a__echo", "a__slow", "b__add"]);

    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(send(addr, "POST", &with_id, &note).await.status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "b__add", "arguments": {}}})
    .to_string();
    let answer = send(addr, "POST", &with_id, &call).await;
    assert_eq!(answer.json()["result"]["content"][0]["text"], "b:add");

    assert_eq!(send(addr, "DELETE", &with_id, "").await.status, 200);
    assert_eq!(send(addr, "POST", &with_id, &list).await.status, 404);
    fleet.manager.close().await;
}

#[tokio::test]
async fn a_request_is_answered_on_its_own_sse_stream() {
    let fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN)).await;
    let id = session(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "a__echo", "arguments": {}}})
    .to_string();
    let answer = send(
        addr,
        "POST",
        &[
            ("Authorization", BEARER),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", id.as_str()),
        ],
        &call,
    )
    .await;
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    // A buffering proxy must not hold the progress back.
    assert_eq!(answer.header("x-accel-buffering"), Some("no"));
    let data = answer
        .body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("an event");
    let event: Value = serde_json::from_str(data).unwrap();
    assert_eq!(event["id"], 7);
    assert_eq!(event["result"]["content"][0]["text"], "a:echo");
    fleet.manager.close().await;
}

#[tokio::test]
async fn sessions_are_bounded_and_idle_ones_end() {
    let fleet = fleet(FLEET).await;
    let options = HttpOptions::new(TOKEN)
        .max_sessions(1)
        .idle_timeout(Duration::from_millis(1200));
    let addr = endpoint(&fleet, options).await;
    let id = session(addr).await;
    let again = send(
        addr,
        "POST",
        &[("Authorization", BEARER), ("Accept", "application/json")],
        &initialize(),
    )
    .await;
    assert_eq!(again.status, 503, "one session at most");

    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    // A sweep has run (every quarter of the timeout), and the session, not
    // idle that long, is still there.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answer = send(
        addr,
        "POST",
        &[("Authorization", BEARER), ("Mcp-Session-Id", id.as_str())],
        &ping,
    )
    .await;
    assert_eq!(answer.status, 200, "not idle long enough yet");

    tokio::time::sleep(Duration::from_millis(2500)).await;
    let answer = send(
        addr,
        "POST",
        &[("Authorization", BEARER), ("Mcp-Session-Id", id.as_str())],
        &ping,
    )
    .await;
    assert_eq!(answer.status, 404, "the idle session ended");
    // Its place is free again.
    session(addr).await;
    fleet.manager.close().await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_and_bad_json_400() {
    let fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN).max_body(64)).await;
    let answer = send(addr, "POST", &[("Authorization", BEARER)], &initialize()).await;
    assert_eq!(answer.status, 413);
    let answer = send(addr, "POST", &[("Authorization", BEARER)], "{nope").await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.json()["error"]["code"], -32700);
    fleet.manager.close().await;
}

#[tokio::test]
async fn a_cancelled_request_ends_its_stream_without_an_answer() {
    let fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN)).await;
    let id = session(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "a__slow", "arguments": {}}})
    .to_string();
    let stream_id = id.clone();
    let streaming = tokio::spawn(async move {
        send(
            addr,
            "POST",
            &[
                ("Authorization", BEARER),
                ("Accept", "application/json, text/event-stream"),
                ("Mcp-Session-Id", stream_id.as_str()),
            ],
            &call,
        )
        .await
    });
    // The call reached its server; then the client cancels it.
    let mut seen = fleet.seen;
    assert_eq!(seen_at_least(&mut seen, 1).await, ["a call slow {}"]);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9}})
    .to_string();
    let answer = send(
        addr,
        "POST",
        &[("Authorization", BEARER), ("Mcp-Session-Id", id.as_str())],
        &cancel,
    )
    .await;
    assert_eq!(answer.status, 202);
    let ended = within(streaming).await.unwrap();
    assert!(!ended.body.contains("\"result\""), "{}", ended.body);
    assert!(seen_at_least(&mut seen, 1).await[0].starts_with("a cancelled "));
    fleet.manager.close().await;
}

#[tokio::test]
async fn progress_goes_to_its_requests_stream_and_delete_cancels_what_runs() {
    let fleet = fleet(FLEET).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN)).await;
    let id = session(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "a__slow", "arguments": {}, "_meta": {"progressToken": 17}}})
    .to_string();
    let with_id = [
        ("Authorization", BEARER),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", id.as_str()),
    ];
    let (status, mut stream) = open_stream(addr, "POST", &with_id, &call).await;
    assert_eq!(status, 200);
    let progress = next_event(&mut stream).await;
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], 17);

    assert_eq!(send(addr, "DELETE", &with_id, "").await.status, 200);
    let mut seen = fleet.seen;
    let upstream = seen_at_least(&mut seen, 2).await;
    assert!(upstream[1].starts_with("a cancelled "), "{upstream:?}");
    fleet.manager.close().await;
}

#[tokio::test]
async fn one_get_stream_at_a_time_and_a_session_with_one_open_is_not_idle() {
    let fleet = fleet(FLEET).await;
    let options = HttpOptions::new(TOKEN).idle_timeout(Duration::from_millis(300));
    let addr = endpoint(&fleet, options).await;
    let id = session(addr).await;
    let get = [
        ("Authorization", BEARER),
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", id.as_str()),
    ];
    let (status, _open) = open_stream(addr, "GET", &get, "").await;
    assert_eq!(status, 200);
    let (status, _) = open_stream(addr, "GET", &get, "").await;
    assert_eq!(status, 409, "a second GET stream");

    // Idle far longer than the timeout, but its stream is open.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let answer = send(
        addr,
        "POST",
        &[("Authorization", BEARER), ("Mcp-Session-Id", id.as_str())],
        &ping,
    )
    .await;
    assert_eq!(answer.status, 200, "the session is kept");
    fleet.manager.close().await;
}

#[tokio::test]
async fn a_request_answered_leaves_the_progress_of_others_on_their_streams() {
    let fleet = fleet(&[("a", &["slow", "nudge"])]).await;
    let addr = endpoint(&fleet, HttpOptions::new(TOKEN)).await;
    let id = session(addr).await;
    let with_id = [
        ("Authorization", BEARER),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", id.as_str()),
    ];
    let slow = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "a__slow", "arguments": {}, "_meta": {"progressToken": 17}}})
    .to_string();
    let (status, mut stream) = open_stream(addr, "POST", &with_id, &slow).await;
    assert_eq!(status, 200);
    assert_eq!(next_event(&mut stream).await["params"]["progress"], 1.0);

    // Two other requests, each answered: the first answer must not take
    // the slow call's progress token with it, so the second nudge's
    // progress still reaches the slow call's stream.
    for request_id in [5, 6] {
        let nudge = json!({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "a__nudge", "arguments": {}, "_meta": {"progressToken": 18}}})
        .to_string();
        let answer = send(addr, "POST", &with_id, &nudge).await;
        assert_eq!(answer.status, 200);
        assert!(answer.body.contains("a:nudge"), "{}", answer.body);
        let progress = next_event(&mut stream).await;
        assert_eq!(progress["params"]["progressToken"], 17, "{progress}");
        assert_eq!(progress["params"]["progress"], 2.0, "{progress}");
    }
    fleet.manager.close().await;
}
