//! The era probe against real processes: a stdio server of the `initialize`
//! era that exits when it sees `server/discover` is spawned again and
//! initialized directly, and the outcome is cached for the next connection.

use std::path::PathBuf;

use mcpwire::{ClientConfig, Era, Server};

/// A stdio MCP server of the `initialize` era that exits at any request
/// before `initialize` (some do), and logs each start and each method.
const SERVER: &str = r#"
import json, sys
log = open(sys.argv[1], "a")
log.write("start\n"); log.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    log.write(f"{method}\n"); log.flush()
    if method == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "exits-at-probe", "version": "1"}}}), flush=True)
    elif method == "notifications/initialized":
        pass
    elif "id" in msg and method == "ping":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}), flush=True)
    else:
        sys.exit(3)
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpwire-eras-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
#[cfg(feature = "stdio")]
async fn a_server_that_exits_at_the_probe_is_spawned_again_and_initialized() {
    let dir = scratch("probe-kill");
    let script = dir.join("server.py");
    std::fs::write(&script, SERVER).unwrap();
    let log = dir.join("log");
    let server = || Server::command("python3", [script.to_str().unwrap(), log.to_str().unwrap()]);
    let client = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        mcpwire::connect(server(), ClientConfig::new()),
    )
    .await
    .expect("in time")
    .expect("connected");
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(client.server_info().unwrap().name, "exits-at-probe");
    client.ping().await.unwrap();
    client.close().await;
    let seen = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        [
            "start",
            "server/discover",
            "start",
            "initialize",
            "notifications/initialized",
            "ping"
        ]
    );

    // The same server again, in this process: no probe this time.
    let client = mcpwire::connect(server(), ClientConfig::new())
        .await
        .expect("connected");
    assert_eq!(client.era(), Some(Era::Legacy));
    client.close().await;
    let seen = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        seen.lines().skip(6).collect::<Vec<_>>(),
        ["start", "initialize", "notifications/initialized"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
