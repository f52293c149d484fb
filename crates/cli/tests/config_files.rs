//! Servers named in the configuration files users already have: Claude
//! Desktop JSON, VS Code's `servers` (JSON with comments), Codex TOML;
//! `servers` lists them without connecting, secrets redacted.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{DemoHttp, demo_str, mcpwire, stderr, stdout};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writes");
    path
}

fn json_path(s: &str) -> String {
    serde_json::to_string(s).expect("a JSON string")
}

fn tool_names(config: &Path, extra: &[&str]) -> Vec<String> {
    let out = mcpwire()
        .arg("--config")
        .arg(config)
        .args(extra)
        .args(["tools", "--json"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    v["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn claude_desktop_json_with_one_server_needs_no_s() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = write(
        dir.path(),
        "claude_desktop_config.json",
        &format!(
            r#"{{"mcpServers": {{"demo": {{"command": {}, "args": [], "env": {{"API_TOKEN": "tok-secret", "DATA_DIR": "/srv/data"}}}}}}}}"#,
            json_path(&demo_str())
        ),
    );
    assert_eq!(tool_names(&file, &[])[0], "echo");
    assert_eq!(tool_names(&file, &["-s", "demo"]).len(), 6);
    // servers: no connection, the env value hidden.
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .arg("servers")
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.starts_with("NAME  TRANSPORT  TARGET\ndemo  stdio      "),
        "{text}"
    );
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .args(["servers", "--json"])
        .output()
        .expect("runs");
    let json = stdout(&out);
    assert!(!json.contains("tok-secret"), "{json}");
    let v: Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["servers"][0]["name"], "demo");
    assert_eq!(v["servers"][0]["env"]["API_TOKEN"], "[redacted]");
    // A value that is no credential (a path) is shown.
    assert_eq!(v["servers"][0]["env"]["DATA_DIR"], "/srv/data");
    // -s NAME lists that server alone, and an unknown name says which exist.
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .args(["-s", "demo", "servers", "--json"])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(v["servers"].as_array().map(Vec::len), Some(1));
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .args(["-s", "nope", "servers"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("it has: demo"), "{}", stderr(&out));
}

#[test]
fn vs_code_servers_with_comments_and_an_http_server() {
    let http = DemoHttp::start();
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = write(
        dir.path(),
        "mcp.json",
        &format!(
            r#"{{
  // VS Code's shape: "servers", with "type".
  "servers": {{
    "local": {{ "type": "stdio", "command": {}, "args": [] }},
    "remote": {{ "type": "http", "url": {}, "headers": {{ "Authorization": "Bearer vs-secret" }} }},
  }}
}}"#,
            json_path(&demo_str()),
            json_path(&http.url)
        ),
    );
    // Two servers: -s is needed, and the error names them.
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .arg("tools")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("choose one with -s: local, remote"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tool_names(&file, &["-s", "local"]).len(), 6);
    assert_eq!(tool_names(&file, &["-s", "remote"]).len(), 6);
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .arg("servers")
        .output()
        .expect("runs");
    let text = stdout(&out);
    assert!(
        text.contains("remote  http (streamable)  http://127.0.0.1:"),
        "{text}"
    );
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .args(["servers", "--json"])
        .output()
        .expect("runs");
    assert!(!stdout(&out).contains("vs-secret"), "{}", stdout(&out));
    // An unknown name.
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .args(["-s", "nope", "ping"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("there are: local, remote"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn codex_toml() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = write(
        dir.path(),
        "config.toml",
        &format!(
            "[mcp_servers.demo]\ncommand = {}\nargs = []\n\n[mcp_servers.demo.env]\nDEMO_KEY = \"k-secret\"\n",
            json_path(&demo_str())
        ),
    );
    assert_eq!(tool_names(&file, &[]).len(), 6);
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .args(["call", "echo", "message=toml"])
        .output()
        .expect("runs");
    assert_eq!(stdout(&out), "toml\n");
    let out = mcpwire()
        .arg("--config")
        .arg(&file)
        .args(["servers", "--format", "ndjson"])
        .output()
        .expect("runs");
    let line: Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON line");
    assert_eq!(line["transport"], "stdio");
    assert!(!stdout(&out).contains("k-secret"));
}

#[test]
fn several_files_merge_and_a_bad_file_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let a = write(
        dir.path(),
        "a.json",
        &format!(
            r#"{{"mcpServers": {{"a": {{"command": {}}}}}}}"#,
            json_path(&demo_str())
        ),
    );
    let b = write(
        dir.path(),
        "b.toml",
        &format!("[mcp_servers.b]\ncommand = {}\n", json_path(&demo_str())),
    );
    let out = mcpwire()
        .arg("--config")
        .arg(&a)
        .arg("--config")
        .arg(&b)
        .arg("servers")
        .output()
        .expect("runs");
    let text = stdout(&out);
    assert!(text.contains("\na ") && text.contains("\nb "), "{text}");
    let bad = write(dir.path(), "bad.json", "{ not json");
    mcpwire()
        .arg("--config")
        .arg(&bad)
        .arg("servers")
        .assert()
        .code(1);
    mcpwire()
        .args(["--config", "/nonexistent/mcp.json", "servers"])
        .assert()
        .code(1);
}

#[test]
#[cfg_attr(windows, ignore = "the server is an `sh -c` script")]
fn env_and_cwd_reach_a_local_server() {
    // A bad -e is refused before anything is spawned.
    mcpwire()
        .args(["-e", "NOEQUALS", "ping", "--", &demo_str()])
        .assert()
        .code(1);
    // The server's stderr comes through with -v: it tells what it got.
    let dir = tempfile::tempdir().expect("a temp dir");
    let script = format!("echo \"mark=$MARK cwd=$(pwd)\" >&2; exec {}", demo_str());
    let out = mcpwire()
        .args(["-v", "-e", "MARK=hello", "--cwd"])
        .arg(dir.path())
        .args(["ping", "--", "sh", "-c", &script])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = format!(
        "mark=hello cwd={}",
        dir.path().canonicalize().unwrap().display()
    );
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
}

/// A stdio server of the `initialize` era whose `roots` tool asks the
/// client for its roots (`roots/list`) and returns their URIs.
const ROOTS_SERVER: &str = r#"
import json, sys
def send(msg):
    print(json.dumps(msg), flush=True)
lines = iter(sys.stdin)
for line in lines:
    msg = json.loads(line)
    m = msg.get("method")
    if m == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "roots", "version": "1"}}})
    elif m == "tools/list":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
              {"name": "roots", "inputSchema": {"type": "object"}}]}})
    elif m == "tools/call":
        send({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
        for answer in lines:
            a = json.loads(answer)
            if a.get("id") == "r1":
                break
        uris = " ".join(r["uri"] for r in a.get("result", {}).get("roots", []))
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": uris or "none"}]}})
    elif "id" in msg:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
"#;

#[test]
#[cfg_attr(
    windows,
    ignore = "the server is a python3 script; the Windows test run has no Python"
)]
fn root_directories_are_answered_to_roots_list() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let script = write(dir.path(), "roots.py", ROOTS_SERVER);
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let out = mcpwire()
        .arg("--root")
        .arg(&data)
        .args(["call", "roots", "--", "python3"])
        .arg(&script)
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let want = url::Url::from_directory_path(std::fs::canonicalize(&data).unwrap()).unwrap();
    assert_eq!(text.trim(), want.as_str().trim_end_matches('/'), "{text}");
    // Without --root the client offers no roots at all.
    let out = mcpwire()
        .args(["call", "roots", "--", "python3"])
        .arg(&script)
        .output()
        .expect("runs");
    assert_ne!(stdout(&out).trim(), want.as_str().trim_end_matches('/'));
    // A directory that does not exist is a usage error.
    mcpwire()
        .args(["--root", "/nonexistent/dir", "tools", "--", "python3"])
        .arg(&script)
        .assert()
        .code(1);
}

#[test]
fn a_server_named_in_two_files_is_the_later_files_with_a_note() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let user = write(
        dir.path(),
        "user.json",
        r#"{"mcpServers": {"demo": {"command": "/nonexistent/old-server"}}}"#,
    );
    let project = write(
        dir.path(),
        "project.json",
        &format!(
            r#"{{"mcpServers": {{"demo": {{"command": {}}}}}}}"#,
            json_path(&demo_str())
        ),
    );
    let out = mcpwire()
        .arg("--config")
        .arg(&user)
        .arg("--config")
        .arg(&project)
        .args(["-s", "demo", "tools"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("echo(message: string)"));
    assert!(
        stderr(&out).contains("replaces the server of the same name"),
        "{}",
        stderr(&out)
    );
}
