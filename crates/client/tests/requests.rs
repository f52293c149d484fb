//! Requests against a fake server: ids, ordering, timeouts, cancellation,
//! progress, errors, malformed input.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{connected, within};
use mcpwire_client::{CancellationToken, ClientConfig, Deadline, ErrorKind, RequestOptions};
use mcpwire_codec::jsonrpc::Id;
use serde_json::{Value, json};

#[tokio::test]
async fn responses_out_of_order_reach_their_own_callers() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let mut calls = Vec::new();
    for i in 0..3 {
        let c = client.clone();
        calls.push(tokio::spawn(async move {
            c.request::<_, Value>("x/echo", Some(&json!({ "i": i })))
                .await
        }));
    }
    let mut reqs = Vec::new();
    for _ in 0..3 {
        reqs.push(server.expect_request("x/echo").await);
    }
    for r in reqs.iter().rev() {
        let i: Value = r.params.as_ref().unwrap().deserialize().unwrap();
        server.respond(&r.id, json!({ "got": i["i"] })).await;
    }
    for (i, call) in calls.into_iter().enumerate() {
        let v = within(call).await.unwrap().unwrap();
        assert_eq!(v["got"], i);
    }
}

#[tokio::test]
async fn a_timeout_cancels_on_the_wire_and_a_late_answer_is_ignored() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.request::<_, Value>("x/slow", Some(&json!({})))
            .timeout(Duration::from_millis(200))
            .await
    });
    let req = server.expect_request("x/slow").await;
    let err = within(call).await.unwrap().unwrap_err();
    assert!(err.is_timeout() && err.is_retryable(), "{err:?}");
    let cancel = server.expect_notification("notifications/cancelled").await;
    let params: Value = cancel.params.unwrap().deserialize().unwrap();
    let Id::Number(n) = req.id else { panic!() };
    assert_eq!(params["requestId"], n);
    assert_eq!(params["reason"], "timeout");
    server.respond(&req.id, json!({})).await;
    // The connection is fine and the late answer went nowhere.
    let ping = tokio::spawn({
        let c = client.clone();
        async move { c.ping().await }
    });
    let p = server.expect_request("ping").await;
    server.respond(&p.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
    assert_eq!(client.in_flight(), 0);
}

/// One timer serves every request: a short timeout sent after a long one
/// must still fire on time (the timer is re-armed earlier), each request
/// times out on its own deadline, and the long one is not disturbed.
#[tokio::test]
async fn requests_with_different_timeouts_each_expire_on_their_own() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let spawn_call = |method: &'static str, timeout: Option<Duration>| {
        let c = client.clone();
        tokio::spawn(async move {
            let mut opts = RequestOptions::new();
            if let Some(t) = timeout {
                opts = opts.timeout(t);
            }
            let started = std::time::Instant::now();
            let r = c
                .request::<_, Value>(method, Some(&json!({})))
                .options(opts)
                .await;
            (r, started.elapsed())
        })
    };
    // The default timeout (60 s) arms the timer far in the future first.
    let long = spawn_call("x/long", None);
    let long_req = server.expect_request("x/long").await;
    let late = spawn_call("x/late", Some(Duration::from_millis(1200)));
    server.expect_request("x/late").await;
    let soon = spawn_call("x/soon", Some(Duration::from_millis(300)));
    let soon_req = server.expect_request("x/soon").await;

    let (soon_result, soon_took) = within(soon).await.unwrap();
    assert!(soon_result.unwrap_err().is_timeout());
    assert!(soon_took >= Duration::from_millis(300), "{soon_took:?}");
    let cancel = server.expect_notification("notifications/cancelled").await;
    let params: Value = cancel.params.unwrap().deserialize().unwrap();
    let Id::Number(n) = soon_req.id else { panic!() };
    assert_eq!(params["requestId"], n, "the short one expired first");

    let (late_result, late_took) = within(late).await.unwrap();
    assert!(late_result.unwrap_err().is_timeout());
    assert!(late_took >= Duration::from_millis(1200), "{late_took:?}");
    server.expect_notification("notifications/cancelled").await;

    assert_eq!(client.in_flight(), 1, "the long request is still waiting");
    server.respond(&long_req.id, json!({"ok": true})).await;
    let (long_result, _) = within(long).await.unwrap();
    assert_eq!(long_result.unwrap()["ok"], true);
}

/// A timeout fires while the connection is otherwise idle, and again for a
/// later request after the timer went quiet.
#[tokio::test]
async fn timeouts_fire_again_after_the_timer_went_idle() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    for _ in 0..2 {
        let c = client.clone();
        let call = tokio::spawn(async move {
            c.request::<_, Value>("x/slow", Some(&json!({})))
                .timeout(Duration::from_millis(150))
                .await
        });
        server.expect_request("x/slow").await;
        assert!(within(call).await.unwrap().unwrap_err().is_timeout());
        server.expect_notification("notifications/cancelled").await;
        assert_eq!(client.in_flight(), 0);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// A timeout of `Duration::MAX` means "never": no overflow, the answer
/// arrives as usual.
#[tokio::test]
async fn an_endless_timeout_is_accepted() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let call = tokio::spawn(async move {
        let opts = RequestOptions::new()
            .timeout(Duration::MAX)
            .max_total(Duration::MAX)
            .deadline(Deadline::ResetOnProgress);
        c.request::<_, Value>("x/echo", Some(&json!({})))
            .options(opts)
            .await
    });
    let req = server.expect_request("x/echo").await;
    let Id::Number(n) = req.id else { panic!() };
    server
        .notify(
            "notifications/progress",
            json!({"progressToken": n, "progress": 1}),
        )
        .await;
    server.respond(&req.id, json!({"ok": 1})).await;
    assert_eq!(within(call).await.unwrap().unwrap()["ok"], 1);
}

#[tokio::test]
async fn dropping_the_call_cancels_on_the_wire_and_frees_the_entry() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let call =
        tokio::spawn(async move { c.request::<_, Value>("x/forever", Some(&json!({}))).await });
    let req = server.expect_request("x/forever").await;
    assert_eq!(client.in_flight(), 1);
    call.abort();
    let cancel = server.expect_notification("notifications/cancelled").await;
    let params: Value = cancel.params.unwrap().deserialize().unwrap();
    let Id::Number(n) = req.id else { panic!() };
    assert_eq!(params["requestId"], n);
    assert_eq!(client.in_flight(), 0);
}

#[tokio::test]
async fn a_cancel_token_cancels_with_a_cancelled_error() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let token = CancellationToken::new();
    let c = client.clone();
    let t = token.clone();
    let call = tokio::spawn(async move {
        c.request::<_, Value>("x/forever", Some(&json!({})))
            .cancel_token(t)
            .await
    });
    server.expect_request("x/forever").await;
    token.cancel();
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    server.expect_notification("notifications/cancelled").await;
}

#[tokio::test]
async fn progress_resets_the_timeout_and_reaches_the_callback() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let c = client.clone();
    let call = tokio::spawn(async move {
        let opts = RequestOptions::new()
            .timeout(Duration::from_millis(1500))
            .deadline(Deadline::ResetOnProgress)
            .on_progress(move |p| {
                assert!(p.progress >= 1.0);
                s.fetch_add(1, Ordering::SeqCst);
            });
        c.request::<_, Value>("x/long", Some(&json!({"a": 1})))
            .options(opts)
            .await
    });
    let req = server.expect_request("x/long").await;
    let params: Value = req.params.unwrap().deserialize().unwrap();
    assert_eq!(params["a"], 1, "params kept");
    let token = params["_meta"]["progressToken"].clone();
    let Id::Number(n) = req.id else { panic!() };
    assert_eq!(token, n, "the token is the request id");
    // 12 x 250 ms = 3 s, well past the 1.5 s timeout, kept alive by progress
    // (a gap of six intervals would be needed to fail on a loaded machine).
    for i in 1..=12 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        server
            .notify(
                "notifications/progress",
                json!({"progressToken": token, "progress": i, "total": 12}),
            )
            .await;
    }
    server.respond(&req.id, json!({"done": true})).await;
    let v = within(call).await.unwrap().unwrap();
    assert_eq!(v["done"], true);
    assert!(seen.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn max_total_bounds_a_request_kept_alive_by_progress() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let call = tokio::spawn(async move {
        let opts = RequestOptions::new()
            .timeout(Duration::from_millis(500))
            .deadline(Deadline::ResetOnProgress)
            .max_total(Duration::from_millis(900));
        c.request::<_, Value>("x/long", Some(&json!({})))
            .options(opts)
            .await
    });
    let req = server.expect_request("x/long").await;
    let Id::Number(n) = req.id else { panic!() };
    let started = std::time::Instant::now();
    let feeder = tokio::spawn(async move {
        for i in 1..=40 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            server
                .notify(
                    "notifications/progress",
                    json!({"progressToken": n, "progress": i}),
                )
                .await;
        }
        server
    });
    let err = within(call).await.unwrap().unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "bounded by max_total"
    );
    let mut server = feeder.await.unwrap();
    server.expect_notification("notifications/cancelled").await;
}

#[tokio::test]
async fn server_errors_carry_code_message_and_data() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.list_tools(None).await });
    let req = server.expect_request("tools/list").await;
    server
        .send_raw(format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"bad cursor","data":{{"cursor":"x"}}}}}}"#,
            req.id
        ))
        .await;
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    let obj = err.server_error().unwrap();
    assert_eq!(obj.code.0, -32602);
    assert_eq!(obj.data.as_ref().unwrap().as_str(), r#"{"cursor":"x"}"#);
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn malformed_frames_and_unknown_ids_do_not_disturb_the_connection() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.ping().await });
    let req = server.expect_request("ping").await;
    for junk in [
        "not json",
        "{\"jsonrpc\":\"2.0\"}",
        "[1,2]",
        r#"{"jsonrpc":"2.0","id":987654,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"str","result":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"bad":1}}"#,
    ] {
        server.send_raw(junk).await;
    }
    server.respond(&req.id, json!({})).await;
    within(call).await.unwrap().unwrap();
}

#[tokio::test]
async fn responses_in_a_batch_each_reach_their_caller() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let (a, b) = (client.clone(), client.clone());
    let first = tokio::spawn(async move { a.ping().await });
    let r1 = server.expect_request("ping").await;
    let second = tokio::spawn(async move { b.ping().await });
    let r2 = server.expect_request("ping").await;
    server
        .send_raw(format!(
            r#"[{{"jsonrpc":"2.0","id":{},"result":{{}}}},7,{{"jsonrpc":"2.0","id":{},"result":{{}}}}]"#,
            r2.id, r1.id
        ))
        .await;
    within(first).await.unwrap().unwrap();
    within(second).await.unwrap().unwrap();
}

#[tokio::test]
async fn dropping_the_last_handle_closes_the_connection() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let other = client.clone();
    drop(client);
    // One handle is still alive: the connection stays up.
    let ping = tokio::spawn(async move {
        other.ping().await.unwrap();
        other
    });
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    let other = within(ping).await.unwrap();
    drop(other);
    server.expect_closed().await;
}

#[tokio::test]
async fn a_malformed_result_is_a_protocol_error() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.list_tools(None).await });
    let req = server.expect_request("tools/list").await;
    server.respond(&req.id, json!({"tools": 3})).await;
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    assert!(std::error::Error::source(&err).is_some());
}

#[tokio::test]
async fn in_flight_requests_fail_with_closed_when_the_server_dies() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.ping().await });
    server.expect_request("ping").await;
    server.peer().send_stderr("panic: out of cheese").await;
    server.crash(101, &["panic: out of cheese"]).await;
    let err = within(call).await.unwrap().unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    assert_eq!(err.stderr_tail(), ["panic: out of cheese".to_string()]);
    // Later calls fail at once with the same cause.
    let again = within(client.ping()).await.unwrap_err();
    assert!(again.is_closed());
}
