//! The stateless era (2026-07-28) over a byte stream: the project's own
//! client, told to speak that era, discovers the fleet and uses it without
//! `initialize`; progress and cancellation are relayed as on stdio; `ping`
//! and `logging/setLevel` do not exist there; a client of the `initialize`
//! era beside it is served as before.

mod common;

use common::*;
use mcpwire_client::{CancellationToken, Client, ClientConfig, Era, EraChoice, ErrorKind};
use mcpwire_serve::{ServeOptions, Server};
use mcpwire_transport::{IoConfig, IoTransport};
use serde_json::{Value, json};

const THREE: &[(&str, &[&str])] = &[("a", &["echo", "slow"]), ("b", &["echo"]), ("c", &["add"])];

/// The `_meta` every request of the stateless era carries.
fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    })
}

/// Our client in `era`, connected to `server` over an in-memory pipe.
async fn connect(
    server: &Server,
    era: EraChoice,
) -> (
    Client,
    tokio::task::JoinHandle<Result<(), mcpwire_serve::ServeError>>,
) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let server = server.clone();
    let served = tokio::spawn(async move {
        server
            .serve(IoTransport::from_stream(ours, IoConfig::new()))
            .await
    });
    let client = within(Client::connect(
        IoTransport::from_stream(theirs, IoConfig::new()),
        ClientConfig::new().era(era),
    ))
    .await
    .unwrap();
    (client, served)
}

#[tokio::test]
async fn a_stateless_client_discovers_the_fleet_and_calls_across_it_without_initialize() {
    let mut fleet = fleet(THREE).await;
    let options = ServeOptions::new()
        .name("fleet")
        .instructions("use the tools");
    let server = Server::with_options(fleet.manager.clone(), options);
    let (client, served) = connect(&server, EraChoice::Modern).await;

    assert_eq!(client.era(), Some(Era::Modern));
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    assert_eq!(client.server_info().unwrap().name, "fleet");
    assert_eq!(client.instructions().as_deref(), Some("use the tools"));

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
    assert_eq!(
        seen_at_least(&mut fleet.seen, 3).await,
        [
            r#"a call echo {"x":1}"#,
            r#"b call echo {"x":1}"#,
            r#"c call add {"x":1}"#
        ]
    );
    // The era's liveness check is a `server/discover`, answered.
    within(client.ping()).await.unwrap();

    client.close().await;
    within(served).await.unwrap().unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn progress_and_cancellation_are_relayed_in_the_stateless_era() {
    let mut fleet = fleet(THREE).await;
    let server = Server::new(fleet.manager.clone());
    let (client, served) = connect(&server, EraChoice::Modern).await;
    assert_eq!(client.era(), Some(Era::Modern));

    let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let caller = client.clone();
    let token = cancel.clone();
    let running = tokio::spawn(async move {
        caller
            .call_tool("a__slow", &json!({}))
            .on_progress(move |p| {
                let _ = progress_tx.send((p.progress, p.total, p.message.clone()));
            })
            .cancel_token(token)
            .await
            .map(|r| r.text())
    });

    let progress = within(progress_rx.recv()).await.unwrap();
    assert_eq!(progress, (1.0, Some(4.0), Some("a quarter".to_owned())));
    cancel.cancel();
    let outcome = within(running).await.unwrap();
    assert_eq!(outcome.unwrap_err().kind(), ErrorKind::Cancelled);
    let upstream = seen_at_least(&mut fleet.seen, 2).await;
    assert_eq!(upstream[0], "a call slow {}");
    assert!(upstream[1].starts_with("a cancelled "), "{upstream:?}");

    client.close().await;
    within(served).await.unwrap().unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn discover_says_what_the_stateless_era_serves_and_results_say_their_era() {
    let fleet = fleet(THREE).await;
    let options = ServeOptions::new()
        .name("fleet")
        .instructions("use the tools");
    let mut raw = serve_raw(&fleet.manager, options);

    let found = raw
        .request(1, "server/discover", json!({"_meta": meta("2026-07-28")}))
        .await;
    let result = &found["result"];
    assert_eq!(
        result["supportedVersions"],
        json!(["2026-07-28"]),
        "{found}"
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["serverInfo"]["name"], "fleet");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "fleet"
    );
    assert_eq!(result["instructions"], "use the tools");
    // No `subscriptions/listen` here, so no `listChanged`; no log messages
    // belong to one stateless request, so no `logging`.
    assert_eq!(
        result["capabilities"],
        json!({"tools": {}, "prompts": {}, "resources": {}, "completions": {}})
    );

    let listed = raw
        .request(2, "tools/list", json!({"_meta": meta("2026-07-28")}))
        .await;
    let result = &listed["result"];
    assert_eq!(result["tools"].as_array().unwrap().len(), 4, "{listed}");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "private");

    let called = raw
        .request(
            3,
            "tools/call",
            json!({"name": "b__echo", "arguments": {}, "_meta": meta("2026-07-28")}),
        )
        .await;
    assert_eq!(called["result"]["content"][0]["text"], "b:echo", "{called}");
    assert_eq!(called["result"]["resultType"], "complete");
    assert!(called["result"].get("ttlMs").is_none(), "{called}");

    // The same request in the `initialize` era is answered as before.
    let legacy = raw.request(4, "tools/list", json!({})).await;
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    assert!(legacy["result"].get("_meta").is_none(), "{legacy}");
    raw.close().await.unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn the_stateless_era_has_no_ping_or_set_level_and_names_the_versions_it_speaks() {
    let fleet = fleet(THREE).await;
    let mut raw = serve_raw(&fleet.manager, ServeOptions::new());

    for (id, method, params) in [
        (1, "ping", json!({"_meta": meta("2026-07-28")})),
        (
            2,
            "logging/setLevel",
            json!({"level": "debug", "_meta": meta("2026-07-28")}),
        ),
        (
            3,
            "resources/subscribe",
            json!({"uri": "x:/", "_meta": meta("2026-07-28")}),
        ),
    ] {
        let answer = raw.request(id, method, params).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }

    let refused = raw
        .request(4, "tools/list", json!({"_meta": meta("2099-01-01")}))
        .await;
    assert_eq!(refused["error"]["code"], -32022, "{refused}");
    let data = &refused["error"]["data"];
    assert_eq!(data["requested"], "2099-01-01");
    let supported = data["supported"].as_array().unwrap();
    assert_eq!(supported[0], "2026-07-28");
    assert!(supported.contains(&json!("2025-11-25")), "{refused}");
    // A version that is not even a string is refused the same way.
    let odd = raw
        .request(
            5,
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": 7}}),
        )
        .await;
    assert_eq!(odd["error"]["code"], -32022, "{odd}");

    // An unknown resource is invalid params in the stateless era, and
    // still -32002 in the other.
    let read = raw
        .request(
            7,
            "resources/read",
            json!({"uri": "x:/a", "_meta": meta("2026-07-28")}),
        )
        .await;
    assert_eq!(read["error"]["code"], -32602, "{read}");
    let read = raw
        .request(8, "resources/read", json!({"uri": "x:/a"}))
        .await;
    assert_eq!(read["error"]["code"], -32002, "{read}");

    // Without a stateless `_meta`, `ping` is the `initialize` era's.
    let pong = raw.request(6, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}), "{pong}");
    raw.close().await.unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn a_client_of_the_initialize_era_beside_a_stateless_one_is_served_as_before() {
    let mut fleet = fleet(THREE).await;
    let server = Server::new(fleet.manager.clone());
    let (modern, served_modern) = connect(&server, EraChoice::Modern).await;
    let (legacy, served_legacy) = connect(&server, EraChoice::Legacy).await;
    assert_eq!(modern.era(), Some(Era::Modern));
    assert_eq!(legacy.era(), Some(Era::Legacy));
    assert_eq!(legacy.protocol_version().as_deref(), Some("2025-11-25"));
    let caps = legacy.server_capabilities().unwrap();
    assert!(caps.logging.is_some(), "{caps:?}");

    within(legacy.ping()).await.unwrap();
    let a = within(legacy.call_tool("a__echo", &json!({})))
        .await
        .unwrap();
    let b = within(modern.call_tool("b__echo", &json!({})))
        .await
        .unwrap();
    assert_eq!(
        (a.text(), b.text()),
        ("a:echo".to_owned(), "b:echo".to_owned())
    );

    // The legacy client still hears of a change of the catalogue.
    let mut watch = legacy.list_changed(mcpwire_client::ListKind::Tools);
    fleet.relist[1]
        .send(vec!["echo".into(), "more".into()])
        .unwrap();
    within(watch.changed()).await.unwrap();

    modern.close().await;
    legacy.close().await;
    within(served_modern).await.unwrap().unwrap();
    within(served_legacy).await.unwrap().unwrap();
    let _ = seen_at_least(&mut fleet.seen, 2).await;
    fleet.manager.close().await;
}
