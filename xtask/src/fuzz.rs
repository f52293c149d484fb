//! `cargo xtask fuzz <target|--all> [--seconds N] [--smoke]`: runs one
//! cargo-fuzz target (in `fuzz/`), or every target, each for a bounded time.
//! Every target is built first, in one build; then they run side by side,
//! as many at a time as the machine has cores (each fuzzer is one process
//! on one core), and each one's output is printed whole when it ends.
//!
//! By default the targets are built as cargo-fuzz builds them: optimised,
//! with AddressSanitizer. `--smoke` builds them in the dev profile without a
//! sanitizer (coverage-guided all the same, with overflow checks and debug
//! assertions on): about a third of the build's CPU time, which is what CI
//! can afford for its short run of every target. Long runs use the default.
//!
//! cargo-fuzz needs nightly compiler flags; `RUSTC_BOOTSTRAP=1` lets the
//! stable toolchain accept them, so no nightly toolchain is needed. If
//! `cargo fuzz` is missing it is installed from crates.io first. A few seed
//! inputs are written into the target's corpus directory when it is empty;
//! corpora and crash artifacts stay out of git (see `fuzz/.gitignore`).

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::thread;

use crate::cmd::{cargo, display, root, run};

/// The fuzz targets, as named in `fuzz/Cargo.toml`.
const TARGETS: &[&str] = &[
    "line",
    "content_length",
    "sse",
    "envelope",
    "typed_results",
    "http_answer",
    "www_authenticate",
];

/// How long a run lasts unless `--seconds` says otherwise.
const DEFAULT_SECONDS: u64 = 60;

/// Parses the arguments after `fuzz` and runs the target (or all of them).
pub(crate) fn fuzz(root: &Path, args: &[String]) -> Result<(), String> {
    let usage = || {
        format!(
            "usage: cargo xtask fuzz <{}|--all> [--seconds N] [--smoke]",
            TARGETS.join("|")
        )
    };
    let mut target = None;
    let mut all = false;
    let mut seconds = DEFAULT_SECONDS;
    let mut smoke = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                seconds = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&s| s > 0)
                    .ok_or_else(usage)?;
            }
            "--smoke" if !smoke => smoke = true,
            "--all" if target.is_none() && !all => all = true,
            name if target.is_none() && !all && TARGETS.contains(&name) => target = Some(name),
            _ => return Err(usage()),
        }
    }
    let targets: Vec<&str> = match target {
        Some(t) => vec![t],
        None if all => TARGETS.to_vec(),
        None => return Err(usage()),
    };

    ensure_cargo_fuzz()?;
    let build: &[&str] = if smoke {
        &["--dev", "--sanitizer", "none"]
    } else {
        &[]
    };
    for target in &targets {
        seed_corpus(root, target)?;
    }
    run(&mut fuzz_command("build", build, &[]))?;
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    let queue = Mutex::new(targets.into_iter());
    let failed = Mutex::new(Vec::new());
    thread::scope(|s| {
        for _ in 0..cores {
            s.spawn(|| {
                loop {
                    // The lock is held only to take the next target.
                    let Some(target) = queue.lock().expect("no panic holds it").next() else {
                        break;
                    };
                    if let Err(e) = run_target(target, seconds, build) {
                        failed.lock().expect("no panic holds it").push(e);
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().expect("no panic holds it");
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

/// `cargo fuzz SUBCOMMAND BUILD_FLAGS ARGS`, through `env` so that the
/// echoed command line shows the variable and can be pasted as it is.
fn fuzz_command(subcommand: &str, build: &[&str], args: &[&str]) -> Command {
    let mut cmd = Command::new("env");
    cmd.arg("RUSTC_BOOTSTRAP=1")
        .arg(cargo().get_program())
        .args(["fuzz", subcommand])
        .args(build)
        .args(args)
        .current_dir(root());
    cmd
}

/// Runs `target` (already built) for `seconds`; its output, captured, is
/// printed in one piece when it ends, so that runs side by side do not mix.
fn run_target(target: &str, seconds: u64, build: &[&str]) -> Result<(), String> {
    let max_time = format!("-max_total_time={seconds}");
    let mut cmd = fuzz_command(
        "run",
        build,
        &[target, "--", &max_time, "-print_final_stats=1"],
    );
    let shown = display(&cmd);
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    eprintln!(
        "$ {shown}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed: {}", out.status))
    }
}

/// Installs cargo-fuzz unless `cargo fuzz --version` already works.
fn ensure_cargo_fuzz() -> Result<(), String> {
    eprintln!("$ cargo fuzz --version");
    let present = cargo()
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return Ok(());
    }
    // Unoptimised: it only drives cargo (measured here: 31 s to build, 52 s
    // optimised).
    eprintln!("cargo fuzz is missing; installing it");
    run(cargo().args(["install", "cargo-fuzz", "--locked", "--debug"]))
}

/// Writes a few valid inputs into an empty corpus so the fuzzer starts from
/// the interesting shapes instead of discovering them byte by byte. Each
/// decoder input starts with the four configuration bytes the targets read
/// (maximum length, then three read sizes).
fn seed_corpus(root: &Path, target: &str) -> Result<(), String> {
    let dir = root.join("fuzz").join("corpus").join(target);
    let empty = fs::read_dir(&dir).map_or(true, |mut d| d.next().is_none());
    if !empty {
        return Ok(());
    }
    let seeds: &[&[u8]] = match target {
        "line" => &[
            b"\x10\x01\x02\x03{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\"",
            b"\xff\x05\x05\x05{}\n",
        ],
        "content_length" => &[
            b"\x20\x01\x02\x03Content-Length: 2\r\n\r\n{}content-type: x\r\ncontent-length:3\r\n\r\n[1]",
            b"\x04\x03\x07\x01Content-Length: 9\r\n\r\n123456789\r\nContent-Length: 1\n\n1",
        ],
        "sse" => &[
            b"\x40\x01\x02\x03\xEF\xBB\xBF: hi\nid: 1\nretry: 10\nevent: e\ndata: a\ndata\n\n",
            b"\xff\x03\x01\x02data: x\r\rdata: y\r\n\r\nid\0x\ndata:\n\n",
        ],
        "envelope" => &[
            br#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"x"}}"#,
            br#"[{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":[1]}}]"#,
        ],
        // The `result` of a response, as a server writes it.
        "typed_results" => &[
            br#"{"content":[{"type":"text","text":"x","_meta":{"m":1}},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"resource","resource":{"uri":"file:///a","text":"t"}},{"type":"resource_link","uri":"file:///b","name":"b"}],"structuredContent":{"a":1},"isError":false,"x":1}"#,
            br#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true}},"serverInfo":{"name":"s","version":"1","icons":[{"src":"data:,"}]},"instructions":"hi"}"#,
            br#"{"tools":[{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}],"nextCursor":"c"}"#,
            br#"{"resources":[{"uri":"file:///a","name":"a","mimeType":"text/plain","size":3}],"resourceTemplates":[{"uriTemplate":"file:///{p}","name":"t"}],"prompts":[{"name":"p","arguments":[{"name":"a","required":true}]}]}"#,
            br#"{"contents":[{"uri":"file:///a","text":"hello"},{"uri":"file:///b","blob":"AA==","mimeType":"application/octet-stream"}],"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"completion":{"values":["a"],"total":1,"hasMore":false}}"#,
            br#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10,"message":"m","requestedSchema":{"type":"object","properties":{}},"level":"info","data":{"k":1},"progressToken":1,"progress":0.5,"total":1,"uri":"file:///a","requestId":3,"reason":"r","roots":[{"uri":"file:///"}]}"#,
        ],
        // Three write sizes, then the raw answer to `initialize`.
        "http_answer" => &[
            b"\x00\x03\x40HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\ncontent-length: 100\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"serverInfo\":{}}}",
            b"\x01\x02\x05HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n1a\r\nid: 0\nretry: 3000\ndata: \n\n\r\n35\r\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n\r\n2c\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n\n\r\n0\r\n\r\n",
            b"\x10\x10\x10HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\ncontent-length: 0\r\n\r\n",
            b"\x10\x10\x10HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 13\r\n\r\n<html></html>",
            b"\x02\x02\x02HTTP/1.1 202 Accepted\r\n\r\n",
        ],
        "www_authenticate" => &[
            br#"Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource", scope="files:read files:write", error="insufficient_scope""#,
            br#"Basic realm="a \"quoted\" realm", charset=UTF-8, Negotiate YIIB0gYGKwYBBQUCoIIBxjCC==, Bearer"#,
            b"Bearer realm=x,,, error=invalid_token , Digest nonce=\"\xff\xfe\", qop=auth",
        ],
        _ => &[],
    };
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (i, seed) in seeds.iter().enumerate() {
        let path = dir.join(format!("seed-{i}"));
        fs::write(&path, seed).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    eprintln!("seeded {} with {} inputs", dir.display(), seeds.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_arguments_are_refused_before_anything_runs() {
        let root = Path::new("/nonexistent");
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for bad in [
            &[][..],
            &["nope"][..],
            &["line", "--seconds"][..],
            &["line", "--seconds", "0"][..],
            &["line", "--seconds", "x"][..],
            &["line", "sse"][..],
            &["--all", "line"][..],
            &["line", "--all"][..],
            &["--all", "--all"][..],
            &["line", "--smoke", "--smoke"][..],
            &["--smoke"][..],
        ] {
            let err = fuzz(root, &args(bad)).unwrap_err();
            assert!(err.starts_with("usage:"), "{bad:?}: {err}");
        }
    }
}
