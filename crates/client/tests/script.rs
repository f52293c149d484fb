//! The fake server's script runner driving a whole session: handshake,
//! answers, notifications, a server request, a dropped request, a crash.

mod common;

use std::time::Duration;

use common::within;
use mcpwire_client::{Client, ClientConfig};
use mcpwire_codec::jsonrpc::Id;
use mcpwire_test_support::{FakeServer, Reply, Step, initialize_result, memory_pair};
use serde_json::{Value, json};

#[tokio::test]
async fn a_scripted_session_from_handshake_to_crash() {
    let (transport, peer) = memory_pair(16);
    let server = FakeServer::new(peer);
    let script = vec![
        Step::expect("initialize", initialize_result("2025-06-18")),
        Step::ExpectNotification("notifications/initialized".into()),
        Step::expect("tools/list", json!({"tools": []})),
        Step::notify("notifications/tools/list_changed", json!({})),
        Step::Request {
            id: Id::Number(0),
            method: "ping".into(),
            params: json!({}),
        },
        Step::ExpectResponse(Id::Number(0)),
        Step::Delay(Duration::from_millis(10)),
        Step::Expect {
            method: "x/never".into(),
            reply: Reply::Drop,
        },
        Step::ExpectNotification("notifications/cancelled".into()),
        Step::Expect {
            method: "x/fails".into(),
            reply: Reply::Error(-32000, "nope".into()),
        },
        Step::Raw("garbage".into()),
        Step::Crash(9),
    ];
    let run = tokio::spawn(server.run(script));
    let client = within(Client::connect(transport, ClientConfig::new()))
        .await
        .unwrap();
    assert_eq!(client.protocol_version().as_deref(), Some("2025-06-18"));
    let mut changed = client.list_changed(mcpwire_client::ListKind::Tools);
    assert!(client.list_all_tools().await.unwrap().is_empty());
    within(changed.changed()).await.unwrap();
    let err = client
        .request::<_, Value>("x/never", Some(&json!({})))
        .timeout(Duration::from_millis(100))
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    let err = client
        .request::<_, Value>("x/fails", Some(&json!({})))
        .await
        .unwrap_err();
    assert_eq!(err.code().unwrap().0, -32000);
    within(run).await.unwrap();
    let mut states = client.watch_state();
    within(states.wait_for(|s| s.is_closed())).await.unwrap();
}
