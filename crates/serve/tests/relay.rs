//! What the session relays: upstream progress under the client's own
//! token, the client's cancellation to the upstream call, the fleet's
//! `list_changed`, and the bound on requests in flight.

mod common;

use common::*;
use mcpwire_serve::ServeOptions;
use serde_json::json;

const THREE: &[(&str, &[&str])] = &[("a", &["echo", "slow"]), ("b", &["echo"]), ("c", &["add"])];

#[tokio::test]
async fn progress_reaches_the_client_under_its_token_and_a_cancel_stops_the_upstream_call() {
    let mut fleet = fleet(THREE).await;
    let mut raw = serve_raw(&fleet.manager, ServeOptions::new());
    raw.initialize("2025-11-25").await;

    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "a__slow", "arguments": {}, "_meta": {"progressToken": "mine"}}}))
        .await;
    let progress = raw.recv().await;
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], "mine");
    assert_eq!(progress["params"]["progress"], 1.0);
    assert_eq!(progress["params"]["total"], 4.0);
    assert_eq!(progress["params"]["message"], "a quarter");

    raw.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "enough"}}),
    )
    .await;
    let upstream = seen_at_least(&mut fleet.seen, 2).await;
    assert_eq!(upstream[0], "a call slow {}");
    assert!(upstream[1].starts_with("a cancelled "), "{upstream:?}");

    // No answer to the cancelled request: the next thing we read is the
    // ping's answer.
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    let next = raw.recv().await;
    assert_eq!(next["id"], 2, "{next}");
    raw.close().await.unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn a_client_that_goes_away_cancels_its_upstream_calls() {
    let mut fleet = fleet(THREE).await;
    let mut raw = serve_raw(&fleet.manager, ServeOptions::new());
    raw.initialize("2025-11-25").await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "a__slow", "arguments": {}}}))
        .await;
    assert_eq!(seen_at_least(&mut fleet.seen, 1).await, ["a call slow {}"]);
    raw.close().await.unwrap();
    let upstream = seen_at_least(&mut fleet.seen, 1).await;
    assert!(upstream[0].starts_with("a cancelled "), "{upstream:?}");
    fleet.manager.close().await;
}

#[tokio::test]
async fn a_request_over_the_bound_is_refused_at_once_and_the_others_go_on() {
    let mut fleet = fleet(THREE).await;
    let mut raw = serve_raw(&fleet.manager, ServeOptions::new().max_in_flight(1));
    raw.initialize("2025-11-25").await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "a__slow", "arguments": {}}}))
        .await;
    assert_eq!(seen_at_least(&mut fleet.seen, 1).await, ["a call slow {}"]);
    let refused = raw
        .request(2, "tools/call", json!({"name": "b__echo"}))
        .await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 1"),
        "{refused}"
    );

    // Cancelling the slow call frees its slot.
    raw.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1}}),
    )
    .await;
    seen_at_least(&mut fleet.seen, 1).await;
    let answer = loop {
        let answer = raw
            .request(3, "tools/call", json!({"name": "b__echo"}))
            .await;
        if answer.get("result").is_some() {
            break answer;
        }
        // The slot is freed when the cancelled call has returned.
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    assert_eq!(answer["result"]["content"][0]["text"], "b:echo");
    raw.close().await.unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn a_change_of_the_fleets_catalogue_is_a_list_changed_to_the_client() {
    let fleet = fleet(THREE).await;
    let mut raw = serve_raw(&fleet.manager, ServeOptions::new());
    raw.initialize("2025-11-25").await;
    fleet.relist[1]
        .send(vec!["echo".into(), "fresh".into()])
        .unwrap();
    let note = raw.recv().await;
    assert_eq!(note["method"], "notifications/tools/list_changed", "{note}");
    let tools = raw.request(1, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"b__fresh"), "{names:?}");
    raw.close().await.unwrap();
    fleet.manager.close().await;
}

#[tokio::test]
async fn log_messages_reach_the_client_named_by_server_at_the_level_it_set() {
    let fleet = fleet(&[("a", &["log_warning", "log_error"]), ("b", &["echo"])]).await;
    let mut raw = serve_raw(&fleet.manager, ServeOptions::new());
    raw.initialize("2025-11-25").await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "a__log_warning"}}))
        .await;
    let (mut note, mut answered) = (None, false);
    while note.is_none() || !answered {
        let message = raw.recv().await;
        if message["method"] == "notifications/message" {
            note = Some(message);
        } else if message["id"] == 1 {
            answered = true;
        }
    }
    let note = note.unwrap();
    assert_eq!(
        note["params"],
        json!({"level": "warning", "logger": "a/x", "data": "a says warning"})
    );

    let set = raw
        .request(2, "logging/setLevel", json!({"level": "error"}))
        .await;
    assert_eq!(set["result"], json!({}), "{set}");
    raw.request(3, "tools/call", json!({"name": "a__log_warning"}))
        .await;
    raw.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "a__log_error"}}))
        .await;
    // One server's messages keep their order: a warning let through would
    // come before the error.
    let note = loop {
        let message = raw.recv().await;
        if message["method"] == "notifications/message" {
            break message;
        }
    };
    assert_eq!(note["params"]["level"], "error", "{note}");

    let bad = raw
        .request(5, "logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    raw.close().await.unwrap();
    fleet.manager.close().await;
}
