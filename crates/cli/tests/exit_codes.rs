//! Every exit code the command promises, and errors as one JSON line on
//! stderr with `--format json`.

mod support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::{demo_str, mcpwire, refusing_server, stderr, stdout};

#[test]
fn usage_errors_exit_1() {
    // Not clap's 2: every usage error is 1.
    mcpwire().arg("no-such-command").assert().code(1);
    mcpwire()
        .args(["tools"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no server given"));
    mcpwire()
        .args(["-s", "http://127.0.0.1:9/mcp", "tools", "--", "x"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("not both"));
    mcpwire()
        .args(["log-level", "loud", "--", &demo_str()])
        .assert()
        .code(1);
    mcpwire()
        .args(["--timeout", "-1", "ping", "--", &demo_str()])
        .assert()
        .code(1);
    mcpwire()
        .args(["-H", "no-colon", "ping", "-s", "http://127.0.0.1:9/mcp"])
        .assert()
        .code(1);
}

#[test]
fn help_and_version_exit_0_and_show_examples() {
    let out = mcpwire().arg("--help").output().expect("runs");
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("mcpwire tools -- npx -y @modelcontextprotocol/server-everything"),
        "{text}"
    );
    assert!(text.contains("Exit codes"), "{text}");
    for command in [
        "info",
        "tools",
        "tool",
        "call",
        "resources",
        "templates",
        "read",
        "prompts",
        "prompt",
        "complete",
        "ping",
        "log-level",
        "shell",
        "servers",
        "login",
        "logout",
    ] {
        let out = mcpwire().args([command, "--help"]).output().expect("runs");
        assert!(out.status.success(), "{command}");
        assert!(
            stdout(&out).contains("Example"),
            "{command} --help has no example"
        );
    }
    mcpwire().arg("--version").assert().code(0);
}

#[test]
fn authorization_required_exits_3() {
    let url = refusing_server(
        "401 Unauthorized",
        "www-authenticate: Bearer realm=\"mcp\"\r\n",
    );
    let out = mcpwire()
        .args(["--non-interactive", "-s", &url, "tools"])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // A token given with -H that the server refuses: 3 as well, and the
    // token is never shown, even with -v.
    let out = mcpwire()
        .args([
            "-v",
            "--non-interactive",
            "-H",
            "Authorization: Bearer tok-123",
            "-s",
            &url,
            "ping",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(!stderr(&out).contains("tok-123"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("authorization: [redacted]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unreachable_servers_exit_4() {
    // Nothing listens on port 9 of the loopback address.
    mcpwire()
        .args(["-s", "http://127.0.0.1:9/mcp", "tools"])
        .assert()
        .code(4);
    mcpwire()
        .args(["tools", "--", "/nonexistent/mcp-server"])
        .assert()
        .code(4);
    // A server that crashes mid-call: a transport failure.
    mcpwire()
        .args(["call", "crash", "--", &demo_str()])
        .assert()
        .code(4);
    // An HTTP server answering 500 to everything.
    let url = refusing_server("500 Internal Server Error", "");
    mcpwire().args(["-s", &url, "ping"]).assert().code(4);
}

#[test]
fn a_request_timing_out_exits_4() {
    let out = mcpwire()
        .args([
            "--timeout",
            "0.3",
            "call",
            "slow",
            "steps=50",
            "delay_ms=100",
            "--",
            &demo_str(),
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("calling tool \"slow\" failed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tool_errors_exit_5() {
    // An unknown tool, named with the ones there are.
    let out = mcpwire()
        .args(["call", "nope", "--", &demo_str()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr(&out).contains("the server has: echo, add"),
        "{}",
        stderr(&out)
    );
    mcpwire()
        .args(["tool", "nope", "--", &demo_str()])
        .assert()
        .code(5);
    // isError: the demo's ask_llm, its sampling request refused. The
    // content is shown.
    let out = mcpwire()
        .args(["call", "ask_llm", "prompt=hi", "--", &demo_str()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stdout(&out).starts_with("sampling failed: this client has no model"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("reported an error"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn json_errors_are_one_line_on_stderr() {
    let out = mcpwire()
        .args(["--json", "-s", "http://127.0.0.1:9/mcp", "tools"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(4));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    let v: Value = serde_json::from_str(&err).expect("one JSON line");
    assert_eq!(v["error"]["exit"], 4);
    assert_eq!(v["error"]["kind"], "unreachable");
    // A tool error: the result on stdout, the error on stderr.
    let out = mcpwire()
        .args(["--json", "call", "ask_llm", "prompt=hi", "--", &demo_str()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(5));
    let result: Value = serde_json::from_str(&stdout(&out)).expect("the result");
    assert_eq!(result["isError"], true);
    let err: Value = serde_json::from_str(&stderr(&out)).expect("one JSON line");
    assert_eq!(err["error"]["kind"], "tool");
}

#[test]
#[cfg_attr(
    windows,
    ignore = "sends SIGINT with `kill`; a Windows console Ctrl-C needs a console the test shares with mcpwire, which a test runner's child does not have"
)]
fn ctrl_c_cancels_the_request_and_exits_130() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .args([
            "-v",
            "call",
            "slow",
            "steps=100",
            "delay_ms=100",
            "--",
            &demo_str(),
        ])
        .env(
            "MCPWIRE_TOKEN_DIR",
            std::env::temp_dir().join("mcpwire-cli-tests-tokens"),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    // Wait for the call to be under way (its progress is in the -v log).
    let stderr_pipe = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr_pipe)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|l: &String| l.contains("notifications/progress"))
    {
        let line = rx
            .recv_timeout(deadline - Instant::now())
            .expect("progress arrives");
        seen.push(line);
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let status = child.wait().expect("exits");
    seen.extend(rx.iter());
    let log = seen.join("\n");
    assert_eq!(status.code(), Some(130), "{log}");
    assert!(
        log.lines()
            .any(|l| l.starts_with("-->") && l.contains("notifications/cancelled")),
        "the server was not told: {log}"
    );
    assert!(!log.contains("done after"), "{log}");
}

#[test]
fn unknown_argument_names_are_refused_before_sending_with_a_suggestion() {
    // The demo's `add` takes a and b; `bb` is a typo of b.
    mcpwire()
        .args(["call", "add", "a=2", "bb=3", "--", &demo_str()])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("unknown argument \"bb\""))
        .stderr(predicates::str::contains("did you mean \"b\"?"));
    // Its prompt `greet` takes name.
    mcpwire()
        .args(["prompt", "greet", "nam=Ada", "--", &demo_str()])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("did you mean \"name\"?"));
    // --no-check sends it anyway: the server then judges.
    let out = mcpwire()
        .args(["--no-check", "prompt", "greet", "name=Ada", "extra=1"])
        .args(["--", &demo_str()])
        .output()
        .expect("runs");
    assert!(
        !stderr(&out).contains("unknown argument"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unreachable_or_wrong_url_says_what_to_check() {
    let out = mcpwire()
        .args(["-s", "http://127.0.0.1:9/mcp", "tools"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(4));
    assert!(
        stderr(&out).contains("hint: nothing listens there"),
        "{}",
        stderr(&out)
    );
    let demo = support::DemoHttp::start();
    let wrong = demo.url.replace("/mcp", "/wrong");
    let out = mcpwire()
        .args(["-s", &wrong, "tools"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(4));
    let text = stderr(&out);
    assert!(text.contains("hint: nothing here speaks MCP"), "{text}");
    // Two lines by default: the message with its deepest cause, the hint.
    assert_eq!(text.lines().count(), 2, "{text}");
}
