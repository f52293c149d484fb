//! Golden files: each client's documented format, loaded and rendered as
//! the normalized entries and warnings, compared with `NAME.expected`.
//!
//! Run with `MCPWIRE_UPDATE_GOLDEN=1` to rewrite the expected files after a
//! deliberate change, then read the diff. A test whose file it rewrites
//! fails (it compared nothing); one whose file already matches passes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mcpwire_config::{Config, LoadOptions, Transport, load_file};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every field of every entry, raw (not redacted: the point is to see what
/// was read), then the warnings.
fn render(config: &Config) -> String {
    let mut out = String::new();
    for source in &config.sources {
        writeln!(out, "source: {:?} {:?}", source.format, source.shape).unwrap();
    }
    for input in &config.inputs {
        writeln!(
            out,
            "input {:?}: kind={:?} description={:?} password={} default={:?}",
            input.id, input.kind, input.description, input.password, input.default
        )
        .unwrap();
    }
    for s in &config.servers {
        let at = s.position().map(|p| p.to_string()).unwrap_or_default();
        writeln!(out, "\n[{}] at {at}", s.name).unwrap();
        match &s.transport {
            Transport::Stdio(stdio) => {
                writeln!(
                    out,
                    "  stdio command={:?} args={:?}",
                    stdio.command, stdio.args
                )
                .unwrap();
                if !stdio.env.is_empty() {
                    writeln!(out, "  env={:?}", stdio.env).unwrap();
                }
                if let Some(f) = &stdio.env_file {
                    writeln!(out, "  env_file={f:?}").unwrap();
                }
                if let Some(c) = &stdio.cwd {
                    writeln!(out, "  cwd={c:?}").unwrap();
                }
                if !stdio.forward_env.is_empty() {
                    writeln!(out, "  forward_env={:?}", stdio.forward_env).unwrap();
                }
            }
            Transport::Http { remote, mode } => {
                writeln!(out, "  http mode={mode:?} url={:?}", remote.url).unwrap();
                render_remote(&mut out, remote);
            }
            Transport::WebSocket(remote) => {
                writeln!(out, "  websocket url={:?}", remote.url).unwrap();
                render_remote(&mut out, remote);
            }
            other => writeln!(out, "  {other:?}").unwrap(),
        }
        let p = &s.policy;
        writeln!(
            out,
            "  policy enabled={} required={} trust={} startup={:?} request={:?} include={:?} exclude={:?}",
            p.enabled, p.required, p.trust, p.startup_timeout, p.request_timeout, p.include_tools, p.exclude_tools
        )
        .unwrap();
        if let Some(d) = &s.description {
            writeln!(out, "  description={d:?}").unwrap();
        }
        if !s.extra.is_empty() {
            writeln!(
                out,
                "  extra={}",
                serde_json::Value::Object(s.extra.clone())
            )
            .unwrap();
        }
    }
    if !config.warnings.is_empty() {
        writeln!(out, "\nwarnings:").unwrap();
        for w in &config.warnings {
            writeln!(out, "  {w}").unwrap();
        }
    }
    out
}

fn render_remote(out: &mut String, remote: &mcpwire_config::RemoteEntry) {
    if !remote.headers.is_empty() {
        writeln!(out, "  headers={:?}", remote.headers).unwrap();
    }
    if !remote.env_headers.is_empty() {
        writeln!(out, "  env_headers={:?}", remote.env_headers).unwrap();
    }
    if let Some(v) = &remote.bearer_token_env_var {
        writeln!(out, "  bearer_token_env_var={v:?}").unwrap();
    }
}

fn check(name: &str) {
    let path = fixtures().join(name);
    let config = load_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let prefix = format!("{}/", fixtures().display());
    let actual = render(&config).replace(&prefix, "");
    let expected_path = fixtures().join(format!("{name}.expected"));
    let expected_now = std::fs::read_to_string(&expected_path).ok();
    if std::env::var_os("MCPWIRE_UPDATE_GOLDEN").is_some()
        && expected_now.as_deref() != Some(actual.as_str())
    {
        // Rewritten, not compared: the run fails, so an update is never
        // mistaken for a pass. The next run without the variable checks it.
        std::fs::write(&expected_path, &actual).unwrap();
        panic!(
            "{name}: rewrote {}; read the diff, then run again without MCPWIRE_UPDATE_GOLDEN",
            expected_path.display()
        );
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with MCPWIRE_UPDATE_GOLDEN=1",
            expected_path.display()
        )
    });
    assert_eq!(actual, expected, "{name} differs from {name}.expected");
}

#[test]
fn claude_desktop() {
    check("claude_desktop_config.json");
}

#[test]
fn claude_code() {
    check("claude_code.mcp.json");
}

#[test]
fn cursor() {
    check("cursor_mcp.json");
}

#[test]
fn windsurf() {
    check("windsurf_mcp_config.json");
}

#[test]
fn vscode() {
    check("vscode_mcp.json");
}

#[test]
fn gemini_cli() {
    check("gemini_settings.json");
}

#[test]
fn codex() {
    check("codex_config.toml");
}

#[test]
fn bare_map() {
    check("bare.json");
}

/// The same servers read from TOML and from JSON normalize to equal entries
/// (apart from where they came from).
#[test]
fn toml_and_json_spellings_agree() {
    let toml = r#"
[mcp_servers.s]
command = "run"
args = ["a"]
tool_timeout_sec = 1.5
enabled_tools = ["x"]
[mcp_servers.s.env]
K = "v"
"#;
    let json = r#"{"mcpServers": {"s": {"command": "run", "args": ["a"], "timeout": 1500,
        "includeTools": ["x"], "env": {"K": "v"}}}}"#;
    let options = LoadOptions::new();
    let mut a = options
        .parse_str(toml, mcpwire_config::Format::Toml, "x")
        .unwrap();
    let mut b = options
        .parse_str(json, mcpwire_config::Format::Json, "x")
        .unwrap();
    let (a, b) = (a.servers.remove(0), b.servers.remove(0));
    assert_eq!(a.transport, b.transport);
    assert_eq!(a.policy, b.policy);
}
