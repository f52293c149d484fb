//! `ManagerBuilder::configure_client`: each server's client is made with
//! the configuration the hook returns for that server's name, so a
//! sampling handler it installs knows which server asked.

mod common;

use common::*;
use mcpwire_client::ClientConfig;
use mcpwire_client::types::{CreateMessageParams, CreateMessageResult};
use mcpwire_manager::{Manager, ServerSpec};
use serde_json::{Value, json};

/// A sampling answer that names the server it was made for.
fn answer_from(server: &str) -> CreateMessageResult {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": format!("sampled for {server}")},
        "model": "test"
    }))
    .unwrap()
}

#[tokio::test]
async fn each_servers_handlers_are_made_with_its_own_name() {
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .server(ServerSpec::with_connector("b", b))
        .configure_client(|server: &str, config: ClientConfig| {
            let server = server.to_owned();
            config.sampling(move |_: CreateMessageParams, _| {
                let answer = answer_from(&server);
                async move { Ok(answer) }
            })
        })
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut a_server = a_peers.next().await;
    let a_init = a_server.handshake_with(tools_only()).await;
    let list = a_server.expect_request("tools/list").await;
    a_server.respond(&list.id, tool_list(&["ask"])).await;
    let mut b_server = b_peers.next().await;
    let b_init = b_server.handshake_with(tools_only()).await;
    let list = b_server.expect_request("tools/list").await;
    b_server.respond(&list.id, tool_list(&["ask"])).await;
    within(connect).await.unwrap().unwrap();

    // The handler the hook installed is declared to both servers.
    assert_eq!(a_init["capabilities"]["sampling"], json!({}), "{a_init}");
    assert_eq!(b_init["capabilities"]["sampling"], json!({}), "{b_init}");

    // Server b asks for a sample: the answer is the one made for b.
    b_server
        .request(
            9,
            "sampling/createMessage",
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                   "maxTokens": 10}),
        )
        .await;
    let answer = b_server.expect_response(&9.into()).await;
    let result: Value = answer.outcome.unwrap().deserialize().unwrap();
    assert_eq!(result["content"]["text"], "sampled for b", "{result}");

    a_server
        .request(
            3,
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 10}),
        )
        .await;
    let answer = a_server.expect_response(&3.into()).await;
    let result: Value = answer.outcome.unwrap().deserialize().unwrap();
    assert_eq!(result["content"]["text"], "sampled for a", "{result}");
    manager.close().await;
}

#[tokio::test]
async fn without_the_hook_no_client_capability_is_declared() {
    let (a, mut a_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut a_server = a_peers.next().await;
    let init = a_server.handshake_with(tools_only()).await;
    let list = a_server.expect_request("tools/list").await;
    a_server.respond(&list.id, tool_list(&[])).await;
    within(connect).await.unwrap().unwrap();
    assert!(init["capabilities"].get("sampling").is_none(), "{init}");
    manager.close().await;
}
