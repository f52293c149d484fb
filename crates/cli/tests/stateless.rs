//! The command against a server of the stateless revision (2026-07-28), a
//! small Python script of the standard library: `ping` and `log-level` do
//! what that revision offers and say so, and `-v` changes nothing of what
//! is sent (the era negotiated, the headers every request carries).

mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use support::{mcpwire, stderr, stdout};

fn script() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/servers/stateless_server.py"
    )
    .to_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpwire-cli-stateless-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The script in its HTTP mode on 127.0.0.1; killed on drop.
struct Http {
    child: Child,
    url: String,
}

impl Http {
    fn start(seen_log: &PathBuf) -> Http {
        let mut child = Command::new("python3")
            .args([script().as_str(), "http"])
            .env("SEEN_LOG", seen_log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        let url = format!("http://127.0.0.1:{}/mcp", port.trim());
        Http { child, url }
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[cfg_attr(
    windows,
    ignore = "the server is a python3 script; the Windows test run has no Python"
)]
fn ping_and_log_level_work_on_a_stateless_server_and_say_how() {
    let seen = scratch("stdio-seen");
    let _ = std::fs::remove_file(&seen);
    // A stdio server gets only the variables passed with -e.
    let pass = format!("SEEN_LOG={}", seen.display());
    let out = mcpwire()
        .args(["-e", &pass, "ping", "--", "python3", &script()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("pong in "), "{text}");
    assert!(text.contains("server/discover"), "{text}");
    // The liveness check was a server/discover: no ping reached the server.
    let methods = std::fs::read_to_string(&seen).unwrap();
    assert!(!methods.lines().any(|m| m == "ping"), "{methods}");
    assert_eq!(
        methods.lines().filter(|m| *m == "server/discover").count(),
        2,
        "the era probe, then the ping: {methods}"
    );

    let out = mcpwire()
        .args(["log-level", "debug", "--", "python3", &script()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("has no logging/setLevel"), "{text}");
    assert!(!text.starts_with("log level set"), "{text}");
}

#[test]
#[cfg_attr(
    windows,
    ignore = "the server is a python3 script; the Windows test run has no Python"
)]
fn verbose_negotiates_the_same_era_and_sends_the_same_headers() {
    let seen = scratch("http-seen");
    let _ = std::fs::remove_file(&seen);
    let server = Http::start(&seen);
    let mut logs = Vec::new();
    for verbose in [false, true] {
        let mut cmd = mcpwire();
        if verbose {
            cmd.arg("-v");
        }
        let out = cmd
            .args(["-s", &server.url, "info"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(out.status.success(), "-v {verbose}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.lines()
                .any(|l| l.starts_with("protocol") && l.ends_with("2026-07-28")),
            "-v {verbose}: {text}"
        );
        logs.push(stderr(&out));
    }
    // The server refused no request for missing or wrong headers, with or
    // without -v.
    let methods = std::fs::read_to_string(&seen).unwrap();
    assert!(!methods.contains("refused"), "{methods}");
    // -v shows each request's headers as they were sent.
    let verbose = &logs[1];
    assert!(
        verbose.contains("mcp-method: server/discover")
            && verbose.contains("mcp-protocol-version: 2026-07-28"),
        "{verbose}"
    );
    assert!(verbose.contains("--> {"), "{verbose}");
    assert!(verbose.contains("<-- {"), "{verbose}");
}

#[test]
#[cfg_attr(
    windows,
    ignore = "the server is a python3 script; the Windows test run has no Python"
)]
fn server_log_messages_reach_stderr_in_the_stateless_era() {
    // The stateless revision sends log messages only for requests that ask
    // for a level: the command asks for info and above, as servers of the
    // initialize era send by default.
    let out = mcpwire()
        .args(["call", "add", "a=2", "b=3", "--", "python3", &script()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "5\n");
    assert!(
        stderr(&out).contains("[server info] adding 2 and 3"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[cfg_attr(
    windows,
    ignore = "the server is a python3 script; the Windows test run has no Python"
)]
fn a_local_servers_own_stderr_is_shown_when_asked_for() {
    let run = |extra: &[&str]| {
        let out = mcpwire()
            .args(extra)
            .args(["tools", "--", "python3", &script()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    // Not a terminal here: quiet unless asked.
    assert!(!run(&[]).contains("stateless-py: starting"));
    assert!(run(&["--server-stderr"]).contains("stateless-py: starting"));
}

#[test]
#[cfg_attr(
    windows,
    ignore = "the server is a python3 script; the Windows test run has no Python"
)]
fn a_variable_reaches_a_local_server_only_when_passed() {
    let seen = scratch("pass-env-seen");
    let _ = std::fs::remove_file(&seen);
    // SEEN_LOG set in the command's own environment: not passed by default,
    // passed by name with --pass-env.
    let run = |extra: &[&str]| {
        let out = mcpwire()
            .env("SEEN_LOG", &seen)
            .args(extra)
            .args(["tools", "--", "python3", &script()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    run(&[]);
    assert!(!seen.exists(), "the variable leaked to the server");
    run(&["--pass-env", "SEEN_LOG"]);
    assert!(seen.exists(), "--pass-env did not pass it");
}

#[test]
#[cfg_attr(
    windows,
    ignore = "the server is a python3 script; the Windows test run has no Python"
)]
fn a_server_that_fails_for_a_variable_set_here_gets_a_note_on_passing_it() {
    let dir = std::env::temp_dir().join(format!("mcpwire-cli-needs-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("needs_token.py");
    std::fs::write(
        &script,
        "import os, sys\n\
         if not os.environ.get('MCPWIRE_TEST_TOKEN_X'):\n\
         \x20   print('Error: MCPWIRE_TEST_TOKEN_X environment variable is required', file=sys.stderr)\n\
         \x20   sys.exit(1)\n",
    )
    .unwrap();
    let out = mcpwire()
        .env("MCPWIRE_TEST_TOKEN_X", "t-1")
        .args(["tools", "--", "python3"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("add --pass-env MCPWIRE_TEST_TOKEN_X"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("t-1"), "the value is never shown");
}
