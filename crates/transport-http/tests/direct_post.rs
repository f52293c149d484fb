//! Requests posted from the sender's own task (when nothing is queued):
//! order against queued frames, backpressure, session expiry, and what
//! happens once the transport is closed or dropped.
//!
//! The tests run on a current-thread runtime, so the driver task cannot run
//! between two `try_send` calls made without an await: a frame accepted then
//! was either posted directly or sits in the queue, which is what makes the
//! direct path observable without timing.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcpwire_codec::jsonrpc::Id;
use mcpwire_http::{HttpClient, HttpTransport};
use mcpwire_transport::{
    Outgoing, SendError, Transport, TransportError, TransportEvent, TransportExt,
};
use support::*;

const LIST2: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
const LIST3: &str = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;

/// A server that answers initialize (session `s`), 202s notifications and
/// answers every request with an empty result under its own id.
async fn echo_ids_server() -> Server {
    Server::start(|seen| async move {
        match seen.rpc_method().as_deref() {
            Some("initialize") => Reply::json(&init_result(0)).header("mcp-session-id", "s"),
            Some(m) if m.starts_with("notifications/") => Reply::new(202),
            Some(_) => {
                let v: serde_json::Value = serde_json::from_str(seen.body_str()).unwrap();
                Reply::json(&result(v["id"].as_u64().unwrap(), "{}"))
            }
            None => Reply::new(405),
        }
    })
    .await
}

fn client_with(config: mcpwire_http::HttpConfig) -> HttpClient {
    HttpClient::new(config.listen(false)).unwrap()
}

/// Opens a transport and completes `initialize`.
async fn ready(client: &HttpClient, server: &Server) -> HttpTransport {
    let mut t = HttpTransport::streamable(client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    t
}

async fn answered_ids(t: &mut HttpTransport, n: usize) -> Vec<u64> {
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(next_frame(t).await["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    ids
}

#[tokio::test]
async fn requests_on_an_idle_transport_skip_the_queue() {
    let server = echo_ids_server().await;
    let client = client_with(quick_config().queue_capacity(1));
    let mut t = ready(&client, &server).await;
    let tx = t.sender();
    // With a queue of one and no chance for the driver to run, three frames
    // fit only because none of them waits in the queue.
    tx.try_send(frame(LIST)).unwrap();
    tx.try_send(frame(LIST2)).unwrap();
    tx.try_send(frame(LIST3)).unwrap();
    assert_eq!(answered_ids(&mut t, 3).await, [1, 2, 3]);
}

#[tokio::test]
async fn a_full_in_flight_window_sends_requests_to_the_queue() {
    let server = echo_ids_server().await;
    let client = client_with(quick_config().queue_capacity(1).max_in_flight(1));
    let mut t = ready(&client, &server).await;
    let tx = t.sender();
    // The first takes the only in-flight permit; the second waits in the
    // queue; the third finds the queue full.
    tx.try_send(frame(LIST)).unwrap();
    tx.try_send(frame(LIST2)).unwrap();
    match tx.try_send(frame(LIST3)) {
        Err(SendError::Busy(f)) => assert_eq!(f.frame, LIST3),
        other => panic!("expected Busy, got {other:?}"),
    }
    assert_eq!(answered_ids(&mut t, 2).await, [1, 2]);
    // Once the window has room again, requests go on as before.
    tx.send(frame(LIST3)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 3);
}

#[tokio::test]
async fn a_response_goes_on_while_a_request_waits_for_the_in_flight_window() {
    // Request 1 is held by the server until the client answers the server's
    // own request `s1` (as a tool call waiting on an elicitation is). With
    // a window of one, request 2 waits in the driver for 1 to end; the
    // answer to `s1`, queued after request 2, must not wait behind it.
    let answered = Arc::new(tokio::sync::Notify::new());
    let server = {
        let answered = answered.clone();
        Server::start(move |seen| {
            let answered = answered.clone();
            async move {
                let v: serde_json::Value = serde_json::from_str(seen.body_str()).unwrap();
                match seen.rpc_method().as_deref() {
                    Some("initialize") => {
                        Reply::json(&init_result(0)).header("mcp-session-id", "s")
                    }
                    Some(_) if v["id"] == 1 => {
                        let wait = Duration::from_secs(10);
                        match tokio::time::timeout(wait, answered.notified()).await {
                            Ok(()) => Reply::json(&result(1, "{}")),
                            Err(_) => Reply::new(500).body("the answer to s1 never came"),
                        }
                    }
                    Some(_) => Reply::json(&result(v["id"].as_u64().unwrap(), "{}")),
                    None => {
                        if v["id"] == "s1" {
                            answered.notify_one();
                        }
                        Reply::new(202)
                    }
                }
            }
        })
        .await
    };
    let client = client_with(quick_config().max_in_flight(1));
    let mut t = ready(&client, &server).await;
    let tx = t.sender();
    tx.try_send(frame(LIST)).unwrap();
    tx.try_send(frame(LIST2)).unwrap();
    let reply = frame(r#"{"jsonrpc":"2.0","id":"s1","result":{"action":"accept"}}"#);
    tx.try_send(Outgoing::response(reply, Id::from("s1")))
        .unwrap();
    assert_eq!(answered_ids(&mut t, 2).await, [1, 2]);
}

#[tokio::test]
async fn a_notification_keeps_its_place_behind_a_request_that_waits_for_the_window() {
    // Request 1 is slow; request 2 waits for the window of one; the
    // notification queued after it is posted after it, not beside it.
    let server = Server::start(|seen| async move {
        let v: serde_json::Value = serde_json::from_str(seen.body_str()).unwrap();
        match seen.rpc_method().as_deref() {
            Some("initialize") => Reply::json(&init_result(0)).header("mcp-session-id", "s"),
            Some(m) if m.starts_with("notifications/") => Reply::new(202),
            Some(_) => Reply::json(&result(v["id"].as_u64().unwrap(), "{}"))
                .delay(if v["id"] == 1 { 300 } else { 0 }),
            None => Reply::new(202),
        }
    })
    .await;
    let client = client_with(quick_config().max_in_flight(1));
    let mut t = ready(&client, &server).await;
    let tx = t.sender();
    tx.try_send(frame(LIST)).unwrap();
    tx.try_send(frame(LIST2)).unwrap();
    tx.try_send(frame(PROGRESS)).unwrap();
    assert_eq!(answered_ids(&mut t, 2).await, [1, 2]);
    let seen = wait_seen(&server, |s| s.len() >= 4).await;
    let bodies: Vec<&str> = seen.iter().map(Seen::body_str).collect();
    assert_eq!(bodies[1..], [LIST, LIST2, PROGRESS]);
}

#[tokio::test]
async fn a_request_never_overtakes_a_notification_sent_before_it() {
    // The notification's answer is slow; a request that reached the server
    // before that answer would be refused with a 500.
    let answered = Arc::new(AtomicBool::new(false));
    let server = {
        let answered = answered.clone();
        Server::start(move |seen| {
            let answered = answered.clone();
            async move {
                match seen.rpc_method().as_deref() {
                    Some("initialize") => {
                        Reply::json(&init_result(0)).header("mcp-session-id", "s")
                    }
                    Some("notifications/progress") => {
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        answered.store(true, Ordering::SeqCst);
                        Reply::new(202)
                    }
                    Some(_) => {
                        let v: serde_json::Value = serde_json::from_str(seen.body_str()).unwrap();
                        let id = v["id"].as_u64().unwrap();
                        // Request 1 was sent before the notification.
                        if id == 1 || answered.load(Ordering::SeqCst) {
                            Reply::json(&result(id, "{}"))
                        } else {
                            Reply::new(500).body("overtook the notification")
                        }
                    }
                    None => Reply::new(405),
                }
            }
        })
        .await
    };
    let client = client_with(quick_config());
    let mut t = ready(&client, &server).await;
    let tx = t.sender();
    // A request posted directly, then a notification, then requests that
    // must wait for the notification's answer.
    tx.send(frame(LIST)).await.unwrap();
    tx.send(frame(PROGRESS)).await.unwrap();
    tx.send(frame(LIST2)).await.unwrap();
    tx.send(frame(LIST3)).await.unwrap();
    // Each answer is a result: a 500 would come as `Undelivered`.
    assert_eq!(answered_ids(&mut t, 3).await, [1, 2, 3]);
}

#[tokio::test]
async fn direct_posts_with_an_expired_session_are_reported_as_expired() {
    let server = Server::start(|seen| async move {
        match (seen.rpc_method().as_deref(), seen.header("mcp-session-id")) {
            (Some("initialize"), _) => Reply::json(&init_result(0)).header("mcp-session-id", "old"),
            (Some("tools/list"), Some("old")) => Reply::new(404).body("gone"),
            _ => Reply::new(400).body("Bad Request: missing session"),
        }
    })
    .await;
    let client = client_with(quick_config().queue_capacity(1));
    let mut t = ready(&client, &server).await;
    let tx = t.sender();
    // Both are posted directly, with the session id of the time.
    tx.try_send(frame(LIST)).unwrap();
    tx.try_send(frame(LIST2)).unwrap();
    let mut lost = Vec::new();
    for _ in 0..2 {
        match next(&mut t).await {
            TransportEvent::Undelivered {
                frame: f,
                error: TransportError::SessionExpired,
            } => lost.push(f),
            other => panic!("expected SessionExpired, got {other:?}"),
        }
    }
    lost.sort();
    assert_eq!(lost, [frame(LIST), frame(LIST2)]);
    assert_eq!(t.session_id(), None);
}

#[tokio::test]
async fn after_close_frames_are_refused_and_nothing_more_is_posted() {
    let server = echo_ids_server().await;
    let client = client_with(quick_config());
    let mut t = ready(&client, &server).await;
    let tx = t.sender();
    tx.send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    t.close().await;
    match tx.send(frame(LIST2)).await {
        Err(SendError::Closed(f)) => assert_eq!(f.frame, LIST2),
        other => panic!("expected Closed, got {other:?}"),
    }
    assert!(tx.is_closed());
    let posted = server
        .seen()
        .iter()
        .filter(|s| s.rpc_method().as_deref() == Some("tools/list"))
        .count();
    assert_eq!(posted, 1);
}

#[tokio::test]
async fn a_dropped_transport_posts_nothing_for_senders_that_outlive_it() {
    let server = echo_ids_server().await;
    let client = client_with(quick_config());
    let t = ready(&client, &server).await;
    let tx = t.sender();
    drop(t);
    // The frame may still be queued before the driver's end is noticed,
    // but it is never posted.
    let _ = tx.try_send(frame(LIST));
    tokio::time::timeout(WAIT, async {
        while !tx.is_closed() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the sender sees the transport gone");
    assert!(matches!(
        tx.send(frame(LIST2)).await,
        Err(SendError::Closed(_))
    ));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !server
            .seen()
            .iter()
            .any(|s| s.rpc_method().as_deref() == Some("tools/list"))
    );
}

#[tokio::test]
async fn receive_only_still_refuses_every_frame() {
    let server = echo_ids_server().await;
    let t = HttpTransport::receive_only_sse(&client(), &server.url("/events")).unwrap();
    match t.sender().try_send(frame(LIST)) {
        Err(SendError::NotSupported(f)) => assert_eq!(f.frame, LIST),
        other => panic!("expected NotSupported, got {other:?}"),
    }
    assert!(server.seen().iter().all(|s| s.method != "POST"));
}

#[tokio::test]
async fn a_consumer_that_stops_waiting_wedges_nothing() {
    // Answers take a while, so the consumer gives up waiting first.
    let server = Server::start(|seen| async move {
        match seen.rpc_method().as_deref() {
            Some("initialize") => Reply::json(&init_result(0)).header("mcp-session-id", "s"),
            Some(_) => {
                let v: serde_json::Value = serde_json::from_str(seen.body_str()).unwrap();
                Reply::json(&result(v["id"].as_u64().unwrap(), "{}")).delay(200)
            }
            None => Reply::new(405),
        }
    })
    .await;
    let client = client_with(quick_config().max_in_flight(1));
    let mut t = ready(&client, &server).await;
    let tx = t.sender();
    tx.send(frame(LIST)).await.unwrap();
    // The consumer waits briefly for the answer, then stops polling.
    t.set_active(mcpwire_transport::Active::Many(8.try_into().unwrap()));
    let early = tokio::time::timeout(Duration::from_millis(20), t.next_event()).await;
    assert!(early.is_err(), "answered too early: {early:?}");
    // Request 2 needs the only in-flight permit, which request 1 holds until
    // its answer is read: it must be read without the consumer.
    tx.send(frame(LIST2)).await.unwrap();
    wait_seen(&server, |s| {
        s.iter().any(|r| {
            serde_json::from_str::<serde_json::Value>(r.body_str()).is_ok_and(|v| v["id"] == 2)
        })
    })
    .await;
    // Both answers are waiting for the consumer when it comes back.
    assert_eq!(answered_ids(&mut t, 2).await, [1, 2]);
}
