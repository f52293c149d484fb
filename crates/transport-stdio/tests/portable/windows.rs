//! Windows only: programs found by name through `PATHEXT`, `.cmd` wrappers
//! run through `cmd.exe` with their arguments intact, and the demo server's
//! whole tree gone after a close.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcpwire_stdio::{SpawnError, StdioConfig, StdioTransport};
use mcpwire_transport::{Active, CloseReason, Transport, TransportExt};

use super::{
    HELPER, HOSTILE, LONG, assert_args_intact, block_on, closed, next_frame, spawn, under_wine,
};

/// A fresh directory of this test's own, for wrappers and copies.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpwire-stdio-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `PATH` for the child: `dir` first, then this process's.
fn path_with(dir: &Path) -> OsString {
    let mut dirs = vec![dir.to_owned()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// Writes `dir\name.cmd`, which runs `program` with the wrapper's arguments.
fn cmd_wrapper(dir: &Path, name: &str, program: &Path) {
    let script = format!("@\"{}\" %*\r\n", program.display());
    std::fs::write(dir.join(format!("{name}.cmd")), script).unwrap();
}

pub(super) fn hostile_cmd() {
    block_on(async {
        let dir = scratch("hostile");
        let me = std::env::current_exe().unwrap();
        cmd_wrapper(&dir, "args-helper", &me);
        let config = StdioConfig::new("args-helper")
            .env(HELPER, "argv")
            .env("PATH", path_with(&dir));
        // Wine's cmd.exe expands `%PATH%` again when a batch file passes its
        // arguments on with `%*` (Windows' does not; the command line Rust
        // builds keeps it literal, which the direct test checks): left out
        // under Wine only.
        let args: Vec<&str> = HOSTILE
            .iter()
            .copied()
            .filter(|a| !(under_wine() && a.contains('%')))
            .collect();
        let mut t = assert_args_intact(config, &args).await;
        assert!(
            t.command().to_string_lossy().ends_with("args-helper.cmd"),
            "{}",
            t.command().display()
        );
        tokio::time::timeout(LONG, t.close()).await.unwrap();
    });
}

pub(super) fn refused_cmd() {
    block_on(async {
        let dir = scratch("refused");
        let me = std::env::current_exe().unwrap();
        cmd_wrapper(&dir, "args-helper", &me);
        let config = StdioConfig::new(dir.join("args-helper.cmd")).arg("line\r\nbreak");
        match StdioTransport::spawn(config).await {
            Err(SpawnError::Spawn { command, source }) => {
                assert_eq!(source.kind(), std::io::ErrorKind::InvalidInput, "{source}");
                assert!(
                    command.ends_with("args-helper.cmd"),
                    "{}",
                    command.display()
                );
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    });
}

/// The demo server, built for Windows (`cargo xtask cross` builds it and
/// says where).
fn demo_server() -> PathBuf {
    let path = std::env::var_os("MCPWIRE_DEMO_SERVER").expect(
        "MCPWIRE_DEMO_SERVER names the demo server built for Windows (cargo xtask cross sets it)",
    );
    let path = PathBuf::from(path);
    assert!(path.is_file(), "no demo server at {}", path.display());
    path
}

/// The demo server copied under a name no other process has, behind a
/// `.cmd` of the same name: returns the directory and the name.
fn demo_behind_cmd(test: &str) -> (PathBuf, String) {
    let dir = scratch(test);
    let name = format!("mcpwire-demo-{}-{test}", std::process::id());
    // The program sits below the wrapper, off PATH (beside it, PATHEXT's
    // `.EXE` would win over `.CMD`), as with npm's `node_modules\.bin`.
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::copy(demo_server(), dir.join("bin").join(format!("{name}.exe"))).unwrap();
    // `%~dp0` is the wrapper's own directory, as npm's wrappers use it.
    let script = format!("@\"%~dp0bin\\{name}.exe\" %*\r\n");
    std::fs::write(dir.join(format!("{name}.cmd")), script).unwrap();
    (dir, name)
}

/// The names of the running processes, lowercased: `tasklist` (Windows),
/// else `wmic` (Wine's `tasklist` lists nothing). Fails if neither lists
/// this very process, so an absence is never vacuous.
///
/// The lister writes to a file, not a pipe, and is waited for with a
/// deadline. A loop of this test under Wine stalled once in three runs
/// with `cmd.exe` and the demo server alive and no panic, so at a point
/// where only this call was unbounded; the process list then also held an
/// `explorer.exe /desktop`, which Wine starts for the first program that
/// needs a desktop. If it inherits the lister's standard handles, a pipe
/// never reaches its end and `Command::output` waits for ever; a file and
/// the lister's own exit do not depend on that.
fn processes() -> String {
    let me = std::env::current_exe().unwrap();
    let me = me.file_name().unwrap().to_string_lossy().to_lowercase();
    let listers: [(&str, &[&str]); 2] = [
        ("tasklist", &["/fo", "csv", "/nh"]),
        ("wmic", &["process", "get", "name"]),
    ];
    let out = std::env::temp_dir().join(format!("mcpwire-stdio-{}-ps.txt", std::process::id()));
    for (program, args) in listers {
        let Ok(file) = std::fs::File::create(&out) else {
            continue;
        };
        let Ok(mut child) = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(file)
            .stderr(std::process::Stdio::null())
            .spawn()
        else {
            continue;
        };
        let deadline = Instant::now() + LONG;
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{program} did not finish within {LONG:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let text = decode(&std::fs::read(&out).unwrap_or_default()).to_lowercase();
        if text.contains(&me) {
            return text;
        }
    }
    panic!("neither tasklist nor wmic lists the running processes");
}

/// Console output: UTF-16 with a byte-order mark (wmic), else UTF-8.
fn decode(bytes: &[u8]) -> String {
    match bytes {
        [0xFF, 0xFE, rest @ ..] => {
            let units: Vec<u16> = rest
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

async fn initialize(t: &mut StdioTransport) {
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdio-tests","version":"0"}}}"#;
    t.sender().send(Bytes::from_static(init)).await.unwrap();
    t.set_active(Active::Once);
    let reply = next_frame(t).await;
    assert!(
        String::from_utf8_lossy(&reply).contains("\"serverInfo\""),
        "{reply:?}"
    );
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    t.sender()
        .send(Bytes::from_static(initialized))
        .await
        .unwrap();
}

pub(super) fn demo_cmd() {
    block_on(async {
        let (dir, name) = demo_behind_cmd("demo");
        let exe = format!("{name}.exe").to_lowercase();
        let mut t = spawn(StdioConfig::new(&name).env("PATH", path_with(&dir))).await;
        assert!(
            t.command()
                .to_string_lossy()
                .ends_with(&format!("{name}.cmd")),
            "found by name through PATHEXT: {}",
            t.command().display()
        );
        initialize(&mut t).await;
        let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello through cmd.exe"}}}"#;
        t.sender().send(Bytes::from_static(call)).await.unwrap();
        t.set_active(Active::Once);
        let reply = next_frame(&mut t).await;
        assert!(
            String::from_utf8_lossy(&reply).contains("hello through cmd.exe"),
            "{reply:?}"
        );
        assert!(processes().contains(&exe), "the server runs under cmd.exe");
        tokio::time::timeout(LONG, t.close()).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while processes().contains(&exe) {
            assert!(Instant::now() < deadline, "{exe} outlived the close");
            std::thread::sleep(Duration::from_millis(100));
        }
        let exit = t.exit().expect("the exit is known after close");
        assert_eq!(
            exit.code,
            Some(0),
            "the server ended on stdin's close: {exit}"
        );
    });
}

pub(super) fn demo_crash() {
    block_on(async {
        let (dir, name) = demo_behind_cmd("crash");
        let mut t = spawn(StdioConfig::new(&name).env("PATH", path_with(&dir))).await;
        initialize(&mut t).await;
        let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{}}}"#;
        t.sender().send(Bytes::from_static(call)).await.unwrap();
        t.set_active(Active::Once);
        match closed(&mut t).await {
            CloseReason::Exited(info) => {
                assert_eq!(
                    info.code,
                    Some(3),
                    "cmd.exe passes the exit code on: {info}"
                );
                assert!(
                    info.stderr_tail
                        .iter()
                        .any(|l| l.contains("crashing on request")),
                    "{info:?}"
                );
            }
            other => panic!("expected Exited, got {other:?}"),
        }
    });
}

pub(super) fn not_found() {
    block_on(async {
        let dir = scratch("missing");
        let config = StdioConfig::new("no-such-mcp-server").env("PATH", &dir);
        match StdioTransport::spawn(config).await {
            Err(e @ SpawnError::NotFound { .. }) => {
                let message = e.to_string();
                assert!(
                    message.contains("no-such-mcp-server")
                        && message.to_ascii_lowercase().contains(".cmd"),
                    "{message}"
                );
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
    });
}
