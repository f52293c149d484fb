//! A fleet behind `Server::serve`: the project's own client and a raw
//! client see one server with every upstream's tools, calls routed, and
//! bad input answered with JSON-RPC errors.

mod common;

use common::*;
use mcpwire_client::{Client, ClientConfig};
use mcpwire_serve::{ServeOptions, Server};
use mcpwire_transport::{IoConfig, IoTransport};
use serde_json::json;

const THREE: &[(&str, &[&str])] = &[("a", &["echo", "slow"]), ("b", &["echo"]), ("c", &["add"])];

#[tokio::test]
async fn our_client_lists_and_calls_every_servers_tools_through_one_session() {
    let mut fleet = fleet(THREE).await;
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let server = Server::new(fleet.manager.clone());
    let served = tokio::spawn(async move {
        server
            .serve(IoTransport::from_stream(ours, IoConfig::new()))
            .await
    });
    let client = within(Client::connect(
        IoTransport::from_stream(theirs, IoConfig::new()),
        ClientConfig::new(),
    ))
    .await
    .unwrap();

    let mut names: Vec<String> = within(client.list_all_tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    assert_eq!(names, ["a__echo", "a__slow", "b__echo", "c__add"]);

    for (public, answer) in [
        ("a__echo", "a:echo"),
        ("b__echo", "b:echo"),
        ("c__add", "c:add"),
    ] {
        let result = within(client.call_tool(public, &json!({"x": 1})))
            .await
            .unwrap();
        assert_eq!(result.text(), answer);
    }
    let calls = seen_at_least(&mut fleet.seen, 3).await;
    assert_eq!(
        calls,
        [
            r#"a call echo {"x":1}"#,
            r#"b call echo {"x":1}"#,
            r#"c call add {"x":1}"#
        ]
    );

    client.close().await;
    within(served).await.unwrap().unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn initialize_answers_the_asked_revision_when_spoken_else_the_latest() {
    let fleet = fleet(THREE).await;
    let mut raw = serve_raw(&fleet.manager, ServeOptions::new().name("gateway"));
    let result = raw.initialize("2025-03-26").await;
    assert_eq!(result["protocolVersion"], "2025-03-26");
    assert_eq!(result["serverInfo"]["name"], "gateway");
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    raw.close().await.unwrap();

    let mut raw = serve_raw(&fleet.manager, ServeOptions::new());
    let result = raw.initialize("2030-01-01").await;
    assert_eq!(result["protocolVersion"], "2025-11-25");
    raw.close().await.unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn bad_input_gets_json_rpc_errors_and_the_session_goes_on() {
    let fleet = fleet(THREE).await;
    let mut raw = serve_raw(&fleet.manager, ServeOptions::new());
    raw.initialize("2025-11-25").await;

    raw.send_line("{not json").await;
    let answer = raw.recv().await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer["id"], serde_json::Value::Null);

    raw.send_line(r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");

    let answer = raw.request(6, "sampling/createMessage", json!({})).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");

    let answer = raw.request(7, "tools/call", json!({"arguments": {}})).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("name"),
        "{answer}"
    );

    let answer = raw
        .request(8, "tools/call", json!({"name": "a__ecko"}))
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a__echo"),
        "{answer}"
    );

    let answer = raw
        .request(9, "resources/read", json!({"uri": "file:///nowhere"}))
        .await;
    assert_eq!(answer["error"]["code"], -32002, "{answer}");

    // Still serving.
    let answer = raw.request(10, "ping", json!({})).await;
    assert_eq!(answer["result"], json!({}));
    raw.close().await.unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn prompts_and_resources_of_a_fleet_without_any_are_empty_lists() {
    let fleet = fleet(THREE).await;
    let mut raw = serve_raw(&fleet.manager, ServeOptions::new());
    raw.initialize("2025-11-25").await;
    let answer = raw.request(1, "prompts/list", json!({})).await;
    assert_eq!(answer["result"], json!({"prompts": []}));
    let answer = raw.request(2, "resources/list", json!({})).await;
    assert_eq!(answer["result"], json!({"resources": []}));
    let answer = raw.request(3, "resources/templates/list", json!({})).await;
    assert_eq!(answer["result"], json!({"resourceTemplates": []}));
    raw.close().await.unwrap();
    fleet.manager.close().await;
}
