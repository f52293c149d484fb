//! The real client against the real demo server binary, over its pipes.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcpwire_client::types::{
    CompletionReference, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams,
    ElicitResult,
};
use mcpwire_client::{Client, ClientConfig, Deadline, ErrorKind, RequestContext, RequestOptions};
use mcpwire_transport::{IoConfig, IoTransport};
use serde_json::json;

const LONG: Duration = Duration::from_secs(30);

async fn spawn(config: ClientConfig) -> (Client, tokio::process::Child) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpwire-demo-server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the demo server starts");
    let transport = IoTransport::new(
        child.stdout.take().unwrap(),
        child.stdin.take().unwrap(),
        IoConfig::new(),
    );
    let client = tokio::time::timeout(LONG, Client::connect(transport, config))
        .await
        .expect("in time")
        .expect("connected");
    (client, child)
}

#[tokio::test]
async fn tools_resources_prompts_and_completion() {
    let (client, mut child) = spawn(ClientConfig::new()).await;
    assert_eq!(client.server_info().unwrap().name, "mcpwire-demo-server");
    assert_eq!(client.protocol_version().as_deref(), Some("2025-11-25"));

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["echo", "add", "slow", "crash", "ask_llm", "ask_user"]
    );

    let r = client
        .call_tool("echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "hi");
    let r = client
        .call_tool("add", json!({"a": 2, "b": 3.5}))
        .await
        .unwrap();
    assert_eq!(r.structured_content.unwrap()["sum"], 5.5);

    let read = client.read_resource("demo://echo/xyz").await.unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("xyz"));
    let err = client.read_resource("demo://nope").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(client.list_all_resources().await.unwrap().len(), 1);
    assert_eq!(client.list_all_resource_templates().await.unwrap().len(), 1);

    let mut args = serde_json::Map::new();
    args.insert("name".into(), json!("Ada"));
    let p = client.get_prompt("greet", Some(args)).await.unwrap();
    assert!(p.messages[0].content.as_text().unwrap().contains("Ada"));
    let c = client
        .complete(
            CompletionReference::Prompt {
                name: "greet".into(),
            },
            "name",
            "a",
            None,
        )
        .await
        .unwrap();
    assert_eq!(c.completion.values, ["Ada", "Alan"]);

    // Without handlers, the server's sampling tool reports a tool error.
    let r = client
        .call_tool("ask_llm", json!({"prompt": "2+2"}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));

    client.close().await;
    let status = tokio::time::timeout(LONG, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        status.success(),
        "the server exits cleanly on EOF: {status}"
    );
}

#[tokio::test]
async fn progress_sampling_elicitation_and_logging() {
    let config = ClientConfig::new()
        .sampling(|p: CreateMessageParams, _cx: RequestContext| async move {
            Ok(CreateMessageResult::text(
                "fake-model",
                format!("you asked {}", p.messages[0].text()),
            ))
        })
        .elicitation(|p: ElicitParams, _cx: RequestContext| async move {
            assert!(!p.is_url_mode());
            let mut content = serde_json::Map::new();
            content.insert("name".into(), json!("Grace"));
            Ok(ElicitResult::new(ElicitAction::Accept, Some(content)))
        });
    let (client, _child) = spawn(config).await;
    let mut logs = client.log_messages();

    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let opts = RequestOptions::new()
        .timeout(Duration::from_secs(5))
        .deadline(Deadline::ResetOnProgress)
        .on_progress(move |_p| {
            s.fetch_add(1, Ordering::SeqCst);
        });
    let r = client
        .call_tool("slow", &json!({"steps": 3, "delay_ms": 50}))
        .options(opts)
        .await
        .unwrap();
    assert_eq!(r.text(), "done after 3 steps");
    assert!(
        seen.load(Ordering::SeqCst) >= 1,
        "progress reached the callback"
    );

    let r = client
        .call_tool("ask_llm", json!({"prompt": "2+2"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "the model said: you asked 2+2");
    let r = client.call_tool("ask_user", json!({})).await.unwrap();
    assert_eq!(r.text(), "hello, Grace");

    client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    let log = tokio::time::timeout(LONG, logs.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(log.data, "add 1 1");
}

#[tokio::test]
async fn many_calls_in_flight_all_complete() {
    let (client, _child) = spawn(ClientConfig::new()).await;
    let mut calls = Vec::new();
    for i in 0..200 {
        let c = client.clone();
        calls.push(tokio::spawn(async move {
            c.call_tool("echo", json!({ "message": i.to_string() }))
                .await
        }));
    }
    for (i, call) in calls.into_iter().enumerate() {
        let r = tokio::time::timeout(LONG, call)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(r.text(), i.to_string());
    }
}

#[tokio::test]
async fn a_crashed_server_is_restarted_when_reconnect_is_on() {
    use mcpwire::stdio::{StderrMode, StdioConfig};
    use mcpwire_client::{ConnectionState, Reconnect};

    let stdio =
        StdioConfig::new(env!("CARGO_BIN_EXE_mcpwire-demo-server")).stderr(StderrMode::Discard);
    let config = ClientConfig::new().reconnect(
        Reconnect::new()
            .initial_delay(Duration::from_millis(50))
            .max_attempts(3),
    );
    let client = tokio::time::timeout(LONG, mcpwire::connect_stdio(stdio, config))
        .await
        .unwrap()
        .unwrap();
    let mut states = client.watch_state();
    let err = client.call_tool("crash", json!({})).await.unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    assert!(
        err.stderr_tail()
            .iter()
            .any(|l| l.contains("crashing on request")),
        "{err:?}"
    );
    tokio::time::timeout(
        LONG,
        states.wait_for(|s| matches!(s, ConnectionState::Backoff { .. })),
    )
    .await
    .unwrap()
    .unwrap();
    tokio::time::timeout(LONG, states.wait_for(ConnectionState::is_ready))
        .await
        .unwrap()
        .unwrap();
    let r = client
        .call_tool("echo", json!({"message": "back"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "back");
    client.close().await;
}
