//! Requests the server sends us: ping, handlers, bounds, cancellation.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{connected, within};
use mcpwire_client::types::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    ListRootsResult, Root,
};
use mcpwire_client::{ClientConfig, ElicitationDefaults, HandlerError, RequestContext};
use mcpwire_codec::jsonrpc::{ErrorCode, Id};
use serde_json::{Value, json};
use tokio::sync::Notify;

fn sampling_params(text: &str) -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": 10
    })
}

#[tokio::test]
async fn ping_is_answered_even_with_id_zero() {
    let (_client, mut server) = connected(ClientConfig::new()).await;
    server.request(0, "ping", json!({})).await;
    let r = server.expect_response(&Id::Number(0)).await;
    assert_eq!(r.outcome.unwrap().as_str(), "{}");
}

#[tokio::test]
async fn unknown_methods_and_unconfigured_handlers_are_method_not_found() {
    let (_client, mut server) = connected(ClientConfig::new()).await;
    server.request("a", "foo/bar", json!({})).await;
    let r = server.expect_response(&Id::from("a")).await;
    assert_eq!(r.outcome.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
    server
        .request(7, "sampling/createMessage", sampling_params("hi"))
        .await;
    let r = server.expect_response(&Id::Number(7)).await;
    assert_eq!(r.outcome.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
}

#[tokio::test]
async fn handlers_answer_and_bad_params_are_invalid_params() {
    let config = ClientConfig::new()
        .sampling(|p: CreateMessageParams, cx: RequestContext| async move {
            assert_eq!(cx.method, "sampling/createMessage");
            Ok(CreateMessageResult::text(
                "test-model",
                format!("echo {}", p.messages[0].text()),
            ))
        })
        .roots(|_cx: RequestContext| async {
            Ok::<_, HandlerError>(ListRootsResult::new(vec![Root::new(
                "file:///work",
                Some("work".into()),
            )]))
        })
        .elicitation(|p: ElicitParams, _cx: RequestContext| async move {
            if p.is_url_mode() {
                assert_eq!(p.url.as_deref(), Some("https://example.invalid/auth"));
                Ok(ElicitResult::new(ElicitAction::Accept, None))
            } else {
                let mut content = serde_json::Map::new();
                content.insert("name".into(), json!("Ada"));
                Ok(ElicitResult::new(ElicitAction::Accept, Some(content)))
            }
        });
    let (_client, mut server) = connected(config).await;

    server
        .request(1, "sampling/createMessage", sampling_params("hi"))
        .await;
    let r: Value = server
        .expect_response(&Id::Number(1))
        .await
        .outcome
        .unwrap()
        .deserialize()
        .unwrap();
    assert_eq!(r["content"]["text"], "echo hi");
    assert_eq!(r["model"], "test-model");

    server.request(2, "roots/list", json!({})).await;
    let r: Value = server
        .expect_response(&Id::Number(2))
        .await
        .outcome
        .unwrap()
        .deserialize()
        .unwrap();
    assert_eq!(r["roots"][0]["uri"], "file:///work");

    server
        .request(
            3,
            "elicitation/create",
            json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
        )
        .await;
    let r: Value = server
        .expect_response(&Id::Number(3))
        .await
        .outcome
        .unwrap()
        .deserialize()
        .unwrap();
    assert_eq!(r, json!({"action": "accept", "content": {"name": "Ada"}}));

    server
        .request(
            4,
            "elicitation/create",
            json!({"mode": "url", "message": "log in", "url": "https://example.invalid/auth", "elicitationId": "e1"}),
        )
        .await;
    let r: Value = server
        .expect_response(&Id::Number(4))
        .await
        .outcome
        .unwrap()
        .deserialize()
        .unwrap();
    assert_eq!(r, json!({"action": "accept"}));

    server
        .request(5, "sampling/createMessage", json!({"messages": 3}))
        .await;
    let r = server.expect_response(&Id::Number(5)).await;
    assert_eq!(r.outcome.unwrap_err().code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn handlers_run_concurrently_up_to_the_bound_and_never_block_responses() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Notify::new());
    let (r, p, rel) = (running.clone(), peak.clone(), release.clone());
    let config = ClientConfig::new().max_concurrent_handlers(2).sampling(
        move |_p: CreateMessageParams, _cx: RequestContext| {
            let (r, p, rel) = (r.clone(), p.clone(), rel.clone());
            async move {
                let now = r.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                rel.notified().await;
                r.fetch_sub(1, Ordering::SeqCst);
                Ok(CreateMessageResult::text("m", "ok"))
            }
        },
    );
    let (client, mut server) = connected(config).await;
    for i in 1..=3 {
        server
            .request(i, "sampling/createMessage", sampling_params("x"))
            .await;
    }
    // Two run, the third waits for a slot.
    within(async {
        while running.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // Handlers in progress do not hold up our own requests.
    let c = client.clone();
    let ping = tokio::spawn(async move { c.ping().await });
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
    let mut answered = 0;
    while answered < 3 {
        release.notify_waiters();
        if let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(100), server.recv()).await {
            answered += 1;
        }
    }
    assert_eq!(peak.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_server_cancellation_aborts_the_handler_and_nothing_is_answered() {
    struct Flag(Arc<AtomicBool>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let started = Arc::new(Notify::new());
    let (d, s) = (dropped.clone(), started.clone());
    let config = ClientConfig::new().elicitation(move |_p: ElicitParams, _cx: RequestContext| {
        let flag = Flag(d.clone());
        let s = s.clone();
        async move {
            let _flag = flag;
            s.notify_one();
            std::future::pending::<()>().await;
            Ok(ElicitResult::new(ElicitAction::Cancel, None))
        }
    });
    let (_client, mut server) = connected(config).await;
    server
        .request(
            "e",
            "elicitation/create",
            json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}}),
        )
        .await;
    within(started.notified()).await;
    server
        .notify(
            "notifications/cancelled",
            json!({"requestId": "e", "reason": "user left"}),
        )
        .await;
    within(async {
        while !dropped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // The next thing the client sends is the answer to a later ping, not an
    // answer to the cancelled request.
    server.request(9, "ping", json!({})).await;
    server.expect_response(&Id::Number(9)).await;
}

#[tokio::test]
async fn too_many_waiting_server_requests_are_refused_not_queued() {
    let config = ClientConfig::new()
        .max_concurrent_handlers(1)
        .max_queued_handlers(1)
        .sampling(|_p: CreateMessageParams, _cx: RequestContext| async {
            std::future::pending::<()>().await;
            Ok(CreateMessageResult::text("m", "never"))
        });
    let (_client, mut server) = connected(config).await;
    for i in 1..=3 {
        server
            .request(i, "sampling/createMessage", sampling_params("x"))
            .await;
    }
    let r = server.expect_response(&Id::Number(3)).await;
    assert_eq!(r.outcome.unwrap_err().code, ErrorCode::INTERNAL_ERROR);
}

/// A form asking for `name` (default "John Doe"), `age` (default 30) and
/// `note` (no default).
fn form_with_defaults() -> Value {
    json!({
        "message": "who are you?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "note": {"type": "string"}
            }
        }
    })
}

/// Answers forms with `action`, entering only `name: "Ada"`.
fn answer_with(action: ElicitAction) -> ClientConfig {
    ClientConfig::new().elicitation(move |_p: ElicitParams, _cx: RequestContext| async move {
        let mut content = serde_json::Map::new();
        content.insert("name".into(), json!("Ada"));
        Ok(ElicitResult::new(action, Some(content)))
    })
}

async fn elicit(config: ClientConfig) -> Value {
    let (_client, mut server) = connected(config).await;
    server
        .request(1, "elicitation/create", form_with_defaults())
        .await;
    server
        .expect_response(&Id::Number(1))
        .await
        .outcome
        .unwrap()
        .deserialize()
        .unwrap()
}

#[tokio::test]
async fn an_accepted_form_gets_the_defaults_of_the_fields_left_out() {
    let r = elicit(answer_with(ElicitAction::Accept)).await;
    assert_eq!(
        r,
        json!({"action": "accept", "content": {"name": "Ada", "age": 30}})
    );
}

#[tokio::test]
async fn defaults_are_not_applied_when_turned_off_or_when_the_form_is_declined() {
    let r =
        elicit(answer_with(ElicitAction::Accept).elicitation_defaults(ElicitationDefaults::Leave))
            .await;
    assert_eq!(r, json!({"action": "accept", "content": {"name": "Ada"}}));
    let r = elicit(answer_with(ElicitAction::Decline)).await;
    assert_eq!(r, json!({"action": "decline", "content": {"name": "Ada"}}));
}

#[tokio::test]
async fn an_accept_without_content_gets_a_content_of_defaults() {
    let config = ClientConfig::new().elicitation(|_p: ElicitParams, _cx: RequestContext| async {
        Ok(ElicitResult::new(ElicitAction::Accept, None))
    });
    let r = elicit(config).await;
    assert_eq!(
        r,
        json!({"action": "accept", "content": {"name": "John Doe", "age": 30}})
    );
}
