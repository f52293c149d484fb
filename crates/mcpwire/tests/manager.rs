//! The manager through the facade: configuration files whose entries
//! `Transports` makes into stdio and HTTP servers.
//!
//! Offline: the demo server over stdio and over Streamable HTTP, entries
//! that cannot be used. Real servers (ignored by default, run by
//! `cargo xtask ci`): one configuration file naming server-everything over
//! stdio and Streamable HTTP, server-filesystem and the Python SDK server.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mcpwire::config::{Format, LoadOptions, ProcessEnvironment, Resolver};
use mcpwire::manager::{
    ConfigFiles, ConfigFilesError, Manager, ServerSkip, Transports, WatchEvent, WatchOptions,
};
use mcpwire_test_support::demo_server;
use mcpwire_test_support::http::{Reply, Seen, Server as HttpServer};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const LONG: Duration = Duration::from_secs(60);

/// The demo server in its HTTP mode, and its URL.
async fn demo_http() -> (Child, String) {
    let mut child = Command::new(demo_server())
        .arg("--http")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the demo server starts");
    let stdout = child.stdout.take().unwrap();
    let url = tokio::time::timeout(LONG, BufReader::new(stdout).lines().next_line())
        .await
        .expect("a URL in time")
        .unwrap()
        .expect("a URL");
    (child, url)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claude_desktop_file_becomes_a_fleet_over_stdio_and_http() {
    let (_http, url) = demo_http().await;
    let demo = demo_server();
    let text = json!({
        "mcpServers": {
            "local": {"command": demo, "env": {"DEMO_UNUSED": "1", "HOME": null}},
            "remote": {"type": "http", "url": url, "headers": {"X-Api-Key": "k-123"}},
            "socket": {"url": "ws://127.0.0.1:9/mcp"},
            "badheader": {"type": "http", "url": url, "headers": {"X-Key": "line\nbreak-secret"}},
            "typo": {"command": "x", "env": {"T": "${MCPWIRE_TEST_SURELY_UNSET}"}}
        }
    })
    .to_string();
    let config = LoadOptions::new()
        .parse_str(&text, Format::Json, "claude_desktop_config.json")
        .unwrap();
    let manager = Manager::builder()
        .config(
            &config,
            &Resolver::new(&ProcessEnvironment),
            &Transports::new().unwrap(),
        )
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(manager.servers(), ["local", "remote"]);

    // The three unusable entries are reported, each with its reason.
    let skipped = manager.skipped_servers();
    let reason = |name: &str| {
        let (_, why) = skipped.iter().find(|(n, _)| n == name).unwrap();
        let ServerSkip::Unusable(e) = why else {
            panic!("{why:?}")
        };
        e.clone()
    };
    // WebSocket: no transport for it in this build; resolving says so.
    let ws = reason("socket");
    let mcpwire::manager::Error::Resolve { source, .. } = &*ws else {
        panic!("{ws:?}")
    };
    assert!(matches!(
        **source,
        mcpwire::config::ResolveError::UnsupportedTransport {
            kind: mcpwire::config::TransportKind::WebSocket,
            ..
        }
    ));
    let header = reason("badheader");
    let text = format!("{:?} {}", header, chain(&*header));
    assert!(text.contains("X-Key"), "{text}");
    assert!(
        !text.contains("break-secret"),
        "a header value is never shown: {text}"
    );
    assert!(matches!(
        *reason("typo"),
        mcpwire::manager::Error::Resolve { .. }
    ));

    let report = tokio::time::timeout(LONG, manager.connect_all())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.connected, ["local", "remote"]);
    assert_eq!(report.skipped.len(), 3);
    let names: Vec<String> = manager
        .tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in ["local__echo", "local__add", "remote__echo", "remote__add"] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    for tool in ["local__add", "remote__add"] {
        let result = manager
            .call_tool(tool, &json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert_eq!(result.text(), "42");
    }
    manager.close().await;
}

/// A Streamable HTTP server that gives each `initialize` a new
/// `Mcp-Session-Id` (`s1`, `s2`...) and answers every `tools/call` with the
/// session id the call came with: which session a call went through is in
/// its answer.
async fn sessions_server() -> HttpServer {
    let issued = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    HttpServer::start(move |seen: Seen| {
        let body: serde_json::Value = serde_json::from_slice(&seen.body).unwrap_or_default();
        let answer = |result: serde_json::Value| {
            Reply::json(&json!({"jsonrpc": "2.0", "id": body["id"], "result": result}).to_string())
        };
        let reply = match (seen.method.as_str(), body["method"].as_str().unwrap_or("")) {
            ("POST", "initialize") => {
                let n = issued.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                answer(
                    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "sessions", "version": "1"}}),
                )
                .header("mcp-session-id", &format!("s{n}"))
            }
            ("POST", "tools/list") => answer(json!({"tools": [{"name": "session",
                "inputSchema": {"type": "object"}}]})),
            ("POST", "tools/call") => {
                let id = seen.header("mcp-session-id").unwrap_or("none").to_owned();
                answer(json!({"content": [{"type": "text", "text": id}]}))
            }
            // The newer era's discovery is refused: the server initializes.
            ("POST", "server/discover") => Reply::new(400).body("unknown method"),
            ("POST", _) | ("DELETE", _) => Reply::new(202),
            _ => Reply::new(405),
        };
        async move { reply }
    })
    .await
}

/// A configuration file naming `servers` (name, path on the server, extra
/// header) over Streamable HTTP.
fn write_config(path: &Path, server: &HttpServer, servers: &[(&str, &str, Option<&str>)]) {
    let mut entries = serde_json::Map::new();
    for (name, at, header) in servers {
        let mut entry = json!({"type": "http", "url": server.url(at)});
        if let Some(value) = header {
            entry["headers"] = json!({"X-Edition": value});
        }
        entries.insert((*name).to_owned(), entry);
    }
    let text = json!({"mcpServers": entries}).to_string();
    std::fs::write(path, text).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reload_from_the_files_keeps_the_sessions_of_unchanged_servers() {
    let server = sessions_server().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    write_config(
        &file,
        &server,
        &[
            ("one", "/one", None),
            ("two", "/two", None),
            ("three", "/three", None),
        ],
    );
    let files = ConfigFiles::new([&file]).unwrap();
    let manager = files.builder().unwrap().build().unwrap();
    let report = tokio::time::timeout(LONG, manager.connect_all())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.connected.len(), 3, "{report:?}");
    let session = async |tool: &str| manager.call_tool(tool, &json!({})).await.unwrap().text();
    let one = session("one__session").await;
    let two = session("two__session").await;
    assert_ne!(one, two);

    // `one` as it was, `two` with a new header, `three` gone, `four` new.
    write_config(
        &file,
        &server,
        &[
            ("one", "/one", None),
            ("two", "/two", Some("2")),
            ("four", "/four", None),
        ],
    );
    let reload = files.reload(&manager);
    fn spawnable<T: Send>(_: &T) {}
    spawnable(&reload);
    let report = tokio::time::timeout(LONG, reload).await.unwrap().unwrap();
    assert_eq!(report.unchanged, ["one"]);
    assert_eq!(report.replaced, ["two"]);
    assert_eq!(report.removed, ["three"]);
    assert_eq!(report.added, ["four"]);
    // Sorted: the order of a file's entries as read depends on whether
    // the build unifies serde_json's `preserve_order` feature.
    assert_eq!(sorted(manager.servers()), ["four", "one", "two"]);

    assert_eq!(session("one__session").await, one, "`one` kept its session");
    let new_two = session("two__session").await;
    assert_ne!(new_two, two, "`two` has a new session");
    let seen = server.seen();
    let initialized = |path: &str| {
        seen.iter()
            .filter(|s| s.path == path && s.rpc_method().as_deref() == Some("initialize"))
            .count()
    };
    assert_eq!(initialized("/one"), 1);
    assert_eq!(initialized("/two"), 2);
    // The removed server's session was ended.
    let ended = |path: &str| seen.iter().any(|s| s.path == path && s.method == "DELETE");
    assert!(ended("/three") && ended("/two") && !ended("/one"));
    let edition = seen
        .iter()
        .find(|s| s.header("mcp-session-id") == Some(new_two.as_str()))
        .and_then(|s| s.header("x-edition"));
    assert_eq!(edition, Some("2"), "the new `two` sends its new header");

    // A file that no longer parses changes nothing.
    std::fs::write(&file, "{ not json").unwrap();
    let err = files.reload(&manager).await.unwrap_err();
    assert!(matches!(err, ConfigFilesError::Load(_)), "{err:?}");
    assert!(chain(&err).contains("mcp.json"), "{}", chain(&err));
    assert_eq!(sorted(manager.servers()), ["four", "one", "two"]);
    assert_eq!(session("one__session").await, one);
    manager.close().await;
}

/// Writes `text` as an editor saving by rename does: a new file beside
/// `path`, renamed over it.
fn replace_file(path: &Path, text: &str) {
    let temp = path.with_extension("swp");
    std::fs::write(&temp, text).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

/// A fleet of one server, `one`, from a file of its own (its directory is
/// removed when the second value is dropped).
async fn fleet_of_one() -> (HttpServer, tempfile::TempDir, PathBuf, ConfigFiles, Manager) {
    let server = sessions_server().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    write_config(&file, &server, &[("one", "/one", None)]);
    let files = ConfigFiles::new([&file]).unwrap();
    let manager = files.builder().unwrap().build().unwrap();
    (server, dir, file, files, manager)
}

/// A watch that reads the files often, so the test does not wait long.
fn quick_watch() -> WatchOptions {
    WatchOptions::new()
        .interval(Duration::from_millis(20))
        .quiet(Duration::from_millis(300))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_burst_of_writes_is_one_reload_that_keeps_the_sessions_of_unchanged_servers() {
    let server = sessions_server().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    write_config(
        &file,
        &server,
        &[("one", "/one", None), ("two", "/two", None)],
    );
    let files = ConfigFiles::new([&file]).unwrap();
    let manager = files.builder().unwrap().build().unwrap();
    tokio::time::timeout(LONG, manager.connect_all())
        .await
        .unwrap()
        .unwrap();
    let session = async |tool: &str| manager.call_tool(tool, &json!({})).await.unwrap().text();
    let one = session("one__session").await;
    let two = session("two__session").await;
    let mut watch = files.watch(&manager, quick_watch());
    // The watch's first read is the files as they were.
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Five saves 20 ms apart, the last by rename: one reload, of the last.
    for edition in ["1", "2", "3", "4"] {
        write_config(
            &file,
            &server,
            &[("one", "/one", None), ("two", "/two", Some(edition))],
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let last = json!({"mcpServers": {
        "one": {"type": "http", "url": server.url("/one")},
        "two": {"type": "http", "url": server.url("/two"), "headers": {"X-Edition": "5"}},
        "three": {"type": "http", "url": server.url("/three")},
    }});
    replace_file(&file, &last.to_string());
    let event = tokio::time::timeout(LONG, watch.next_event())
        .await
        .unwrap();
    let Some(WatchEvent::Reloaded(report)) = event else {
        panic!("{event:?}")
    };
    assert_eq!(report.unchanged, ["one"]);
    assert_eq!(report.replaced, ["two"]);
    assert_eq!(report.added, ["three"]);
    assert_eq!(sorted(manager.servers()), ["one", "three", "two"]);
    let again = tokio::time::timeout(Duration::from_millis(800), watch.next_event()).await;
    assert!(again.is_err(), "one reload only: {again:?}");
    assert_eq!(session("one__session").await, one, "`one` kept its session");
    assert_ne!(session("two__session").await, two);
    let seen = server.seen();
    let initialized = |path: &str| {
        seen.iter()
            .filter(|s| s.path == path && s.rpc_method().as_deref() == Some("initialize"))
            .count()
    };
    assert_eq!((initialized("/one"), initialized("/two")), (1, 2));
    let edition = seen
        .iter()
        .filter(|s| s.path == "/two")
        .filter_map(|s| s.header("x-edition"))
        .collect::<Vec<_>>();
    assert_eq!(
        edition.first(),
        Some(&"5"),
        "only the last save was read: {edition:?}"
    );

    // A save that does not parse changes nothing and says why.
    std::fs::write(&file, "{ \"mcpServers\": ").unwrap();
    let event = tokio::time::timeout(LONG, watch.next_event())
        .await
        .unwrap();
    let Some(WatchEvent::Failed(err)) = event else {
        panic!("{event:?}")
    };
    assert!(matches!(err, ConfigFilesError::Load(_)), "{err:?}");
    assert!(chain(&err).contains("mcp.json"), "{}", chain(&err));
    assert_eq!(sorted(manager.servers()), ["one", "three", "two"]);
    assert_eq!(session("one__session").await, one);

    // The watch ends with the manager.
    manager.close().await;
    let end = tokio::time::timeout(LONG, watch.next_event())
        .await
        .unwrap();
    assert!(end.is_none(), "{end:?}");
}

#[test]
fn watch_options_are_clamped_to_sane_bounds() {
    let new = WatchOptions::new();
    assert_eq!(new, WatchOptions::default());
    let at = |ms| Duration::from_millis(ms);
    assert_ne!(new.interval(at(10)), new);
    assert_eq!(new.interval(Duration::ZERO), new.interval(at(10)));
    assert_eq!(new.interval(at(3_600_000)), new.interval(at(60_000)));
    assert_ne!(new.quiet(at(1)), new);
    assert_eq!(new.quiet(at(3_600_000)), new.quiet(at(600_000)));
    assert_ne!(new.max_delay(at(1)), new);
    assert_eq!(new.max_delay(at(3_600_000)), new.max_delay(at(600_000)));
}

#[tokio::test(flavor = "multi_thread")]
async fn files_written_without_a_pause_are_reloaded_by_the_longest_delay() {
    let (server, _dir, file, files, manager) = fleet_of_one().await;
    let options = quick_watch().max_delay(Duration::from_millis(400));
    let mut watch = files.watch(&manager, options);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A write every 40 ms for 3 s: never 300 ms of quiet.
    let writer = std::thread::spawn({
        let (file, one, two) = (file.clone(), server.url("/one"), server.url("/two"));
        move || {
            let started = std::time::Instant::now();
            let mut n = 0u32;
            while started.elapsed() < Duration::from_secs(3) {
                n += 1;
                let text = json!({"mcpServers": {
                    "one": {"type": "http", "url": one, "headers": {"X-Edition": n.to_string()}},
                    "two": {"type": "http", "url": two},
                }});
                // Whole files (written aside, then renamed over): a reload
                // that falls between truncating and writing would read an
                // empty file, which is not what this test is about.
                let aside = file.with_extension("json.new");
                std::fs::write(&aside, text.to_string()).unwrap();
                std::fs::rename(&aside, &file).unwrap();
                std::thread::sleep(Duration::from_millis(40));
            }
        }
    });
    let event = tokio::time::timeout(Duration::from_millis(2000), watch.next_event()).await;
    assert!(
        matches!(event, Ok(Some(WatchEvent::Reloaded(_)))),
        "a reload while the writes go on: {event:?}"
    );
    writer.join().unwrap();
    manager.close().await;
}

/// An editor that empties a file and then writes it: a reload that read it
/// empty is not reported as a failure, since the next read finds the file
/// changed, and the change is acted on again.
#[tokio::test(flavor = "multi_thread")]
async fn a_file_read_mid_write_is_read_again_not_reported() {
    let (server, _dir, file, files, manager) = fleet_of_one().await;
    // A read every second, acted on at once: the first read after the
    // file was emptied (about 1 s in) loads it empty, and the write (1.5 s
    // in) lands before the next read (about 2 s in).
    let options = WatchOptions::new()
        .interval(Duration::from_secs(1))
        .quiet(Duration::ZERO);
    let mut watch = files.watch(&manager, options);
    tokio::time::sleep(Duration::from_millis(300)).await;
    std::fs::File::create(&file).unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    write_config(&file, &server, &[("two", "/two", None)]);
    let event = tokio::time::timeout(LONG, watch.next_event())
        .await
        .unwrap();
    assert!(matches!(event, Some(WatchEvent::Reloaded(_))), "{event:?}");
    assert_eq!(manager.servers(), ["two"]);
    manager.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rewrite_of_the_same_size_and_time_is_seen_by_its_content() {
    let (server, _dir, file, files, manager) = fleet_of_one().await;
    let mut watch = files.watch(&manager, quick_watch());
    // The watch's first read is the files as they were.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let written = std::fs::metadata(&file).unwrap().modified().unwrap();
    let size = std::fs::metadata(&file).unwrap().len();
    // Same length, and the time put back: only the content differs.
    write_config(&file, &server, &[("two", "/two", None)]);
    let rewritten = std::fs::File::options().write(true).open(&file).unwrap();
    rewritten.set_modified(written).unwrap();
    drop(rewritten);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), size);
    let event = tokio::time::timeout(LONG, watch.next_event())
        .await
        .unwrap();
    assert!(matches!(event, Some(WatchEvent::Reloaded(_))), "{event:?}");
    assert_eq!(manager.servers(), ["two"]);
    manager.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_watch_reloads_nothing_more() {
    let (server, _dir, file, files, manager) = fleet_of_one().await;
    let watch = files.watch(&manager, quick_watch());
    // Its first read done, it would see the change below: dropped, it
    // does not.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(watch);
    write_config(
        &file,
        &server,
        &[("one", "/one", None), ("two", "/two", None)],
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(manager.servers(), ["one"]);
    // Whereas a live watch would have (the same change, watched).
    let mut watch = files.watch(&manager, quick_watch());
    tokio::time::sleep(Duration::from_millis(300)).await;
    write_config(
        &file,
        &server,
        &[("one", "/one", None), ("three", "/three", None)],
    );
    let event = tokio::time::timeout(LONG, watch.next_event())
        .await
        .unwrap();
    assert!(matches!(event, Some(WatchEvent::Reloaded(_))), "{event:?}");
    assert_eq!(sorted(manager.servers()), ["one", "three"]);
    manager.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_skipped_servers_follow_the_reloads() {
    let server = sessions_server().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    let write = |one_off: bool, two_off: bool| {
        let text = json!({"mcpServers": {
            "one": {"type": "http", "url": server.url("/one"), "disabled": one_off},
            "two": {"type": "http", "url": server.url("/two"), "disabled": two_off},
        }});
        std::fs::write(&file, text.to_string()).unwrap();
    };
    let skipped = |m: &Manager| -> Vec<String> {
        sorted(
            m.skipped_servers()
                .into_iter()
                .map(|(name, why)| {
                    assert!(matches!(why, ServerSkip::Disabled), "{why:?}");
                    name
                })
                .collect(),
        )
    };
    write(false, true);
    let files = ConfigFiles::new([&file]).unwrap();
    let manager = files.builder().unwrap().build().unwrap();
    assert_eq!(skipped(&manager), ["two"]);
    // `two` fixed: no longer left out.
    write(false, false);
    let report = tokio::time::timeout(LONG, files.reload(&manager))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.added, ["two"]);
    assert!(
        skipped(&manager).is_empty(),
        "{:?}",
        manager.skipped_servers()
    );
    // `one` newly disabled: left out, and said so.
    write(true, false);
    let report = tokio::time::timeout(LONG, files.reload(&manager))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.removed, ["one"]);
    assert_eq!(skipped(&manager), ["one"]);
    // A reload that fails leaves the list as it was.
    std::fs::write(&file, "{").unwrap();
    assert!(files.reload(&manager).await.is_err());
    assert_eq!(skipped(&manager), ["one"]);
    manager.close().await;
}

/// `names` in sorted order.
fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// An error and its causes, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn servers_dir() -> PathBuf {
    match std::env::var_os("MCPWIRE_SERVERS_DIR") {
        Some(d) => d.into(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"),
    }
}

/// An installed server file; a failure if it is missing.
fn installed(relative: &str) -> PathBuf {
    let path = servers_dir().join(relative);
    assert!(
        path.exists(),
        "{} is not installed: run `cargo xtask servers` (or set MCPWIRE_SERVERS_DIR)",
        path.display()
    );
    path
}

/// server-everything in its Streamable HTTP mode on 127.0.0.1, and its URL.
async fn everything_http(entry: &Path) -> (Child, String) {
    let preload =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../transport-http/tests/servers/loopback.js");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("node")
        .arg("--require")
        .arg(preload)
        .arg(entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    let deadline = tokio::time::Instant::now() + LONG;
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(tokio::time::Instant::now() < deadline, "never listened");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the real MCP servers: `cargo xtask servers`, then `cargo test -- --include-ignored` (cargo xtask ci does both)"]
async fn real_servers_from_one_configuration_file() {
    let everything =
        installed("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let filesystem =
        installed("npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let python = installed("venv/bin/python");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance-client/interop/mcpserver.py");
    let (_http, url) = everything_http(&everything).await;
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();
    std::fs::write(root_path.join("hello.txt"), "hello from the fleet\n").unwrap();

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claude_desktop_config.json");
    let text = json!({
        "mcpServers": {
            "everything": {"command": "node", "args": [everything, "stdio"]},
            "everything-http": {"type": "http", "url": url},
            "filesystem": {"command": "node", "args": [filesystem, root_path]},
            "python": {"command": python, "args": [script, "stdio"]}
        }
    });
    std::fs::write(&file, text.to_string()).unwrap();
    let config = mcpwire::config::load_file(&file).unwrap();
    let manager = Manager::builder()
        .config(
            &config,
            &Resolver::new(&ProcessEnvironment),
            &Transports::new().unwrap(),
        )
        .unwrap()
        .startup_timeout(LONG)
        .build()
        .unwrap();
    let report = tokio::time::timeout(LONG * 2, manager.connect_all())
        .await
        .unwrap()
        .unwrap();
    assert!(report.all_connected(), "{:?}", report.failed);
    assert_eq!(report.connected.len(), 4);
    let names: Vec<String> = manager
        .tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in [
        "everything__echo",
        "everything-http__echo",
        "filesystem__read_text_file",
        "python__add",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    for server in ["everything", "everything-http"] {
        let echo = manager
            .call_tool(&format!("{server}__echo"), &json!({"message": "fleet"}))
            .await
            .unwrap();
        assert!(echo.text().contains("fleet"), "{}", echo.text());
    }
    let read = manager
        .call_tool(
            "filesystem__read_text_file",
            &json!({"path": root_path.join("hello.txt")}),
        )
        .await
        .unwrap();
    assert!(
        read.text().contains("hello from the fleet"),
        "{}",
        read.text()
    );
    let sum = manager
        .call_tool("python__add", &json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(sum.text().contains('5'), "{}", sum.text());
    // Resources route by owner: a resource the Python server lists.
    if let Some(resource) = manager.resources().iter().find(|r| r.server == "python") {
        let uri = resource.resource.uri.clone();
        manager.read_resource(&uri).await.unwrap();
    }
    manager.close().await;
}
