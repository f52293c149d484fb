//! Extensions a host declares and uses: MCP Apps (`io.modelcontextprotocol/ui`)
//! in the handshake beside tasks, and the skills extension's
//! `resources/directory/read`, against a fake server.

mod common;

use common::within;
use mcpwire_client::apps::{APP_HTML_MIME_TYPE, APPS_EXTENSION};
use mcpwire_client::skills::DIRECTORY_MIME_TYPE;
use mcpwire_client::tasks::TASKS_EXTENSION;
use mcpwire_client::{ClientConfig, ErrorKind};
use mcpwire_test_support::{FakeServer, initialize_result, memory_pair};
use serde_json::{Value, json};

/// The `initialize` params a client with `config` sends.
async fn declared(config: ClientConfig) -> Value {
    let (transport, peer) = memory_pair(16);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(mcpwire_client::Client::connect(transport, config));
    let params = server.handshake().await;
    within(connect).await.unwrap().unwrap().close().await;
    params
}

#[tokio::test]
async fn a_host_that_shows_views_declares_the_apps_extension_beside_tasks() {
    let params = declared(ClientConfig::new().apps(true).tasks(true)).await;
    let extensions = &params["capabilities"]["extensions"];
    assert_eq!(
        extensions[APPS_EXTENSION],
        json!({"mimeTypes": [APP_HTML_MIME_TYPE]}),
        "{params}"
    );
    assert_eq!(extensions[TASKS_EXTENSION], json!({}), "{params}");

    let apps_alone = declared(ClientConfig::new().apps(true)).await;
    let extensions = apps_alone["capabilities"]["extensions"]
        .as_object()
        .unwrap();
    assert_eq!(
        extensions.keys().collect::<Vec<_>>(),
        [APPS_EXTENSION],
        "{apps_alone}"
    );

    let plain = declared(ClientConfig::new()).await;
    assert!(plain["capabilities"].get("extensions").is_none(), "{plain}");
}

async fn skills_server(directory_read: Value) -> (mcpwire_client::Client, FakeServer) {
    let (transport, peer) = memory_pair(16);
    let mut server = FakeServer::new(peer);
    let connect = tokio::spawn(mcpwire_client::Client::connect(
        transport,
        ClientConfig::new(),
    ));
    let mut result = initialize_result("2025-11-25");
    result["capabilities"]["extensions"] =
        json!({"io.modelcontextprotocol/skills": directory_read});
    server.handshake_with(result).await;
    (within(connect).await.unwrap().unwrap(), server)
}

#[tokio::test]
async fn a_directory_is_read_page_by_page_and_its_subdirectories_are_marked() {
    let (client, mut server) = skills_server(json!({"directoryRead": true})).await;
    assert!(client.skills().reads_directories());
    let read = tokio::spawn({
        let client = client.clone();
        async move { client.skills().read_whole_directory("skill://pdf").await }
    });
    let first = server.expect_request("resources/directory/read").await;
    let params: Value = first.params.as_ref().unwrap().deserialize().unwrap();
    assert_eq!(params, json!({"uri": "skill://pdf"}));
    server
        .respond(
            &first.id,
            json!({"resources": [
                {"uri": "skill://pdf/SKILL.md", "name": "pdf", "mimeType": "text/markdown"}
            ], "nextCursor": "2"}),
        )
        .await;
    let second = server.expect_request("resources/directory/read").await;
    let params: Value = second.params.as_ref().unwrap().deserialize().unwrap();
    assert_eq!(params, json!({"uri": "skill://pdf", "cursor": "2"}));
    server
        .respond(
            &second.id,
            json!({"resources": [
                {"uri": "skill://pdf/forms", "name": "forms", "mimeType": DIRECTORY_MIME_TYPE}
            ]}),
        )
        .await;
    let children = within(read).await.unwrap().unwrap();
    let uris: Vec<_> = children.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["skill://pdf/SKILL.md", "skill://pdf/forms"]);
    assert_eq!(children[1].mime_type.as_deref(), Some(DIRECTORY_MIME_TYPE));
    client.close().await;
}

#[tokio::test]
async fn an_empty_cursor_ends_the_directory() {
    let (client, mut server) = skills_server(json!({"directoryRead": true})).await;
    let read = tokio::spawn({
        let client = client.clone();
        async move { client.skills().read_whole_directory("skill://pdf").await }
    });
    let req = server.expect_request("resources/directory/read").await;
    server
        .respond(
            &req.id,
            json!({"resources": [{"uri": "skill://pdf/SKILL.md", "name": "pdf"}], "nextCursor": ""}),
        )
        .await;
    assert_eq!(within(read).await.unwrap().unwrap().len(), 1);
    client.close().await;
}

#[tokio::test]
async fn a_server_that_does_not_declare_directory_reads_is_told_apart() {
    for settings in [
        json!({}),
        json!({"directoryRead": false}),
        json!({"directoryRead": "yes"}),
    ] {
        let (client, _server) = skills_server(settings.clone()).await;
        assert!(!client.skills().reads_directories(), "{settings}");
        client.close().await;
    }
}

#[tokio::test]
async fn a_directory_that_never_ends_is_stopped() {
    let (client, mut server) = skills_server(json!({"directoryRead": true})).await;
    let read = tokio::spawn({
        let client = client.clone();
        async move { client.skills().read_whole_directory("skill://loop").await }
    });
    let answer = tokio::spawn(async move {
        loop {
            let req = server.expect_request("resources/directory/read").await;
            server
                .respond(&req.id, json!({"resources": [], "nextCursor": "again"}))
                .await;
        }
    });
    let error = within(read).await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Protocol, "{error}");
    assert!(error.to_string().contains("skill://loop"), "{error}");
    answer.abort();
    client.close().await;
}
