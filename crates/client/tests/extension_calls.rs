//! The extensions' requests (tasks, skills) are `Call`s like every other
//! request: each takes the same options, and an option reaches every
//! request a call sends, polls and file reads included.

mod common;

use std::time::Duration;

use common::{connected, within};
use mcpwire_client::skills::SkillEntry;
use mcpwire_client::tasks::Task;
use mcpwire_client::{ClientConfig, ErrorKind, TraceContext};
use mcpwire_test_support::FakeServer;
use serde_json::{Map, Value, json};

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn trace() -> TraceContext {
    TraceContext::new(TRACEPARENT)
}

/// Waits for `method`, checks that it carries the call's trace context,
/// and answers it with `result`.
async fn traced(server: &mut FakeServer, method: &str, result: Value) -> Value {
    let req = server.expect_request(method).await;
    let params: Value = req.params.as_ref().unwrap().deserialize().unwrap();
    assert_eq!(
        params["_meta"]["traceparent"], TRACEPARENT,
        "{method} without the call's trace context: {params}"
    );
    server.respond(&req.id, result).await;
    params
}

#[tokio::test]
async fn each_task_request_takes_the_call_options() {
    let (client, mut server) = connected(ClientConfig::new().tasks(true)).await;
    let args = json!({"n": 1});

    let call = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .tasks()
                .call_tool("slow", &args)
                .trace_context(trace())
                .await
        }
    });
    let params = traced(
        &mut server,
        "tools/call",
        json!({"resultType": "task", "taskId": "t1", "status": "working"}),
    )
    .await;
    assert_eq!(params["name"], "slow");
    assert_eq!(params["arguments"], json!({"n": 1}));
    let outcome = within(call).await.unwrap().unwrap();
    assert!(
        matches!(&outcome, mcpwire_client::tasks::ToolCallOutcome::Task(t) if t.task_id == "t1"),
        "{outcome:?}"
    );

    let get = tokio::spawn({
        let client = client.clone();
        async move { client.tasks().get("t1").trace_context(trace()).await }
    });
    let params = traced(
        &mut server,
        "tasks/get",
        json!({"taskId": "t1", "status": "working"}),
    )
    .await;
    assert_eq!(params["taskId"], "t1");
    assert_eq!(within(get).await.unwrap().unwrap().task_id, "t1");

    let update = tokio::spawn({
        let client = client.clone();
        async move {
            let mut answers = Map::new();
            answers.insert("q".into(), json!({"action": "accept"}));
            client
                .tasks()
                .update("t1", answers)
                .trace_context(trace())
                .await
        }
    });
    let params = traced(&mut server, "tasks/update", json!({})).await;
    assert_eq!(params["inputResponses"]["q"]["action"], "accept");
    within(update).await.unwrap().unwrap();

    let cancel = tokio::spawn({
        let client = client.clone();
        async move { client.tasks().cancel("t1").trace_context(trace()).await }
    });
    traced(&mut server, "tasks/cancel", json!({})).await;
    within(cancel).await.unwrap().unwrap();
    client.close().await;
}

#[tokio::test]
async fn waiting_for_a_task_polls_with_the_call_options() {
    let (client, mut server) = connected(ClientConfig::new().tasks(true)).await;
    let task: Task =
        serde_json::from_value(json!({"taskId": "t2", "status": "working", "pollIntervalMs": 50}))
            .unwrap();
    let wait = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .tasks()
                .wait(task, Duration::from_secs(20), |_| {})
                .trace_context(trace())
                .await
        }
    });
    traced(
        &mut server,
        "tasks/get",
        json!({"taskId": "t2", "status": "working", "pollIntervalMs": 50}),
    )
    .await;
    traced(
        &mut server,
        "tasks/get",
        json!({"taskId": "t2", "status": "completed", "result": {"done": true}}),
    )
    .await;
    assert_eq!(within(wait).await.unwrap().unwrap(), json!({"done": true}));
    client.close().await;
}

#[tokio::test]
async fn a_task_request_times_out_by_the_call_timeout() {
    let (client, mut server) = connected(ClientConfig::new().tasks(true)).await;
    let get = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .tasks()
                .get("never")
                .timeout(Duration::from_millis(100))
                .await
        }
    });
    // Seen, never answered.
    server.expect_request("tasks/get").await;
    let err = within(get).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    client.close().await;
}

#[tokio::test]
async fn each_skill_request_takes_the_call_options() {
    let (client, mut server) = connected(ClientConfig::new()).await;
    let entry = json!({
        "uri": "skill://a/SKILL.md",
        "frontmatter": {"name": "a"},
        "resources": "dynamic",
    });

    let list = tokio::spawn({
        let client = client.clone();
        async move { client.skills().list_all().trace_context(trace()).await }
    });
    traced(
        &mut server,
        "skills/list",
        json!({"skills": [entry], "nextCursor": "2"}),
    )
    .await;
    let params = traced(&mut server, "skills/list", json!({"skills": [entry]})).await;
    assert_eq!(params["cursor"], "2");
    let skills = within(list).await.unwrap().unwrap();
    assert_eq!(skills.len(), 2);

    let get = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .skills()
                .get("skill://a/SKILL.md")
                .trace_context(trace())
                .await
        }
    });
    traced(&mut server, "skills/get", json!({"skill": entry})).await;
    let got: SkillEntry = within(get).await.unwrap().unwrap();
    assert_eq!(got.uri, "skill://a/SKILL.md");

    let dir = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .skills()
                .read_directory("skill://a", None)
                .trace_context(trace())
                .await
        }
    });
    traced(
        &mut server,
        "resources/directory/read",
        json!({"resources": []}),
    )
    .await;
    assert!(within(dir).await.unwrap().unwrap().resources.is_empty());

    let load = tokio::spawn({
        let client = client.clone();
        async move { client.skills().load(&got).trace_context(trace()).await }
    });
    traced(
        &mut server,
        "resources/read",
        json!({"contents": [{"uri": "skill://a/SKILL.md", "text": "---\nname: a\n---\nHello"}]}),
    )
    .await;
    let loaded = within(load).await.unwrap().unwrap();
    assert!(loaded.skill_md().ends_with("Hello"));
    client.close().await;
}

/// A wait whose next poll would come after its bound ends with a timeout
/// at once, without that poll: here the server asks for a poll a second
/// away and the wait may take a tenth of that.
#[tokio::test]
async fn a_wait_that_would_outlast_its_bound_times_out_without_polling() {
    let (client, mut server) = connected(ClientConfig::new().tasks(true)).await;
    let task: Task = serde_json::from_value(
        json!({"taskId": "t3", "status": "working", "pollIntervalMs": 1000}),
    )
    .unwrap();
    // A wait that sleeps the poll out sends `tasks/get`, which is never
    // answered here: `within` runs out.
    let err = within(
        client
            .tasks()
            .wait(task, Duration::from_millis(100), |_| {}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    // Nothing was sent: the next request the server sees is this ping.
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let req = server.expect_request("ping").await;
    server.respond(&req.id, json!({})).await;
    within(ping).await.unwrap().unwrap();
    client.close().await;
}
