//! Scripted stdio servers: this binary, run as
//! `mcpwire-faults stdio-server <mode>`, misbehaves as `mode` says.
//!
//! | mode | behaviour |
//! | --- | --- |
//! | `ok` | a small MCP server (tools below) |
//! | `stdout-logs` | `ok`, but writes a plain-text log line to stdout before every message |
//! | `silent` | reads everything, never answers (not even `initialize`) |
//! | `exit-early` | writes two stderr lines and exits with status 3 before reading anything |
//! | `sleeper` | sleeps for a minute (the grandchild a server leaves behind) |
//!
//! Tools of `ok`: `echo {message}`; `block` (never answered; a
//! `notifications/cancelled` for it is remembered); `cancelled` (the ids
//! cancelled so far, as text); `crash` (writes a stderr line, exits with
//! status 9 without answering); `flood {count}` (that many
//! `notifications/message`, then the answer); `big {bytes}` (an answer
//! with a text of that size); `pid` (the server's process id);
//! `grandchild` (starts a `sleeper` that shares its stdout, answers its
//! pid); `slow {steps, ms}` (a progress notification every `ms`, then the
//! answer).
//!
//! Blocking std I/O, one message at a time: a `block`ed request simply
//! stays unanswered while later ones are served.

use std::io::{self, BufRead, BufWriter, Write};
use std::time::Duration;

use serde_json::{Value, json};

/// Runs the scripted server `mode` on this process's stdin and stdout.
pub fn run(mode: &str) -> io::Result<()> {
    match mode {
        "ok" => serve(false),
        "stdout-logs" => serve(true),
        "silent" => {
            let mut sink = Vec::new();
            io::copy(&mut io::stdin().lock(), &mut sink).map(drop)
        }
        "exit-early" => {
            eprintln!("starting up");
            eprintln!("fatal: missing configuration FAULTS_CONFIG");
            std::process::exit(3);
        }
        "sleeper" => {
            std::thread::sleep(Duration::from_secs(60));
            Ok(())
        }
        other => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("unknown stdio-server mode {other:?}"),
        )),
    }
}

struct Out {
    w: BufWriter<io::Stdout>,
    logs: bool,
}

impl Out {
    fn send(&mut self, msg: &Value) -> io::Result<()> {
        if self.logs {
            writeln!(self.w, "[faults] about to write a message")?;
        }
        serde_json::to_writer(&mut self.w, msg)?;
        self.w.write_all(b"\n")?;
        self.w.flush()
    }

    fn result(&mut self, id: &Value, result: Value) -> io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    fn text(&mut self, id: &Value, text: impl Into<String>) -> io::Result<()> {
        let text: String = text.into();
        self.result(id, json!({"content": [{"type": "text", "text": text}]}))
    }
}

fn serve(logs: bool) -> io::Result<()> {
    let mut out = Out {
        w: BufWriter::with_capacity(64 * 1024, io::stdout()),
        logs,
    };
    let mut cancelled: Vec<Value> = Vec::new();
    for line in io::stdin().lock().lines() {
        let line = line?;
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = msg["method"].as_str().unwrap_or("");
        let id = msg.get("id").cloned();
        let params = &msg["params"];
        match (method, id) {
            ("notifications/cancelled", None) => cancelled.push(params["requestId"].clone()),
            (_, None) => {}
            ("initialize", Some(id)) => {
                let version = params["protocolVersion"].as_str().unwrap_or("2025-11-25");
                out.result(
                    &id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {}, "logging": {}},
                        "serverInfo": {"name": "faults-stdio", "version": "1"}
                    }),
                )?;
            }
            ("ping", Some(id)) => out.result(&id, json!({}))?,
            ("tools/list", Some(id)) => out.result(&id, json!({"tools": tools()}))?,
            ("tools/call", Some(id)) => call(&mut out, id, params, &cancelled)?,
            (_, Some(id)) => out.send(&json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}
            }))?,
        }
    }
    Ok(())
}

fn call(out: &mut Out, id: Value, params: &Value, cancelled: &[Value]) -> io::Result<()> {
    let args = &params["arguments"];
    match params["name"].as_str().unwrap_or("") {
        "echo" => out.text(&id, args["message"].as_str().unwrap_or("")),
        "block" => Ok(()),
        "cancelled" => out.text(&id, serde_json::to_string(cancelled).unwrap_or_default()),
        "crash" => {
            eprintln!("crashing on purpose in the middle of a call");
            std::process::exit(9);
        }
        "flood" => {
            let count = args["count"].as_u64().unwrap_or(0);
            for i in 0..count {
                out.w.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":")?;
                writeln!(out.w, "{i}}}}}")?;
            }
            out.text(&id, format!("flooded {count}"))
        }
        "big" => {
            let bytes = args["bytes"].as_u64().unwrap_or(0) as usize;
            out.text(&id, "x".repeat(bytes))
        }
        "pid" => out.text(&id, std::process::id().to_string()),
        "grandchild" => {
            let exe = std::env::current_exe()?;
            let child = std::process::Command::new(exe)
                .args(["stdio-server", "sleeper"])
                .stdin(std::process::Stdio::null())
                .spawn()?;
            out.text(&id, child.id().to_string())
        }
        "slow" => {
            let steps = args["steps"].as_u64().unwrap_or(1);
            let ms = args["ms"].as_u64().unwrap_or(100);
            let token = params["_meta"]["progressToken"].clone();
            for i in 1..=steps {
                std::thread::sleep(Duration::from_millis(ms));
                if !token.is_null() {
                    out.send(&json!({
                        "jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": i, "total": steps}
                    }))?;
                }
            }
            out.text(&id, format!("done {steps}"))
        }
        other => out.send(&json!({
            "jsonrpc": "2.0", "id": id,
            "result": {"content": [{"type": "text", "text": format!("no tool {other}")}], "isError": true}
        })),
    }
}

fn tools() -> Value {
    let names = [
        "echo",
        "block",
        "cancelled",
        "crash",
        "flood",
        "big",
        "pid",
        "grandchild",
        "slow",
    ];
    Value::Array(
        names
            .iter()
            .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
            .collect(),
    )
}
