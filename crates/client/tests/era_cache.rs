//! What the client does with what it remembers of a server's era, against
//! a fake server whose transport names its server (as stdio and HTTP
//! transports do): a cached era the server no longer speaks is dropped, in
//! memory and in the cache file, and the other era tried at once; a
//! refusal for want of credentials ends the probe; the stateless era's
//! liveness check is `server/discover`.

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::within;
use mcpwire_client::{Client, ClientConfig, Era, ErrorKind, Keepalive};
use mcpwire_test_support::{FakeServer, memory_pair};
use mcpwire_transport::{HttpStatus, TransportError};
use serde_json::{Value, json};

fn discover_result() -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "stateless", "version": "2"}}})
}

/// A cache file for this test holding `entries`, and a unique server name.
fn cache(test: &str, era: Option<&str>) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("mcpwire-era-cache-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("eras.json");
    let name = format!("fake-server-{test}");
    let mut map = serde_json::Map::new();
    map.insert("stdio other-server".into(), json!("modern"));
    if let Some(era) = era {
        map.insert(format!("stdio {name}"), json!(era));
    }
    std::fs::write(&file, Value::Object(map).to_string()).unwrap();
    (file, name)
}

fn saved(file: &PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

fn connect(
    name: &str,
    config: ClientConfig,
) -> (
    tokio::task::JoinHandle<Result<Client, mcpwire_client::Error>>,
    FakeServer,
) {
    let (transport, peer) = memory_pair(64);
    let transport = transport.named("stdio", name);
    (
        tokio::spawn(Client::connect(transport, config)),
        FakeServer::new(peer),
    )
}

#[tokio::test]
async fn a_cached_stateless_era_the_server_refuses_falls_back_and_the_file_says_legacy() {
    let (file, name) = cache("modern-refused", Some("modern"));
    let (connect, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let discover = server.expect_request("server/discover").await;
    server
        .respond_error(&discover.id, -32601, "Method not found")
        .await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Legacy));
    let saved = saved(&file);
    assert_eq!(saved[format!("stdio {name}")], "legacy", "{saved}");
    assert_eq!(
        saved["stdio other-server"], "modern",
        "others kept: {saved}"
    );
    client.close().await;
}

#[tokio::test]
async fn a_cached_stateless_era_the_server_still_speaks_skips_the_probe() {
    let (file, name) = cache("modern-kept", Some("modern"));
    let (connect, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let discover = server.expect_request("server/discover").await;
    server.respond(&discover.id, discover_result()).await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Modern));
    assert_eq!(saved(&file)[format!("stdio {name}")], "modern");
    client.close().await;
}

#[tokio::test]
async fn a_cached_stateless_era_refused_for_credentials_is_reported_and_kept() {
    let (file, name) = cache("modern-auth", Some("modern"));
    let (connect, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let frame = server.recv_frame().await.unwrap();
    let refusal: Arc<dyn std::error::Error + Send + Sync> =
        Arc::new(std::io::Error::other("HTTP 401"));
    server
        .undeliver(frame, TransportError::Unauthorized(refusal))
        .await;
    let error = within(connect).await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Authorization, "{error}");
    assert_eq!(saved(&file)[format!("stdio {name}")], "modern");
}

/// A server down for a moment is still of the era it was: its entry stays,
/// and `initialize` is not tried.
#[tokio::test]
async fn a_cached_stateless_era_of_a_server_not_reached_is_reported_and_kept() {
    let (file, name) = cache("modern-unreachable", Some("modern"));
    let (connect, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let frame = server.recv_frame().await.unwrap();
    let refused = Arc::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
    server
        .undeliver(frame, TransportError::Unreachable(refused))
        .await;
    let error = within(connect).await.unwrap().unwrap_err();
    assert!(error.is_unreachable(), "{error:?}");
    assert_eq!(saved(&file)[format!("stdio {name}")], "modern");
    server.expect_closed().await;
}

#[tokio::test]
async fn a_cached_initialize_era_refused_as_unknown_discovers_the_server() {
    let (file, name) = cache("legacy-unknown", Some("legacy"));
    let (connect, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let init = server.expect_request("initialize").await;
    server
        .respond_error(&init.id, -32601, "Method not found")
        .await;
    let discover = server.expect_request("server/discover").await;
    server.respond(&discover.id, discover_result()).await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Modern));
    assert_eq!(saved(&file)[format!("stdio {name}")], "modern");
    client.close().await;
}

#[tokio::test]
async fn a_cached_initialize_era_refused_by_an_http_4xx_discovers_the_server() {
    let (file, name) = cache("legacy-404", Some("legacy"));
    let (connect, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let frame = server.recv_frame().await.unwrap();
    assert!(
        std::str::from_utf8(&frame)
            .unwrap()
            .contains("\"initialize\"")
    );
    server
        .undeliver(frame, TransportError::Http(Box::new(HttpStatus::new(404))))
        .await;
    let discover = server.expect_request("server/discover").await;
    server.respond(&discover.id, discover_result()).await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Modern));
    client.close().await;
}

#[tokio::test]
async fn a_cached_initialize_era_refused_for_another_reason_is_reported_and_kept() {
    for (test, refusal) in [
        ("legacy-params", None),
        ("legacy-401", Some(401)),
        ("legacy-500", Some(500)),
    ] {
        let (file, name) = cache(test, Some("legacy"));
        let (connect, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
        match refusal {
            None => {
                let init = server.expect_request("initialize").await;
                server
                    .respond_error(&init.id, -32602, "Invalid params")
                    .await;
            }
            Some(status) => {
                let frame = server.recv_frame().await.unwrap();
                let error = TransportError::Http(Box::new(HttpStatus::new(status)));
                server.undeliver(frame, error).await;
            }
        }
        let error = within(connect).await.unwrap().unwrap_err();
        assert_ne!(error.kind(), ErrorKind::Closed, "{test}: {error}");
        assert_eq!(saved(&file)[format!("stdio {name}")], "legacy", "{test}");
    }
}

#[tokio::test]
async fn a_probe_refused_for_credentials_ends_the_handshake() {
    let (file, name) = cache("probe-auth", None);
    let (connect, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let frame = server.recv_frame().await.unwrap();
    assert!(
        std::str::from_utf8(&frame)
            .unwrap()
            .contains("server/discover")
    );
    let refusal: Arc<dyn std::error::Error + Send + Sync> =
        Arc::new(std::io::Error::other("HTTP 401"));
    server
        .undeliver(frame, TransportError::Unauthorized(refusal))
        .await;
    let error = within(connect).await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Authorization, "{error}");
    // Nothing more was sent: no initialize after the refusal.
    let more = tokio::time::timeout(Duration::from_millis(200), server.recv_frame()).await;
    assert!(
        !matches!(more, Ok(Some(_))),
        "sent after the refusal: {more:?}"
    );
}

#[tokio::test]
async fn a_probe_refused_over_http_falls_back_and_the_file_says_legacy() {
    let (file, name) = cache("probe-400", None);
    let (connect, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let frame = server.recv_frame().await.unwrap();
    server
        .undeliver(frame, TransportError::Http(Box::new(HttpStatus::new(400))))
        .await;
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(saved(&file)[format!("stdio {name}")], "legacy");
    client.close().await;
}

#[tokio::test]
async fn the_handshake_after_a_silent_probe_gets_only_what_is_left_of_the_init_timeout() {
    let (_, name) = cache("budget", None);
    let config = ClientConfig::new()
        .init_timeout(Duration::from_millis(1200))
        .probe_timeout(Duration::from_millis(600));
    let started = Instant::now();
    let (connect, mut server) = connect(&name, config);
    // Silent to everything.
    let _probe = server.expect_request("server/discover").await;
    let _init = server.expect_request("initialize").await;
    let error = within(connect).await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1600), "took {took:?}");
}

#[tokio::test]
async fn after_a_stale_cached_stateless_era_initialize_gets_only_what_is_left_of_the_init_timeout()
{
    let (file, name) = cache("budget-cached", Some("modern"));
    let config = ClientConfig::new()
        .era_cache_file(&file)
        .init_timeout(Duration::from_millis(1200));
    let started = Instant::now();
    let (connect, mut server) = connect(&name, config);
    let _discover = server.expect_request("server/discover").await;
    let _init = server.expect_request("initialize").await;
    let error = within(connect).await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1600), "took {took:?}");
    assert!(
        took >= Duration::from_millis(1100),
        "took {took:?}: the discover had half"
    );
}

#[tokio::test]
async fn keepalive_in_the_stateless_era_is_a_server_discover() {
    let (_, name) = cache("keepalive", None);
    let config = ClientConfig::new().keepalive(Keepalive::new(Duration::from_millis(50)));
    let (connect, mut server) = connect(&name, config);
    let probe = server.expect_request("server/discover").await;
    server.respond(&probe.id, discover_result()).await;
    let client = within(connect).await.unwrap().unwrap();
    let check = server.expect_request("server/discover").await;
    server.respond(&check.id, discover_result()).await;
    client.close().await;
}

#[tokio::test]
async fn a_stale_cached_era_is_forgotten_even_when_the_other_era_fails_too() {
    // Stateless cached; the server refuses discover, then initialize.
    let (file, name) = cache("stale-both-modern", Some("modern"));
    let (connecting, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let discover = server.expect_request("server/discover").await;
    server
        .respond_error(&discover.id, -32601, "Method not found")
        .await;
    let init = server.expect_request("initialize").await;
    server
        .respond_error(&init.id, -32603, "Internal error")
        .await;
    assert!(within(connecting).await.unwrap().is_err());
    let kept = saved(&file);
    assert!(kept.get(format!("stdio {name}")).is_none(), "{kept}");
    assert_eq!(kept["stdio other-server"], "modern", "{kept}");

    // Initialize cached; the server refuses initialize as unknown, then
    // discover.
    let (file, name) = cache("stale-both-legacy", Some("legacy"));
    let (connecting, mut server) = connect(&name, ClientConfig::new().era_cache_file(&file));
    let init = server.expect_request("initialize").await;
    server
        .respond_error(&init.id, -32601, "Method not found")
        .await;
    let discover = server.expect_request("server/discover").await;
    server
        .respond_error(&discover.id, -32603, "Internal error")
        .await;
    assert!(within(connecting).await.unwrap().is_err());
    let saved = saved(&file);
    assert!(saved.get(format!("stdio {name}")).is_none(), "{saved}");
}
