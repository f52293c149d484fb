//! `serve --watch`: a --config file saved while serve runs reloads the
//! fleet: its client sees the new server's tools (after a `list_changed`),
//! a save that does not parse leaves the fleet as it was, said on stderr,
//! and a save that changes no server is not reported.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use support::demo;

fn write_config(path: &Path, names: &[&str]) {
    let entry = json!({"command": demo()});
    let servers: serde_json::Map<String, Value> = names
        .iter()
        .map(|n| ((*n).to_owned(), entry.clone()))
        .collect();
    std::fs::write(path, json!({"mcpServers": servers}).to_string()).unwrap();
}

#[test]
fn a_saved_config_file_reloads_the_served_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    write_config(&config, &["one"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .arg("--config")
        .arg(&config)
        .args(["serve", "--watch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Every line serve writes, read on a thread: a wait here is bounded.
    let (tx, lines) = mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                return;
            }
        }
    });
    let next = |what: &str, ok: &dyn Fn(&Value) -> bool| -> Value {
        loop {
            let got = lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("waited for {what}"));
            if ok(&got) {
                return got;
            }
        }
    };
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}),
    );
    next("initialize", &|v| v["id"] == 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tool_names = |listed: &Value| -> Vec<String> {
        let tools = listed["result"]["tools"].as_array().expect("tools");
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let before = tool_names(&next("tools/list", &|v| v["id"] == 2));
    assert!(before.iter().all(|n| n.starts_with("one__")), "{before:?}");

    // The same servers saved again in another layout: a reload that
    // changes nothing, and says nothing.
    let same: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    std::fs::write(&config, serde_json::to_string_pretty(&same).unwrap()).unwrap();
    std::thread::sleep(Duration::from_millis(2000));

    // A save that does not parse changes nothing; a good one adds `two`.
    // The bad one stays for 3 s: the watch (every 500 ms, 300 ms of quiet)
    // reports a failed load only once it has read the files again as they
    // were (a file read mid-write is read again, not reported), so at
    // 1.5 s the good save could land before that second read under load.
    std::fs::write(&config, "{ \"mcpServers\": ").unwrap();
    std::thread::sleep(Duration::from_millis(3000));
    write_config(&config, &["one", "two"]);
    // The new server joins, then its tools come: a `list_changed` each.
    let mut id = 3;
    let after = loop {
        next("list_changed", &|v| {
            v["method"] == "notifications/tools/list_changed"
        });
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        let listed = tool_names(&next("tools/list", &|v| v["id"] == id));
        if listed.contains(&"two__echo".to_owned()) {
            break listed;
        }
        id += 1;
    };
    assert!(after.contains(&"one__echo".to_owned()), "{after:?}");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the configuration changed but was not reloaded, the fleet is as it was: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("reloaded the configuration: added [\"two\"], removed [], restarted []"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("added [], removed [], restarted []"),
        "an unchanged reload is not reported: {stderr}"
    );
}
