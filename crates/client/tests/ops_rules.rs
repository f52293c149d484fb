//! Rules of the request operations that belong to one era only.

mod common;

use common::within;
use mcpwire_client::ClientConfig;
use serde_json::json;

/// `x-mcp-header` annotations are the stateless era's (they name HTTP
/// headers its requests carry): a server of the `initialize` era may
/// annotate anything, and every tool it lists is offered.
#[tokio::test]
async fn in_the_initialize_era_a_tool_with_any_header_annotation_is_listed() {
    let (client, mut server) = common::connected(ClientConfig::new()).await;
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_all_tools().await }
    });
    let req = server.expect_request("tools/list").await;
    server
        .respond(
            &req.id,
            json!({"tools": [
                {"name": "good", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}}}},
                {"name": "odd", "inputSchema": {"type": "object", "properties": {
                    "n": {"type": "number", "x-mcp-header": "N"}}}}
            ]}),
        )
        .await;
    let tools = within(list).await.unwrap().unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["good", "odd"]);
    client.close().await;
}

/// A client of the `initialize` era whose server says its prompts and
/// resources lists announce their changes.
async fn announcing_changes() -> (mcpwire_client::Client, mcpwire_test_support::FakeServer) {
    let (transport, peer) = mcpwire_test_support::memory_pair(64);
    let mut server = mcpwire_test_support::FakeServer::new(peer);
    let connect = tokio::spawn(mcpwire_client::Client::connect(
        transport,
        ClientConfig::new(),
    ));
    server
        .handshake_with(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"prompts": {"listChanged": true}, "resources": {"listChanged": true}},
            "serverInfo": {"name": "announcing", "version": "1"}
        }))
        .await;
    (within(connect).await.unwrap().unwrap(), server)
}

/// In the `initialize` era a list whose server announces its changes is
/// kept until it says one changed: asked twice, it is sent once. Checked
/// for the prompts, the resources and the resource templates.
#[tokio::test]
async fn lists_that_announce_their_changes_are_asked_for_once_until_they_change() {
    let (client, mut server) = announcing_changes().await;
    for (method, answer) in [
        ("prompts/list", json!({"prompts": [{"name": "p"}]})),
        (
            "resources/list",
            json!({"resources": [{"uri": "demo://a", "name": "a"}]}),
        ),
        (
            "resources/templates/list",
            json!({"resourceTemplates": [{"uriTemplate": "demo://{x}", "name": "t"}]}),
        ),
    ] {
        for round in 0..2 {
            let c = client.clone();
            let asked = tokio::spawn(async move {
                match method {
                    "prompts/list" => c.list_prompts(None).await.map(|_| ()),
                    "resources/list" => c.list_resources(None).await.map(|_| ()),
                    _ => c.list_resource_templates(None).await.map(|_| ()),
                }
            });
            if round == 0 {
                let req = server.expect_request(method).await;
                server.respond(&req.id, answer.clone()).await;
            }
            within(asked).await.unwrap().unwrap();
        }
        // The second asking sent nothing: the next request is this ping.
        let c = client.clone();
        let ping = tokio::spawn(async move { c.ping().await });
        let req = server.expect_request("ping").await;
        server.respond(&req.id, json!({})).await;
        within(ping).await.unwrap().unwrap();
    }
    client.close().await;
}
