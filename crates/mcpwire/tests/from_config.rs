//! Configuration entries made into servers: a `ws` entry connects with the
//! `ws` feature and is a typed unsupported-transport error without it; the
//! other transports keep their settings.

#![cfg(any(feature = "stdio", feature = "http", feature = "ws"))]

#[cfg(feature = "ws")]
mod ws_support;

use std::collections::HashMap;

use mcpwire::config::{Format, LoadOptions};
use mcpwire::{Server, config_resolver};

fn entry(json: &str) -> mcpwire::config::ServerEntry {
    let text = format!(r#"{{"mcpServers": {{"remote": {json}}}}}"#);
    let config = LoadOptions::new()
        .parse_str(&text, Format::Json, "mcp.json")
        .unwrap();
    config.servers.into_iter().next().unwrap()
}

fn env() -> HashMap<String, String> {
    HashMap::from([("TOKEN".to_owned(), "s3cret".to_owned())])
}

#[cfg(feature = "ws")]
#[tokio::test]
async fn a_ws_entry_becomes_a_connected_client() {
    let server = ws_support::start(None).await;
    let entry = entry(&format!(
        r#"{{"type": "ws", "url": "{}", "headers": {{"Authorization": "Bearer ${{TOKEN}}"}}}}"#,
        server.url
    ));
    let env = env();
    let resolved = config_resolver(&env).resolve(&entry).unwrap();
    let client = mcpwire::connect(
        Server::try_from(&resolved).unwrap(),
        mcpwire::ClientConfig::new(),
    )
    .await
    .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools[0].name, "echo");
    client.close().await;
    assert_eq!(
        server.requests.lock().unwrap()[0]["authorization"],
        "Bearer s3cret"
    );
}

#[cfg(not(feature = "ws"))]
#[test]
fn a_ws_entry_is_an_unsupported_transport_without_the_feature() {
    use mcpwire::ErrorKind;
    use mcpwire::config::{ResolveError, TransportKind};
    let entry = entry(r#"{"type": "websocket", "url": "ws://127.0.0.1:9/ws"}"#);
    let env = env();
    match config_resolver(&env).resolve(&entry) {
        Err(ResolveError::UnsupportedTransport { kind, server, .. }) => {
            assert_eq!(kind, TransportKind::WebSocket);
            assert_eq!(server, "remote");
        }
        other => panic!("{other:?}"),
    }
    // Accepted by hand, it still cannot become a server in this build.
    let resolved = mcpwire::config::Resolver::new(&env)
        .accept(TransportKind::WebSocket)
        .resolve(&entry)
        .unwrap();
    let err = Server::try_from(&resolved).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Connect);
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(cause.contains("websocket"), "{cause}");
}

#[cfg(feature = "ws")]
#[test]
fn a_header_that_is_not_valid_http_is_a_connect_error_without_its_value() {
    let entry = entry(
        r#"{"type": "ws", "url": "ws://127.0.0.1:9/ws", "headers": {"X-Key": "a\nb${TOKEN}"}}"#,
    );
    let env = env();
    let resolved = config_resolver(&env).resolve(&entry).unwrap();
    let err = Server::try_from(&resolved).unwrap_err();
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(cause.contains("\"X-Key\""), "{cause}");
    assert!(!cause.contains("s3cret"), "{cause}");
}

#[cfg(feature = "http")]
#[test]
fn an_sse_entry_keeps_its_mode() {
    let entry = entry(r#"{"type": "sse", "url": "http://127.0.0.1:9/sse"}"#);
    let env = env();
    let resolved = mcpwire::config::Resolver::new(&env)
        .resolve(&entry)
        .unwrap();
    let server = Server::try_from(&resolved).unwrap();
    let shown = format!("{server:?}");
    assert!(shown.contains("LegacySse"), "{shown}");
}

#[cfg(feature = "stdio")]
#[test]
fn a_stdio_entry_may_unset_an_inherited_variable() {
    // `"PATH": null` removes PATH from what the server inherits (the
    // configuration files of some clients say so); the command is then
    // found by its absolute path only.
    let env = env();
    let entry = entry(r#"{"command": "/bin/true", "env": {"PATH": null, "A": "1"}}"#);
    let resolved = mcpwire::config::Resolver::new(&env)
        .resolve(&entry)
        .unwrap();
    let server = Server::try_from(&resolved).unwrap();
    let shown = format!("{server:?}");
    assert!(shown.contains("/bin/true"), "{shown}");
}
