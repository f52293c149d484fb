//! Rules of the handshake that mutation testing (`cargo xtask mutants
//! client`) found unguarded: a client pinned to one protocol version
//! (`EraChoice::Version`) offers an `initialize`-era version in
//! `initialize` with no probe before it and refuses the server's different
//! choice, and discovers a stateless version at that version; a second
//! unsupported-version refusal ends the handshake; the probe gets half of
//! the handshake's time at most, whatever its own timeout.

mod common;

use common::within;
use std::time::{Duration, Instant};

use mcpwire_client::{Client, ClientConfig, Era, EraChoice, ErrorKind};
use mcpwire_codec::jsonrpc::Message;
use mcpwire_test_support::{FakeServer, initialize_result, memory_pair};
use serde_json::json;

/// A client connecting, pinned to `version`, over a transport that names
/// its server (as stdio and HTTP do), so that only the pin keeps the
/// default probe away.
fn pinned(
    name: &str,
    version: &str,
) -> (
    tokio::task::JoinHandle<Result<Client, mcpwire_client::Error>>,
    FakeServer,
) {
    let (transport, peer) = memory_pair(64);
    let transport = transport.named("stdio", name);
    let config = ClientConfig::new().era(EraChoice::Version(version.to_owned()));
    (
        tokio::spawn(Client::connect(transport, config)),
        FakeServer::new(peer),
    )
}

#[tokio::test]
async fn a_pinned_initialize_era_version_is_offered_in_initialize_without_a_probe() {
    let (connect, mut server) = pinned("pinned-legacy-accepted", "2025-06-18");
    // The first request is `initialize` (`expect_request` would answer a
    // probe on the way), at the pinned version, not the newest.
    let init = match within(server.recv()).await {
        Some(Message::Request(r)) => r,
        other => panic!("expected the initialize request first, got {other:?}"),
    };
    assert_eq!(init.method, "initialize");
    let params: serde_json::Value = init.params.as_ref().unwrap().deserialize().unwrap();
    assert_eq!(params["protocolVersion"], "2025-06-18");
    server
        .respond(&init.id, initialize_result("2025-06-18"))
        .await;
    server
        .expect_notification("notifications/initialized")
        .await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(client.protocol_version().as_deref(), Some("2025-06-18"));
    client.close().await;
}

#[tokio::test]
async fn a_pinned_version_refuses_another_version_the_server_picks() {
    let (connect, mut server) = pinned("pinned-legacy-refused", "2025-06-18");
    let init = server.expect_request("initialize").await;
    // A version the client speaks, but not the one it was pinned to.
    server
        .respond(&init.id, initialize_result("2025-11-25"))
        .await;
    let err = within(connect).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnsupportedVersion);
    assert_eq!(err.server_version(), Some("2025-11-25"));
    server.expect_closed().await;
}

#[tokio::test]
async fn a_pinned_stateless_version_is_discovered_at_that_version() {
    let (connect, mut server) = pinned("pinned-modern", "2026-07-28");
    let discover = server.expect_request("server/discover").await;
    let params: serde_json::Value = discover
        .params
        .as_ref()
        .expect("params")
        .deserialize()
        .unwrap();
    let meta = &params["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
        "{meta}"
    );
    server
        .respond(
            &discover.id,
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}),
        )
        .await;
    let client = within(connect).await.unwrap().unwrap();
    assert_eq!(client.era(), Some(Era::Modern));
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    client.close().await;
}

/// The unsupported-version refusal (`-32022`) of a `server/discover`, naming
/// `supported` as the versions the server speaks.
fn unsupported(id: &mcpwire_codec::jsonrpc::Id, supported: &[&str]) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": supported}}})
    .to_string()
}

#[tokio::test]
async fn a_second_unsupported_version_refusal_ends_the_handshake() {
    let (transport, peer) = memory_pair(64);
    let mut server = FakeServer::new(peer);
    let config = ClientConfig::new().era(EraChoice::Modern);
    let connect = tokio::spawn(Client::connect(transport, config));
    let first = server.expect_request("server/discover").await;
    server
        .send_raw(unsupported(&first.id, &["2026-07-28"]))
        .await;
    // One retry at the version the server named; refused again, the
    // handshake fails with that refusal instead of asking a third time.
    let second = server.expect_request("server/discover").await;
    server
        .send_raw(unsupported(&second.id, &["2026-07-28"]))
        .await;
    let err = within(connect).await.unwrap().unwrap_err();
    assert_eq!(err.code(), Some(mcpwire_codec::jsonrpc::ErrorCode(-32022)));
    assert!(
        !matches!(within(server.recv()).await, Some(Message::Request(_))),
        "no third server/discover"
    );
}

#[tokio::test]
async fn the_probe_gets_at_most_half_of_the_init_timeout_whatever_its_own_timeout() {
    let (transport, peer) = memory_pair(64);
    let transport = transport.named("stdio", "probe-half-of-the-budget");
    let config = ClientConfig::new()
        .init_timeout(Duration::from_millis(2000))
        .probe_timeout(Duration::from_secs(20));
    let started = Instant::now();
    let connect = tokio::spawn(Client::connect(transport, config));
    let mut server = FakeServer::new(peer);
    // Silent to everything: the probe ends at its share, then `initialize`
    // has what is left.
    let _probe = server.expect_request("server/discover").await;
    let _init = within(server.expect_request("initialize")).await;
    let probed = started.elapsed();
    assert!(
        probed >= Duration::from_millis(950) && probed < Duration::from_millis(1900),
        "the probe took {probed:?} of a 2 s handshake"
    );
    let error = within(connect).await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
}
