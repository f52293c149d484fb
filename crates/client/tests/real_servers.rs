//! The client against real MCP servers over stdio: the reference
//! `server-everything` (npm) and a server built with the official Python SDK
//! (`tests/mcpserver_script.py`), both installed by `cargo xtask servers`.
//!
//! Servers are found under `$MCPWIRE_SERVERS_DIR` (default
//! `<workspace>/target/mcp-servers`). The tests are ignored by default and
//! fail if a server is missing; `cargo xtask ci` runs them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcpwire_client::types::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, LogMessage,
    LoggingLevel,
};
use mcpwire_client::{Client, ClientConfig, Deadline, ListKind, RequestContext, RequestOptions};
use mcpwire_stdio::{StderrMode, StdioConfig, StdioTransport};
use serde_json::json;

const LONG: Duration = Duration::from_secs(60);

fn servers_dir() -> PathBuf {
    match std::env::var_os("MCPWIRE_SERVERS_DIR") {
        Some(d) => d.into(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"),
    }
}

/// The path of an installed server program; a failure if it is missing.
fn installed(relative: &str) -> PathBuf {
    let path = servers_dir().join(relative);
    assert!(
        path.exists(),
        "{} is not installed: run `cargo xtask servers` (or set MCPWIRE_SERVERS_DIR)",
        path.display()
    );
    path
}

async fn spawn(program: &Path, args: &[&str], config: ClientConfig) -> Client {
    let stdio = StdioConfig::new(program)
        .args(args)
        .stderr(StderrMode::Discard);
    let transport = StdioTransport::spawn(stdio)
        .await
        .expect("the server starts");
    tokio::time::timeout(LONG, Client::connect(transport, config))
        .await
        .expect("handshake in time")
        .expect("connected")
}

/// Reads log messages until one contains `needle` (servers may log other
/// things first).
async fn wait_for_log(logs: &mut tokio::sync::broadcast::Receiver<LogMessage>, needle: &str) {
    let found = tokio::time::timeout(LONG, async {
        loop {
            match logs.recv().await {
                Ok(m) if m.data.to_string().contains(needle) => return,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("log stream ended: {e}"),
            }
        }
    })
    .await;
    assert!(found.is_ok(), "no log message containing {needle:?}");
}

/// Lists tools until `name` appears: server-everything registers the tools
/// that depend on client capabilities just after initialization.
async fn wait_for_tool(client: &Client, name: &str) {
    let mut changed = client.list_changed(ListKind::Tools);
    for _ in 0..50 {
        let tools = client.list_all_tools().await.unwrap();
        if tools.iter().any(|t| t.name == name) {
            return;
        }
        let _ = tokio::time::timeout(Duration::from_millis(200), changed.changed()).await;
    }
    panic!("tool {name} never appeared");
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn server_everything_tools_resources_prompts() {
    let bin = installed("npm/node_modules/.bin/mcp-server-everything");
    let client = spawn(&bin, &["stdio"], ClientConfig::new()).await;
    let info = client.server_info().unwrap();
    assert!(!info.name.is_empty());
    assert!(mcpwire_client::is_supported(
        &client.protocol_version().unwrap()
    ));

    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let r = client
        .call_tool("echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert!(r.text().contains("hi"), "{r:?}");
    let r = client
        .call_tool("get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(r.text().contains('5'), "{r:?}");
    // Arguments of any serializable type go straight into the frame.
    #[derive(serde::Serialize)]
    struct Sum {
        a: i64,
        b: i64,
    }
    let r = client
        .call_tool("get-sum", &Sum { a: 40, b: 2 })
        .await
        .unwrap();
    assert!(r.text().contains("42"), "{r:?}");
    let r = client
        .call_tool("echo", &json!({"message": "by reference \"quoted\""}))
        .await
        .unwrap();
    assert!(r.text().contains("by reference \"quoted\""), "{r:?}");
    // Schema validation applies to borrowed arguments as to owned ones.
    let r = client
        .call_tool("get-structured-content", &json!({"location": "New York"}))
        .await
        .unwrap();
    assert!(r.structured_content.unwrap().get("temperature").is_some());
    // get-structured-content declares an outputSchema; the client validates.
    let r = client
        .call_tool("get-structured-content", json!({"location": "New York"}))
        .await
        .unwrap();
    assert!(r.structured_content.unwrap().get("temperature").is_some());
    // Content of every kind parses (image, resource links, annotations).
    client.call_tool("get-tiny-image", json!({})).await.unwrap();
    client
        .call_tool("get-resource-links", json!({"count": 3}))
        .await
        .unwrap();
    client
        .call_tool(
            "get-annotated-message",
            json!({"messageType": "error", "includeImage": true}),
        )
        .await
        .unwrap();

    let resources = client.list_all_resources().await.unwrap();
    assert!(!resources.is_empty());
    let read = client.read_resource(&resources[0].uri).await.unwrap();
    assert!(!read.contents.is_empty());
    let templates = client.list_all_resource_templates().await.unwrap();
    assert!(!templates.is_empty());

    let prompts = client.list_all_prompts().await.unwrap();
    for name in ["simple-prompt", "args-prompt"] {
        let prompt = prompts.iter().find(|p| p.name == name).expect(name);
        let mut args = serde_json::Map::new();
        for a in prompt.arguments.iter().flatten() {
            if a.required == Some(true) {
                args.insert(a.name.clone(), json!("x"));
            }
        }
        let got = client.get_prompt(name, Some(args)).await.unwrap();
        assert!(!got.messages.is_empty());
    }
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn server_everything_progress_logging_and_subscriptions() {
    let bin = installed("npm/node_modules/.bin/mcp-server-everything");
    let client = spawn(&bin, &["stdio"], ClientConfig::new()).await;
    let mut logs = client.log_messages();

    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let opts = RequestOptions::new()
        .timeout(Duration::from_secs(10))
        .deadline(Deadline::ResetOnProgress)
        .on_progress(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        });
    let r = client
        .call_tool(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
        )
        .options(opts)
        .await
        .unwrap();
    assert!(!r.content.is_empty());
    assert!(seen.load(Ordering::SeqCst) >= 1, "progress arrived");

    client.set_logging_level(LoggingLevel::Debug).await.unwrap();
    let resources = client.list_all_resources().await.unwrap();
    let uri = resources[0].uri.clone();
    let mut sub = client.subscribe_resource(&uri).await.unwrap();
    // The server logs each subscription.
    wait_for_log(&mut logs, "Subscribe").await;
    // Simulated updates come every 5 s once toggled on.
    client
        .call_tool("toggle-subscriber-updates", json!({}))
        .await
        .unwrap();
    let update = tokio::time::timeout(LONG, sub.changed())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(update.uri, uri);
    client.unsubscribe_resource(&uri).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn server_everything_sampling_and_elicitation() {
    let bin = installed("npm/node_modules/.bin/mcp-server-everything");
    let config = ClientConfig::new()
        .sampling(|p: CreateMessageParams, _cx: RequestContext| async move {
            Ok(CreateMessageResult::text(
                "fake-model",
                format!("sampled: {}", p.messages[0].text()),
            ))
        })
        .elicitation(|p: ElicitParams, _cx: RequestContext| async move {
            assert!(p.requested_schema.is_some());
            let mut content = serde_json::Map::new();
            content.insert("name".into(), json!("Ada Lovelace"));
            Ok(ElicitResult::new(ElicitAction::Accept, Some(content)))
        });
    let client = spawn(&bin, &["stdio"], config).await;

    wait_for_tool(&client, "trigger-sampling-request").await;
    let r = client
        .call_tool(
            "trigger-sampling-request",
            json!({"prompt": "hello", "maxTokens": 10}),
        )
        .await
        .unwrap();
    assert!(r.text().contains("sampled:"), "{r:?}");

    wait_for_tool(&client, "trigger-elicitation-request").await;
    let r = client
        .call_tool("trigger-elicitation-request", json!({}))
        .await
        .unwrap();
    assert!(r.text().contains("Ada Lovelace"), "{r:?}");
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn python_sdk_server() {
    let python = installed("venv/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcpserver_script.py");
    let client = spawn(&python, &[script.to_str().unwrap()], ClientConfig::new()).await;
    assert_eq!(client.server_info().unwrap().name, "mcpwire-python-fixture");

    let tools = client.list_all_tools().await.unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t.name == "add" && t.output_schema.is_some())
    );
    let r = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(r.structured_content.unwrap()["sum"], 3.0);
    let r = client
        .call_tool("echo", json!({"message": "py"}))
        .await
        .unwrap();
    assert_eq!(r.structured_content.unwrap()["result"], "py");

    let mut logs = client.log_messages();
    // In either era (the SDK 2.x server speaks 2026-07-28, where the level
    // travels with each request).
    client.set_logging_level(LoggingLevel::Info).await.unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let opts = RequestOptions::new().on_progress(move |_| {
        s.fetch_add(1, Ordering::SeqCst);
    });
    let r = client
        .call_tool("slow", json!({"steps": 3}))
        .options(opts)
        .await
        .unwrap();
    assert_eq!(r.structured_content.unwrap()["result"], "done 3");
    assert!(seen.load(Ordering::SeqCst) >= 1, "progress arrived");
    wait_for_log(&mut logs, "slow finished 3 steps").await;

    let read = client.read_resource("fixture://greeting").await.unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("hello from python"));
    let mut args = serde_json::Map::new();
    args.insert("code".into(), json!("fn main() {}"));
    let p = client.get_prompt("review", Some(args)).await.unwrap();
    assert!(p.messages[0].content.as_text().unwrap().contains("fn main"));
}

#[tokio::test]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn python_sdk_server_subscriptions_listen() {
    // The SDK 2.x server speaks 2026-07-28 over stdio and serves
    // `subscriptions/listen`: list changes and resource updates arrive on
    // that stream, through the same API as in the `initialize` era.
    let python = installed("venv/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcpserver_script.py");
    let client = spawn(&python, &[script.to_str().unwrap()], ClientConfig::new()).await;
    assert_eq!(client.era(), Some(mcpwire_client::Era::Modern));
    let mut tools = client.list_changed(ListKind::Tools);
    let mut greeting = tokio::time::timeout(LONG, client.subscribe_resource("fixture://greeting"))
        .await
        .expect("in time")
        .expect("the server acknowledged the resource");
    let r = client.call_tool("touch", json!({})).await.unwrap();
    assert_eq!(r.text(), "touched");
    let update = tokio::time::timeout(LONG, greeting.changed())
        .await
        .expect("an update in time")
        .unwrap();
    assert_eq!(update.uri, "fixture://greeting");
    tokio::time::timeout(LONG, tools.wait_for(|n| *n >= 1))
        .await
        .expect("a tools change in time")
        .unwrap();
    // Unsubscribing opens a stream without it; requests go on meanwhile.
    tokio::time::timeout(LONG, client.unsubscribe_resource("fixture://greeting"))
        .await
        .expect("in time")
        .unwrap();
    client
        .call_tool("echo", json!({"message": "still here"}))
        .await
        .unwrap();
    client.close().await;
}
