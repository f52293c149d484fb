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
