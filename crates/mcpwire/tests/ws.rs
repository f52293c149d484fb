//! WebSocket servers through the facade: `ws://` URLs through the general
//! `connect` (by [`Server::url`] and [`Server::ws`]) and `connect_ws`,
//! against a scripted MCP server on 127.0.0.1.

mod ws_support;

use std::error::Error as _;

use mcpwire::ws::{HeaderName, HeaderValue, WsConfig};
use mcpwire::{ClientConfig, ErrorKind, Server};
use serde_json::json;

#[tokio::test]
async fn a_ws_url_connects_through_the_general_connect() {
    let server = ws_support::start(None).await;
    let client = mcpwire::connect(Server::url(&server.url).unwrap(), ClientConfig::new())
        .await
        .unwrap();
    assert_eq!(client.server_info().unwrap().name, "scripted-ws");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools[0].name, "echo");
    let result = client
        .call_tool("echo", &json!({"message": "over a WebSocket"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "over a WebSocket");
    client.close().await;
    let requests = server.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["sec-websocket-protocol"], "mcp");
}

#[tokio::test]
async fn server_ws_carries_its_configuration_and_connect_ws_its_defaults() {
    let server = ws_support::start(None).await;
    let config = WsConfig::new().header(
        HeaderName::from_static("authorization"),
        HeaderValue::from_static("Bearer t0ken"),
    );
    let ws = Server::ws(&server.url).config(config);
    assert!(!format!("{ws:?}").contains("t0ken"));
    let client = mcpwire::connect(ws, ClientConfig::new()).await.unwrap();
    client.list_all_tools().await.unwrap();
    client.close().await;
    let client = mcpwire::connect_ws(&server.url, ClientConfig::new())
        .await
        .unwrap();
    client.close().await;
    let requests = server.requests.lock().unwrap();
    assert_eq!(requests[0]["authorization"], "Bearer t0ken");
    assert!(requests[1].get("authorization").is_none());
}

#[tokio::test]
async fn a_refused_upgrade_is_a_connect_error_with_the_status_in_its_chain() {
    let server = ws_support::start(Some(404)).await;
    let err = mcpwire::connect_ws(&server.url, ClientConfig::new())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Connect, "{err}");
    let mut source = err.source();
    let mut status = None;
    while let Some(s) = source {
        if let Some(ws) = s.downcast_ref::<mcpwire::ws::Error>() {
            status = ws.status().map(|s| s.status);
        }
        source = s.source();
    }
    assert_eq!(status, Some(404));
}

#[test]
fn a_url_of_another_scheme_is_a_connect_error_naming_it() {
    let err = Server::url("ftp://127.0.0.1/mcp").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Connect);
    let cause = err.source().unwrap().to_string();
    assert!(cause.contains("\"ftp\""), "{cause}");
    assert!(cause.contains("ws, wss"), "{cause}");
    assert!(Server::url("WSS://example.com/ws").is_ok());
}
