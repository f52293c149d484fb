//! A hostile tool's `outputSchema`: remote references the client must never
//! fetch (the server would make the client reach any URL, and wait on it,
//! for every call), and nesting thousands of levels deep (a compiler or a
//! validator that recurses per level overflows its stack). Each call ends
//! with a typed outcome within a bound; nothing is fetched.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{connected, within};
use mcpwire_client::{Client, ClientConfig, ErrorKind};
use mcpwire_test_support::FakeServer;
use serde_json::{Value, json};

/// How long one hostile call may take: far above a validation's cost, far
/// below any network wait a fetch would add.
const BOUND: Duration = Duration::from_secs(5);

/// A listener on loopback that counts the connections it is offered (on a
/// thread of its own: it must see a connection made from any thread).
fn watched() -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for _conn in listener.incoming() {
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    (format!("http://{addr}"), seen)
}

/// Lists `tools` (one page), then calls `name` and answers it with
/// `structuredContent` `{}`. Returns the call's outcome and how long it took.
async fn list_then_call(
    client: &Client,
    server: &mut FakeServer,
    tools_frame: impl FnOnce(&str) -> String,
    name: &str,
) -> (Result<(), mcpwire_client::Error>, Duration) {
    let c = client.clone();
    let name = name.to_owned();
    let started = Instant::now();
    let call = tokio::spawn(async move { c.call_tool(&name, json!({})).await.map(drop) });
    let r = server.expect_request("tools/call").await;
    server
        .respond(&r.id, json!({"content": [], "structuredContent": {}}))
        .await;
    // The first call of a session lists the tools to validate its answer.
    let r = server.expect_request("tools/list").await;
    let list_id = serde_json::to_string(&r.id).unwrap();
    server.send_raw(tools_frame(&list_id)).await;
    let outcome = within(call).await.unwrap();
    (outcome, started.elapsed())
}

fn frame(id: &str, tools: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": serde_json::from_str::<Value>(id).unwrap(), "result": {"tools": tools}})
        .to_string()
}

fn tool(name: &str, output_schema: Value) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}, "outputSchema": output_schema})
}

#[tokio::test]
async fn remote_refs_in_an_output_schema_are_never_fetched() {
    let (local, connections) = watched();
    let schemas = [
        json!({"$ref": format!("{local}/schema.json")}),
        json!({"type": "object", "properties": {"a": {"$ref": format!("{local}/a.json#/defs/x")}}}),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "allOf": [{"$ref": format!("{local}/b.json")}]}),
        json!({"$ref": "https://schemas.mcpwire.invalid/output.json"}),
        json!({"$ref": "file:///etc/hostname"}),
    ];
    for schema in schemas {
        let (client, mut server) = connected(ClientConfig::new()).await;
        let tools = json!([tool("remote", schema.clone())]);
        let (outcome, took) =
            list_then_call(&client, &mut server, |id| frame(id, &tools), "remote").await;
        let err = outcome.expect_err("an unresolvable schema validates nothing");
        assert_eq!(err.kind(), ErrorKind::SchemaValidation, "{schema}: {err:?}");
        assert!(
            err.validation_errors()[0].contains("output schema is invalid"),
            "{schema}: {err:?}"
        );
        assert!(took < BOUND, "{schema}: took {took:?}");
    }
    // Give a fetch that was started anyway the time to connect.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "the client connected to a URL named by a schema"
    );
}

/// A tools/list answer, written out as text (a `Value` this deep would
/// overflow the test's own stack when built or dropped), whose one tool's
/// `outputSchema` nests `depth` levels of `properties`.
fn deep_frame(id: &str, depth: usize) -> String {
    let open = r#"{"type":"object","properties":{"a":"#;
    let mut s = String::with_capacity(depth * (open.len() + 2) + 200);
    s.push_str(r#"{"jsonrpc":"2.0","id":"#);
    s.push_str(id);
    s.push_str(
        r#","result":{"tools":[{"name":"deep","inputSchema":{"type":"object"},"outputSchema":"#,
    );
    for _ in 0..depth {
        s.push_str(open);
    }
    s.push_str(r#"{"type":"string"}"#);
    for _ in 0..depth {
        s.push_str("}}");
    }
    s.push_str("}]}}");
    s
}

/// Pings `server` through `client`: the session is still usable.
async fn still_usable(client: &Client, server: &mut FakeServer) {
    let c = client.clone();
    let ping = tokio::spawn(async move { c.ping().await });
    let r = server.expect_request("ping").await;
    server.respond(&r.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_listing_nested_thousands_deep_is_a_typed_error_not_a_stack_overflow() {
    for depth in [10_000, 1_000] {
        // Listed on its own: the answer is refused by the JSON parser's
        // depth limit (128), typed.
        let (client, mut server) = connected(ClientConfig::new()).await;
        let c = client.clone();
        let started = Instant::now();
        let list = tokio::spawn(async move { c.list_all_tools().await });
        let r = server.expect_request("tools/list").await;
        let id = serde_json::to_string(&r.id).unwrap();
        server.send_raw(deep_frame(&id, depth)).await;
        let err = within(list).await.unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Protocol, "depth {depth}: {err:?}");
        assert!(started.elapsed() < BOUND);
        still_usable(&client, &mut server).await;

        // Listed after a call, to validate its answer: the listing fails
        // the same way, and the call's result is returned unvalidated (as
        // for any listing that fails), within the bound.
        let (client, mut server) = connected(ClientConfig::new()).await;
        let (outcome, took) =
            list_then_call(&client, &mut server, |id| deep_frame(id, depth), "deep").await;
        outcome.unwrap();
        assert!(took < BOUND, "depth {depth}: took {took:?}");
        still_usable(&client, &mut server).await;
    }
}

#[tokio::test]
async fn an_output_schema_nested_past_the_bound_is_refused_before_compiling() {
    // 60 levels of `properties` are 121 JSON levels of schema: the wire's
    // parser takes it, the schema bound (64) refuses it, typed.
    let (client, mut server) = connected(ClientConfig::new()).await;
    let (outcome, took) =
        list_then_call(&client, &mut server, |id| deep_frame(id, 60), "deep").await;
    let err = outcome.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SchemaValidation, "{err:?}");
    assert!(
        err.validation_errors()[0].contains("nests more than 64 levels"),
        "{err:?}"
    );
    assert!(took < BOUND, "took {took:?}");
    still_usable(&client, &mut server).await;

    // 20 levels are within it: compiled, and the answer validated.
    let (client, mut server) = connected(ClientConfig::new()).await;
    let (outcome, _) = list_then_call(&client, &mut server, |id| deep_frame(id, 20), "deep").await;
    outcome.expect("{} has no property to check");
}
