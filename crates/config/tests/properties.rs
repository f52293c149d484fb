//! Properties: no input makes loading, resolving or printing panic; unknown
//! fields survive untouched; secrets never reach `Debug`.

use std::collections::HashMap;

use mcpwire_config::{Format, LoadOptions, Resolver, UnsetVariable};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Keys the normalizer knows, plus a few it does not, so that generated
/// entries reach every branch.
const KEYS: &[&str] = &[
    "type",
    "transport",
    "command",
    "args",
    "env",
    "environment",
    "envFile",
    "env_file",
    "cwd",
    "env_vars",
    "url",
    "httpUrl",
    "serverUrl",
    "headers",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
    "bearer_token",
    "enabled",
    "disabled",
    "required",
    "trust",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "timeout",
    "includeTools",
    "enabled_tools",
    "excludeTools",
    "disabled_tools",
    "disabledTools",
    "description",
    "name",
    "mcpServers",
    "servers",
    "mcp_servers",
    "inputs",
    "id",
    "x",
    "",
];

const WORDS: &[&str] = &[
    "stdio",
    "http",
    "sse",
    "ws",
    "local",
    "remote",
    "streamableHttp",
    "https://h/mcp",
    "ws://h",
    "npx",
    "-y @a/b",
    "${X}",
    "${X:-d}",
    "${env:Y}",
    "${input:k}",
    "${",
    "${}",
    "${workspaceFolder}",
    "a b",
    "",
    "é€",
    "\u{0}",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(WORDS).prop_map(|w| json!(w)),
        "[a-zA-Z0-9 ${}:_-]{0,12}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..8).prop_map(|pairs| {
                Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

/// Loads `text`, and when it loads, resolves every server under both a
/// strict and a lenient policy and prints everything: none of it may panic.
fn exercise(text: &str, format: Format) {
    let env: HashMap<String, String> = [("X".to_owned(), "1".to_owned())].into();
    match LoadOptions::new()
        .skip_invalid(true)
        .parse_str(text, format, "p")
    {
        Ok(config) => {
            for w in &config.warnings {
                let _ = w.to_string();
            }
            for server in &config.servers {
                let _ = format!("{server:?} {:?}", server.redacted());
                for unset in [
                    UnsetVariable::Error,
                    UnsetVariable::Keep,
                    UnsetVariable::Empty,
                ] {
                    match Resolver::new(&env).unset(unset).resolve(server) {
                        Ok(resolved) => {
                            let _ = format!("{resolved:?}");
                        }
                        Err(e) => {
                            let _ = e.to_string();
                        }
                    }
                }
            }
        }
        Err(e) => {
            let _ = format!("{e} {e:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        exercise(&text, Format::Json);
        exercise(&text, Format::Toml);
    }

    #[test]
    fn json_like_text_never_panics(text in r#"[{}\[\]",:a-z0-9 /*\n${}.=-]{0,80}"#) {
        exercise(&text, Format::Json);
        exercise(&text, Format::Toml);
    }

    #[test]
    fn arbitrary_entries_never_panic(entries in prop::collection::vec((prop::sample::select(KEYS), value()), 0..4), bare in any::<bool>()) {
        let servers: Map<String, Value> = entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let doc = if bare { Value::Object(servers) } else { json!({ "mcpServers": servers }) };
        exercise(&doc.to_string(), Format::Json);
    }

    #[test]
    fn damaged_golden_files_never_panic(
        which in 0usize..8,
        cuts in prop::collection::vec((any::<prop::sample::Index>(), 0usize..6, "[\\[\\]{}\",=\n a]{0,3}"), 1..4),
    ) {
        let names = [
            "claude_desktop_config.json", "claude_code.mcp.json", "cursor_mcp.json",
            "windsurf_mcp_config.json", "vscode_mcp.json", "gemini_settings.json",
            "codex_config.toml", "bare.json",
        ];
        let name = names[which];
        let mut text = fixture(name);
        for (at, len, insert) in cuts {
            let mut start = at.index(text.len() + 1);
            while !text.is_char_boundary(start) { start -= 1; }
            let mut end = (start + len).min(text.len());
            while !text.is_char_boundary(end) { end -= 1; }
            text.replace_range(start..end.max(start), &insert);
        }
        exercise(&text, Format::from_path(std::path::Path::new(name)));
    }

    /// Whatever unknown fields an entry carries come back in `extra`, equal.
    #[test]
    fn extra_round_trips(extra in prop::collection::btree_map("[a-zA-Z][a-zA-Z0-9_]{0,10}", value(), 0..6)) {
        // The entry fields are the keys before "name" in KEYS.
        let known = |k: &str| KEYS.iter().take_while(|x| **x != "name").any(|x| *x == k);
        let extra: Map<String, Value> = extra.into_iter().filter(|(k, _)| !known(k)).collect();
        let mut entry = extra.clone();
        entry.insert("command".into(), json!("run"));
        let text = json!({ "mcpServers": { "s": entry } }).to_string();
        let config = LoadOptions::new().parse_str(&text, Format::Json, "p").unwrap();
        prop_assert_eq!(&config.servers[0].extra, &extra);
    }

    /// A secret in a credential header, an environment value or a
    /// `--token` argument never shows in `Debug`, before or after resolving.
    #[test]
    fn secrets_never_reach_debug(secret in "[A-Za-z0-9]{12,24}") {
        let secret = format!("S3CR{secret}");
        let text = json!({ "mcpServers": {
            "h": { "type": "http", "url": format!("https://u:{secret}@h/mcp?api_key={secret}"),
                   "headers": { "Authorization": format!("Bearer {secret}"), "X-Api-Key": secret } },
            "s": { "command": "run", "args": ["--token", secret, format!("--secret={secret}")],
                   "env": { "ANY": secret } },
        }}).to_string();
        let config = LoadOptions::new().parse_str(&text, Format::Json, "p").unwrap();
        let env: HashMap<String, String> = HashMap::new();
        for server in &config.servers {
            let resolved = Resolver::new(&env).resolve(server).unwrap();
            let shown = format!("{server:?} {:?} {resolved:?} {config:?}", server.redacted());
            prop_assert!(!shown.contains(&secret), "{}", shown);
        }
    }
}
