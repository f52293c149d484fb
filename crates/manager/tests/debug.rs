//! What a routed call shows in `Debug`: enough to know which call it is,
//! never its arguments (they may hold secrets).

mod common;

use common::memory;
use mcpwire_manager::{Manager, ServerSpec};
use serde_json::json;

#[tokio::test]
async fn a_tool_call_shows_its_name_and_never_its_arguments() {
    let (a, _peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .build()
        .unwrap();
    let call = manager.call_tool("a__login", json!({"password": "hunter2"}));
    let shown = format!("{call:?}");
    assert!(shown.starts_with("Routed { op: CallTool {"), "{shown}");
    assert!(shown.contains("\"a__login\""), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");
    drop(call);
    manager.close().await;
}

#[tokio::test]
async fn a_prompt_request_shows_its_name_and_never_its_arguments() {
    let (a, _peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .build()
        .unwrap();
    let mut arguments = serde_json::Map::new();
    arguments.insert("token".into(), json!("hunter2"));
    let get = manager.get_prompt("a__greet", Some(arguments));
    let shown = format!("{get:?}");
    assert!(shown.starts_with("Routed { op: GetPrompt {"), "{shown}");
    assert!(shown.contains("\"a__greet\""), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");
    drop(get);
    let read = manager.read_resource("docs://readme");
    let shown = format!("{read:?}");
    assert!(
        shown.contains("ReadResource") && shown.contains("docs://readme"),
        "{shown}"
    );
    drop(read);
    manager.close().await;
}
