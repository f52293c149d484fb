//! The typed API against a fake server: walkers, tools, validation,
//! resources, prompts, completion, logging, and the first call sent before
//! any listing.

mod common;

use common::{connected, within};
use mcpwire_client::types::{CallToolResult, CompletionReference, ContentBlock, LoggingLevel};
use mcpwire_client::{Client, ClientConfig, ErrorKind};
use mcpwire_test_support::FakeServer;
use serde_json::{Value, json};

fn tools_page(names: &[&str], next: Option<&str>) -> Value {
    let tools: Vec<Value> = names
        .iter()
        .map(|n| {
            let mut t = json!({"name": n, "inputSchema": {"type": "object"}, "x-vendor": 1});
            if *n == "sum" {
                t["outputSchema"] = json!({
                    "type": "object",
                    "properties": {"sum": {"type": "number"}},
                    "required": ["sum"]
                });
            }
            t
        })
        .collect();
    let mut page = json!({ "tools": tools });
    if let Some(n) = next {
        page["nextCursor"] = json!(n);
    }
    page
}

async fn serve_tool_list(server: &mut FakeServer) {
    let r = server.expect_request("tools/list").await;
    let p: Value = r.params.unwrap().deserialize().unwrap();
    assert!(p.get("cursor").is_none());
    server
        .respond(&r.id, tools_page(&["echo"], Some("page2")))
        .await;
    let r = server.expect_request("tools/list").await;
    let p: Value = r.params.unwrap().deserialize().unwrap();
    assert_eq!(p["cursor"], "page2");
    server.respond(&r.id, tools_page(&["sum"], None)).await;
}

/// A client connected to a fake server, with the tools listed.
async fn listed() -> (Client, FakeServer) {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let list = tokio::spawn(async move { c.list_all_tools().await });
    serve_tool_list(&mut server).await;
    within(list).await.unwrap().unwrap();
    (client, server)
}

async fn call(
    client: &Client,
    server: &mut FakeServer,
    structured: Value,
) -> Result<(), mcpwire_client::Error> {
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("sum", json!({"a": 1, "b": 2})).await });
    let r = server.expect_request("tools/call").await;
    let p: Value = r.params.unwrap().deserialize().unwrap();
    assert_eq!(p, json!({"name": "sum", "arguments": {"a": 1, "b": 2}}));
    server
        .respond(
            &r.id,
            json!({"content": [{"type": "text", "text": "3"}], "structuredContent": structured}),
        )
        .await;
    within(call).await.unwrap().map(|r| {
        assert_eq!(r.content[0], ContentBlock::text("3"));
    })
}

#[tokio::test]
async fn walkers_follow_cursors_and_keep_unknown_fields() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let list = tokio::spawn(async move { c.list_all_tools().await });
    serve_tool_list(&mut server).await;
    let tools = within(list).await.unwrap().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].extra["x-vendor"], 1);
    assert_eq!(serde_json::to_value(&tools[0]).unwrap()["x-vendor"], 1);
}

#[tokio::test]
async fn a_repeated_cursor_is_a_protocol_error_not_a_loop() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let list = tokio::spawn(async move { c.list_all_prompts().await });
    for _ in 0..2 {
        let r = server.expect_request("prompts/list").await;
        server
            .respond(&r.id, json!({"prompts": [], "nextCursor": "same"}))
            .await;
    }
    let err = within(list).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
}

#[tokio::test]
async fn structured_content_is_validated_against_the_output_schema() {
    let (client, mut server) = listed().await;

    call(&client, &mut server, json!({"sum": 3})).await.unwrap();
    let err = call(&client, &mut server, json!({"sum": "three"}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SchemaValidation);
    assert!(err.validation_errors()[0].contains("/sum"), "{err:?}");

    // A list_changed forgets the schema: the next call lists tools again,
    // after its structured answer.
    server
        .notify("notifications/tools/list_changed", json!({}))
        .await;
    let c = client.clone();
    let call2 = tokio::spawn(async move { c.call_tool("sum", json!({})).await });
    let r = server.expect_request("tools/call").await;
    server
        .respond(
            &r.id,
            json!({"content": [], "structuredContent": {"sum": 3}}),
        )
        .await;
    let r = server.expect_request("tools/list").await;
    let mut page = tools_page(&["sum"], None);
    page["tools"][0]["outputSchema"] = json!({"type": "object", "required": ["total"]});
    server.respond(&r.id, page).await;
    let err = within(call2).await.unwrap().unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::SchemaValidation,
        "the new schema applies"
    );
}

#[tokio::test]
async fn resources_prompts_completion_and_logging() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let work = tokio::spawn(async move {
        let read = c.read_resource("file:///a.txt").await?;
        let templates = c.list_all_resource_templates().await?;
        let resources = c.list_all_resources().await?;
        let mut args = serde_json::Map::new();
        args.insert("topic".into(), json!("rust"));
        let prompt = c.get_prompt("review", Some(args)).await?;
        let done = c
            .complete(
                CompletionReference::Prompt {
                    name: "review".into(),
                },
                "topic",
                "ru",
                None,
            )
            .await?;
        let applied = c.set_logging_level(LoggingLevel::Warning).await?;
        assert_eq!(applied, mcpwire_client::LevelApplied::Sent);
        Ok::<_, mcpwire_client::Error>((read, templates, resources, prompt, done))
    });
    let r = server.expect_request("resources/read").await;
    server
        .respond(
            &r.id,
            json!({"contents": [{"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}]}),
        )
        .await;
    let r = server.expect_request("resources/templates/list").await;
    server
        .respond(
            &r.id,
            json!({"resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "files"}]}),
        )
        .await;
    let r = server.expect_request("resources/list").await;
    server
        .respond(
            &r.id,
            json!({"resources": [{"uri": "file:///a.txt", "name": "a", "size": 5, "icons": [{"src": "data:,"}]}]}),
        )
        .await;
    let r = server.expect_request("prompts/get").await;
    let p: Value = r.params.unwrap().deserialize().unwrap();
    assert_eq!(p, json!({"name": "review", "arguments": {"topic": "rust"}}));
    server
        .respond(
            &r.id,
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "review rust"}}]}),
        )
        .await;
    let r = server.expect_request("completion/complete").await;
    let p: Value = r.params.unwrap().deserialize().unwrap();
    assert_eq!(
        p,
        json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "topic", "value": "ru"}})
    );
    server
        .respond(
            &r.id,
            json!({"completion": {"values": ["rust"], "hasMore": false}}),
        )
        .await;
    let r = server.expect_request("logging/setLevel").await;
    let p: Value = r.params.unwrap().deserialize().unwrap();
    assert_eq!(p["level"], "warning");
    server.respond(&r.id, json!({})).await;

    let (read, templates, resources, prompt, done) = within(work).await.unwrap().unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("hello"));
    assert_eq!(templates[0].uri_template, "file:///{path}");
    assert_eq!(resources[0].size, Some(5));
    assert_eq!(prompt.messages[0].content.as_text(), Some("review rust"));
    assert_eq!(done.completion.values, ["rust"]);
}

/// A `list_changed` that arrives before the answer to the listing is
/// already reflected in that answer (server-everything announces a change
/// right after start-up): the listing is kept and the next call does not
/// list the tools again.
#[tokio::test]
async fn a_change_announced_before_the_listing_answer_does_not_refetch() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let list = tokio::spawn(async move { c.list_all_tools().await });
    let r = server.expect_request("tools/list").await;
    server
        .notify("notifications/tools/list_changed", json!({}))
        .await;
    server.respond(&r.id, tools_page(&["sum"], None)).await;
    within(list).await.unwrap().unwrap();

    // The cached schema applies without a second `tools/list`.
    let err = call(&client, &mut server, json!({"sum": "three"}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SchemaValidation);
}

/// A change that arrives after the answer (while a later page is awaited,
/// or after the whole walk) still forgets the listing.
#[tokio::test]
async fn a_change_announced_after_the_listing_answer_refetches() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let list = tokio::spawn(async move { c.list_all_tools().await });
    let r = server.expect_request("tools/list").await;
    server
        .respond(&r.id, tools_page(&["echo"], Some("page2")))
        .await;
    let r = server.expect_request("tools/list").await;
    server
        .notify("notifications/tools/list_changed", json!({}))
        .await;
    server.respond(&r.id, tools_page(&["sum"], None)).await;
    within(list).await.unwrap().unwrap();

    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("sum", json!({})).await });
    let r = server.expect_request("tools/call").await;
    server
        .respond(
            &r.id,
            json!({"content": [], "structuredContent": {"sum": 3}}),
        )
        .await;
    let r = server.expect_request("tools/list").await;
    server.respond(&r.id, tools_page(&["sum"], None)).await;
    within(call).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_large_result_arrives_whole_with_every_member() {
    let (client, mut server) = listed().await;
    // Over 1 MiB, escapes included: its text is decoded in the frame's own
    // allocation (`Payload::take`), the rest the usual way.
    let text = "line \"one\"\n\u{e9}\u{1F600}\t\\".repeat(100_000);
    let sent = json!({
        "content": [
            {"type": "text", "text": "short"},
            {"type": "text", "text": text, "annotations": {"priority": 1.0}},
        ],
        "structuredContent": {"sum": 3},
        "isError": false,
        "_meta": {"k": "v"},
        "vendorField": [1, "two", null],
    });
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("sum", json!({})).await });
    let r = server.expect_request("tools/call").await;
    server.respond(&r.id, sent.clone()).await;
    let result = within(call).await.unwrap().unwrap();
    match &result.content[1] {
        ContentBlock::Text(t) => assert!(t.text == text, "the large text differs"),
        other => panic!("not a text block: {other:?}"),
    }
    assert_eq!(serde_json::to_value(&result).unwrap(), sent);
}

/// Starts a `call_tool("sum")` on a session with nothing listed: the first
/// request the server sees is the call itself (`expect_request` fails on any
/// other, a `tools/list` included), answered with `answer`.
async fn first_call(
    client: &Client,
    server: &mut FakeServer,
    answer: Value,
) -> tokio::task::JoinHandle<Result<CallToolResult, mcpwire_client::Error>> {
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("sum", json!({"a": 1})).await });
    let r = server.expect_request("tools/call").await;
    server.respond(&r.id, answer).await;
    call
}

#[tokio::test]
async fn the_first_call_goes_at_once_and_a_structured_answer_is_validated_after_one_listing() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let answer =
        json!({"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3}});
    let first = first_call(&client, &mut server, answer).await;
    // Listed after the answer (both pages), to validate it.
    serve_tool_list(&mut server).await;
    let result = within(first).await.unwrap().unwrap();
    assert_eq!(result.structured_content, Some(json!({"sum": 3})));
    // One listing: the next calls go straight out and use it.
    let err = call(&client, &mut server, json!({"sum": "three"}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SchemaValidation);
    call(&client, &mut server, json!({"sum": 3})).await.unwrap();

    // An invalid first answer is rejected, as one after a listing is.
    let (client, mut server) = connected(ClientConfig::new()).await;
    let answer = json!({"content": [], "structuredContent": {"sum": "three"}});
    let first = first_call(&client, &mut server, answer).await;
    serve_tool_list(&mut server).await;
    let err = within(first).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SchemaValidation);
    assert!(err.validation_errors()[0].contains("/sum"), "{err:?}");
}

#[tokio::test]
async fn a_first_answer_with_nothing_to_validate_lists_nothing() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    // No structuredContent: returned as it is, though `sum` declares an
    // output schema (not known yet).
    let first = first_call(&client, &mut server, json!({"content": []})).await;
    assert!(
        within(first)
            .await
            .unwrap()
            .unwrap()
            .structured_content
            .is_none()
    );
    // A tool error is not validated, so nothing is listed for it either.
    let answer = json!({"content": [], "structuredContent": {"x": 1}, "isError": true});
    let first = first_call(&client, &mut server, answer).await;
    assert_eq!(within(first).await.unwrap().unwrap().is_error, Some(true));
    // The next request on the wire is the ping: no tools/list was sent.
    let c = client.clone();
    let ping = tokio::spawn(async move { c.ping().await });
    let r = server.expect_request("ping").await;
    server.respond(&r.id, json!({})).await;
    within(ping).await.unwrap().unwrap();

    // Once listed, the same answer breaks the declared schema.
    let c = client.clone();
    let list = tokio::spawn(async move { c.list_all_tools().await });
    serve_tool_list(&mut server).await;
    within(list).await.unwrap().unwrap();
    let c = client.clone();
    let later = tokio::spawn(async move { c.call_tool("sum", json!({})).await });
    let r = server.expect_request("tools/call").await;
    server.respond(&r.id, json!({"content": []})).await;
    let err = within(later).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SchemaValidation);
}

#[tokio::test]
async fn a_failed_listing_after_the_call_does_not_lose_its_answer() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let answer = json!({"content": [{"type": "text", "text": "3"}],
        "structuredContent": {"sum": "three"}, "x-vendor": 1});
    let first = first_call(&client, &mut server, answer.clone()).await;
    let r = server.expect_request("tools/list").await;
    server.respond_error(&r.id, -32603, "listing broke").await;
    // Returned whole and unvalidated (a warning is logged).
    let result = within(first).await.unwrap().unwrap();
    assert_eq!(serde_json::to_value(&result).unwrap(), answer);

    // Nothing was stored: the next structured answer lists again.
    let answer = json!({"content": [], "structuredContent": {"sum": "three"}});
    let first = first_call(&client, &mut server, answer).await;
    serve_tool_list(&mut server).await;
    let err = within(first).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SchemaValidation);
}

#[tokio::test]
async fn two_first_calls_share_the_listing_made_after_the_first_answer() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    // Both go out before anything is listed.
    let c = client.clone();
    let one = tokio::spawn(async move { c.call_tool("sum", json!({})).await });
    let a = server.expect_request("tools/call").await;
    let c = client.clone();
    let two = tokio::spawn(async move { c.call_tool("sum", json!({})).await });
    let b = server.expect_request("tools/call").await;
    let ok = json!({"content": [], "structuredContent": {"sum": 3}});
    server.respond(&a.id, ok).await;
    serve_tool_list(&mut server).await;
    within(one).await.unwrap().unwrap();
    // The other's answer is checked against that listing, without another.
    let bad = json!({"content": [], "structuredContent": {"sum": "three"}});
    server.respond(&b.id, bad).await;
    let err = within(two).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SchemaValidation);
    let c = client.clone();
    let ping = tokio::spawn(async move { c.ping().await });
    let r = server.expect_request("ping").await;
    server.respond(&r.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
}
