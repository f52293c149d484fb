//! `mcpwire` against the real servers `cargo xtask servers` installs: the
//! reference `server-everything` (npm) and `mcp-server-time` (PyPI).
//! Found under `$MCPWIRE_SERVERS_DIR` (default `<workspace>/target/mcp-servers`);
//! ignored by default and failing if a server is missing; `cargo xtask ci`
//! runs them.

mod support;

use serde_json::Value;
use support::{mcpwire, stderr, stdout};

fn installed(relative: &str) -> String {
    let path = support::installed(relative);
    path.to_str().expect("a UTF-8 path").to_owned()
}

fn everything() -> String {
    installed("npm/node_modules/.bin/mcp-server-everything")
}

fn run(args: &[&str], server: &str) -> std::process::Output {
    mcpwire()
        .args(args)
        .arg("--")
        .arg(server)
        .output()
        .expect("runs")
}

#[test]
#[ignore = "needs the real servers: cargo xtask servers (cargo xtask ci runs it)"]
fn server_everything_lists_and_calls_with_typed_arguments() {
    let server = everything();
    let out = run(&["tools", "--json"], &server);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-sum"),
        "{names:?}"
    );
    // Numbers typed by the schema.
    let out = run(&["call", "get-sum", "a=1", "b=2"], &server);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains('3'), "{}", stdout(&out));
    // An enum: a value outside it is refused before the call.
    let out = run(
        &["call", "get-structured-content", "location=Paris"],
        &server,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("expects one of \"New York\""),
        "{}",
        stderr(&out)
    );
    let out = run(
        &[
            "--json",
            "call",
            "get-structured-content",
            "location=Chicago",
        ],
        &server,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert!(v["structuredContent"]["temperature"].is_number(), "{v}");
}

#[test]
#[ignore = "needs the real servers: cargo xtask servers (cargo xtask ci runs it)"]
fn server_everything_content_blocks_are_rendered() {
    let server = everything();
    let out = run(&["call", "get-tiny-image"], &server);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("[image image/png, "),
        "{}",
        stdout(&out)
    );
    let out = run(&["call", "get-resource-links", "count=2"], &server);
    assert!(
        stdout(&out).contains("[resource link demo://"),
        "{}",
        stdout(&out)
    );
    let out = run(
        &[
            "call",
            "trigger-long-running-operation",
            "duration=1",
            "steps=2",
        ],
        &server,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("completed"), "{}", stdout(&out));
    let out = run(&["prompts"], &server);
    assert!(
        out.status.success() && stdout(&out).starts_with("PROMPT"),
        "{}",
        stderr(&out)
    );
    let out = run(&["resources", "--format", "ndjson"], &server);
    assert!(out.status.success(), "{}", stderr(&out));
    for line in stdout(&out).lines() {
        let v: Value = serde_json::from_str(line).expect("a JSON line");
        assert!(v["uri"].is_string(), "{line}");
    }
}

#[test]
#[ignore = "needs the real servers: cargo xtask servers (cargo xtask ci runs it)"]
fn mcp_server_time_answers_in_utc() {
    let server = installed("venv/bin/mcp-server-time");
    let out = run(
        &["--json", "call", "get_current_time", "timezone=UTC"],
        &server,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(v["structuredContent"]["timezone"], "UTC", "{v}");
}
