//! Every command against the demo server over stdio and Streamable HTTP,
//! in both output formats, with snapshots of the text output.

mod support;

use serde_json::Value;
use support::{DemoHttp, demo_str, mcpwire, stderr, stdout};

/// Runs `mcpwire ARGS -- demo-server` and returns stdout, asserting success.
fn over_stdio(args: &[&str]) -> String {
    let out = mcpwire()
        .args(args)
        .arg("--")
        .arg(demo_str())
        .output()
        .expect("runs");
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

fn json_over_stdio(args: &[&str]) -> Value {
    let text = over_stdio(&[args, &["--format", "json"]].concat());
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{args:?}: one JSON object ({e}): {text}"))
}

#[test]
fn tools_text() {
    insta::assert_snapshot!(over_stdio(&["tools"]));
}

#[test]
fn tools_with_schemas_text() {
    insta::assert_snapshot!(over_stdio(&["tools", "--schema"]));
}

#[test]
fn tool_text() {
    insta::assert_snapshot!(over_stdio(&["tool", "add"]));
}

#[test]
fn info_text() {
    insta::assert_snapshot!(over_stdio(&["info"]));
}

#[test]
fn call_text_renders_content_and_structured_content() {
    insta::assert_snapshot!(over_stdio(&["call", "add", "a=1", "b=2.5"]));
    assert_eq!(
        over_stdio(&["call", "echo", "message=hello world"]),
        "hello world\n"
    );
}

#[test]
fn resources_templates_read_text() {
    insta::assert_snapshot!("resources", over_stdio(&["resources"]));
    insta::assert_snapshot!("templates", over_stdio(&["templates"]));
    insta::assert_snapshot!("read", over_stdio(&["read", "demo://readme"]));
}

#[test]
fn prompts_prompt_complete_text() {
    insta::assert_snapshot!("prompts", over_stdio(&["prompts"]));
    insta::assert_snapshot!("prompt", over_stdio(&["prompt", "greet", "name=Ada"]));
    assert_eq!(
        over_stdio(&["complete", "--prompt", "greet", "name", "A"]),
        "Ada\nAlan\n"
    );
    assert_eq!(
        over_stdio(&["complete", "--resource", "demo://echo/{text}", "text", "g"]),
        "Grace\n"
    );
}

#[test]
fn ping_and_log_level_text() {
    let pong = over_stdio(&["ping"]);
    assert!(
        pong.starts_with("pong in ") && pong.ends_with(" ms\n"),
        "{pong}"
    );
    assert_eq!(
        over_stdio(&["log-level", "debug"]),
        "log level set to debug\n"
    );
}

#[test]
fn json_output_is_one_mcp_shaped_object() {
    let tools = json_over_stdio(&["tools"]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["echo", "add", "slow", "crash", "ask_llm", "ask_user"]
    );
    assert_eq!(
        tools["tools"][1]["inputSchema"]["required"],
        serde_json::json!(["a", "b"])
    );
    let sum = json_over_stdio(&["call", "add", "a=2", "b=3"]);
    assert_eq!(sum["structuredContent"]["sum"], 5.0);
    assert_eq!(sum["content"][0]["type"], "text");
    assert_eq!(
        json_over_stdio(&["info"])["serverInfo"]["name"],
        "mcpwire-demo-server"
    );
    assert_eq!(json_over_stdio(&["tool", "echo"])["name"], "echo");
    assert_eq!(
        json_over_stdio(&["resources"])["resources"][0]["uri"],
        "demo://readme"
    );
    assert_eq!(
        json_over_stdio(&["templates"])["resourceTemplates"][0]["uriTemplate"],
        "demo://echo/{text}"
    );
    assert_eq!(
        json_over_stdio(&["read", "demo://echo/hi"])["contents"][0]["text"],
        "hi"
    );
    assert_eq!(json_over_stdio(&["prompts"])["prompts"][0]["name"], "greet");
    assert_eq!(
        json_over_stdio(&["prompt", "greet", "name=Bo"])["messages"][0]["content"]["text"],
        "Please greet Bo warmly."
    );
    assert_eq!(
        json_over_stdio(&["complete", "--prompt", "greet", "name", "g"])["completion"]["values"],
        serde_json::json!(["Grace"])
    );
    assert_eq!(json_over_stdio(&["ping"]), serde_json::json!({}));
    assert_eq!(
        json_over_stdio(&["log-level", "info"]),
        serde_json::json!({})
    );
    // --json is --format json, anywhere before `--`.
    let text = over_stdio(&["--json", "ping"]);
    assert_eq!(
        serde_json::from_str::<Value>(&text).expect("JSON"),
        serde_json::json!({})
    );
}

#[test]
fn ndjson_puts_each_item_on_a_line() {
    let text = over_stdio(&["tools", "--format", "ndjson"]);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["name"], "echo");
    let one = over_stdio(&["call", "echo", "message=x", "--format", "ndjson"]);
    assert_eq!(one.lines().count(), 1);
    assert_eq!(
        serde_json::from_str::<Value>(&one).expect("JSON")["content"][0]["text"],
        "x"
    );
}

#[test]
fn typed_arguments_follow_the_schema() {
    // Integers stay integers; `:=` takes raw JSON.
    let out = json_over_stdio(&["call", "slow", "steps=2", "delay_ms:=1"]);
    assert_eq!(out["content"][0]["text"], "done after 2 steps");
    // A mismatch names the field and the type, and nothing is called.
    let out = mcpwire()
        .args(["-v", "call", "slow", "steps=two", "--", &demo_str()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("argument \"steps\" expects an integer, got \"two\""),
        "{err}"
    );
    assert!(!err.contains("tools/call"), "called anyway: {err}");
    // Missing required arguments are named.
    let out = mcpwire()
        .args(["call", "add", "a=1", "--", &demo_str()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("missing required argument b"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn args_come_from_json_a_file_or_stdin() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("args.json");
    std::fs::write(&file, r#"{"message": "from a file"}"#).expect("writes");
    let at = format!("@{}", file.display());
    assert_eq!(
        over_stdio(&["call", "echo", "--args", &at]),
        "from a file\n"
    );
    assert_eq!(
        over_stdio(&[
            "call",
            "echo",
            "--args",
            r#"{"message":"inline"}"#,
            "message=override"
        ]),
        "override\n"
    );
    let out = mcpwire()
        .args(["call", "echo", "--args", "-", "--", &demo_str()])
        .write_stdin(r#"{"message": "from stdin"}"#)
        .output()
        .expect("runs");
    assert_eq!(stdout(&out), "from stdin\n");
}

#[test]
fn read_writes_to_a_file() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("readme.txt");
    let text = over_stdio(&["read", "demo://readme", "-o", file.to_str().unwrap()]);
    assert!(text.starts_with("wrote 62 bytes to "), "{text}");
    let body = std::fs::read_to_string(&file).expect("written");
    assert!(body.starts_with("mcpwire demo server"), "{body}");
}

#[test]
fn verbose_logs_every_message_with_secrets_redacted() {
    let out = mcpwire()
        .args([
            "-v",
            "call",
            "echo",
            "message=Bearer s3cret-value",
            "--",
            &demo_str(),
        ])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let err = stderr(&out);
    for method in [
        "\"initialize\"",
        "notifications/initialized",
        "tools/list",
        "tools/call",
    ] {
        assert!(err.contains(method), "{method} not logged: {err}");
    }
    assert!(err.contains("--> ") && err.contains("<-- "), "{err}");
    assert!(
        !err.contains("s3cret-value"),
        "a bearer credential reached stderr: {err}"
    );
    // The result itself is the user's: shown as sent.
    assert_eq!(stdout(&out), "Bearer s3cret-value\n");
}

#[test]
fn every_command_over_streamable_http() {
    let server = DemoHttp::start();
    let run = |args: &[&str]| {
        let out = mcpwire()
            .args(["-s", &server.url])
            .args(args)
            .output()
            .expect("runs");
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(run(&["tools"]), over_stdio(&["tools"]));
    assert_eq!(
        run(&["call", "add", "a=1", "b=2.5"]),
        over_stdio(&["call", "add", "a=1", "b=2.5"])
    );
    assert_eq!(run(&["info"]), over_stdio(&["info"]));
    assert_eq!(run(&["resources"]), over_stdio(&["resources"]));
    assert_eq!(
        run(&["read", "demo://readme"]),
        over_stdio(&["read", "demo://readme"])
    );
    assert_eq!(
        run(&["prompt", "greet", "name=Ada"]),
        over_stdio(&["prompt", "greet", "name=Ada"])
    );
    assert_eq!(
        run(&["complete", "--prompt", "greet", "name", "L"]),
        "Linus\n"
    );
    assert!(run(&["ping"]).starts_with("pong"));
    let json: Value =
        serde_json::from_str(&run(&["--transport", "http", "tools", "--json"])).expect("JSON");
    assert_eq!(json["tools"].as_array().map(Vec::len), Some(6));
    assert_eq!(
        run(&["call", "slow", "steps=3", "delay_ms=5"]),
        "done after 3 steps\n"
    );
}

#[test]
fn the_tools_table_fits_the_width_columns_says() {
    let out = mcpwire()
        .env("COLUMNS", "60")
        .args(["tools", "--", &demo_str()])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines().all(|l| l.chars().count() <= 60),
        "wider than 60:\n{text}"
    );
    assert!(text.contains("crash()"), "{text}");
}
