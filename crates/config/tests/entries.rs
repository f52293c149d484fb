//! Every alias, every inference, every warning and error of reading one
//! server entry.

use std::time::Duration;

use mcpwire_config::{
    Config, EntryProblem, Format, HttpMode, LoadError, LoadOptions, NameError, Shape, Transport,
    TransportKind, WarningKind,
};
use serde_json::json;

fn parse(text: &str) -> Result<Config, LoadError> {
    LoadOptions::new().parse_str(text, Format::Json, "test.json")
}

/// `entry` as the only server, named "s".
fn one(entry: serde_json::Value) -> Config {
    let config = parse(&json!({ "mcpServers": { "s": entry } }).to_string())
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
    assert_eq!(config.servers.len(), 1);
    config
}

fn kinds(config: &Config) -> Vec<WarningKind> {
    config.warnings.iter().map(|w| w.kind.clone()).collect()
}

fn entry_error(entry: serde_json::Value) -> mcpwire_config::EntryError {
    match parse(&json!({ "mcpServers": { "s": entry } }).to_string()) {
        Err(LoadError::Entry(e)) => *e,
        other => panic!("{entry}: expected an entry error, got {other:?}"),
    }
}

fn mode(config: &Config) -> Option<HttpMode> {
    match &config.servers[0].transport {
        Transport::Http { mode, .. } => Some(*mode),
        _ => None,
    }
}

#[test]
fn every_type_alias_through_type_and_transport() {
    let cases: &[(&str, TransportKind, Option<HttpMode>)] = &[
        ("stdio", TransportKind::Stdio, None),
        ("local", TransportKind::Stdio, None),
        ("STDIO", TransportKind::Stdio, None),
        ("http", TransportKind::Http, Some(HttpMode::Streamable)),
        (
            "streamable-http",
            TransportKind::Http,
            Some(HttpMode::Streamable),
        ),
        (
            "streamable_http",
            TransportKind::Http,
            Some(HttpMode::Streamable),
        ),
        (
            "streamableHttp",
            TransportKind::Http,
            Some(HttpMode::Streamable),
        ),
        (
            "streamable",
            TransportKind::Http,
            Some(HttpMode::Streamable),
        ),
        ("sse", TransportKind::Http, Some(HttpMode::Sse)),
        ("http+sse", TransportKind::Http, Some(HttpMode::Sse)),
        ("remote", TransportKind::Http, Some(HttpMode::Auto)),
        ("ws", TransportKind::WebSocket, None),
        ("websocket", TransportKind::WebSocket, None),
    ];
    for &(alias, kind, http_mode) in cases {
        for key in ["type", "transport"] {
            let mut entry = json!({ "command": "run", "url": "https://h/mcp" });
            entry[key] = json!(alias);
            let config = one(entry);
            assert_eq!(config.servers[0].transport.kind(), kind, "{key}={alias}");
            assert_eq!(mode(&config), http_mode, "{key}={alias}");
            // The fields of the other transport are kept, and said to be ignored.
            assert_eq!(kinds(&config), [WarningKind::IgnoredField], "{key}={alias}");
            let ignored = if kind == TransportKind::Stdio {
                "url"
            } else {
                "command"
            };
            assert!(config.servers[0].extra.contains_key(ignored));
        }
    }
}

#[test]
fn transport_is_inferred_when_no_type_is_given() {
    let config = one(json!({ "command": "run" }));
    assert_eq!(config.servers[0].transport.kind(), TransportKind::Stdio);
    assert!(config.warnings.is_empty());

    let config = one(json!({ "httpUrl": "https://h/mcp" }));
    assert_eq!(mode(&config), Some(HttpMode::Streamable));
    assert!(config.warnings.is_empty());

    for key in ["url", "serverUrl"] {
        let config = one(json!({ key: "https://h/mcp" }));
        assert_eq!(mode(&config), Some(HttpMode::Auto), "{key}");
        assert_eq!(kinds(&config), [WarningKind::UrlWithoutType]);
        assert_eq!(config.warnings[0].field.as_deref(), Some(key));
    }

    for url in ["ws://h/mcp", "WSS://h/mcp"] {
        let config = one(json!({ "url": url }));
        assert_eq!(config.servers[0].transport.kind(), TransportKind::WebSocket);
        assert!(config.warnings.is_empty());
    }

    // Codex: a url is Streamable HTTP, and there is no type to add.
    let config = LoadOptions::new()
        .parse_str(
            "[mcp_servers.s]\nurl = \"https://h/mcp\"\n",
            Format::Toml,
            "config.toml",
        )
        .unwrap();
    assert_eq!(config.sources[0].shape, Shape::McpServersSnakeCase);
    assert_eq!(mode(&config), Some(HttpMode::Streamable));
    assert!(config.warnings.is_empty());
}

#[test]
fn an_unknown_type_warns_and_falls_back_to_inference() {
    let config = one(json!({ "type": "carrier-pigeon", "url": "https://h/mcp" }));
    assert_eq!(
        kinds(&config),
        [WarningKind::UnknownType {
            value: "carrier-pigeon".into()
        }]
    );
    assert_eq!(mode(&config), Some(HttpMode::Auto));
}

#[test]
fn stdio_fields_and_their_aliases() {
    let config = one(json!({
        "command": ["uv", "run", "server.py"],
        "args": ["--verbose"],
        "environment": { "KEEP": "1", "PORT": 8080, "DEBUG": true, "DROP": null },
        "env_file": ".env",
        "cwd": "/srv",
        "env_vars": ["HOME", { "name": "TOKEN", "source": "keyring" }],
    }));
    let Transport::Stdio(stdio) = &config.servers[0].transport else {
        panic!()
    };
    assert_eq!(stdio.command, "uv");
    assert_eq!(stdio.args, ["run", "server.py", "--verbose"]);
    assert_eq!(stdio.env["KEEP"].as_deref(), Some("1"));
    assert_eq!(stdio.env["PORT"].as_deref(), Some("8080"));
    assert_eq!(stdio.env["DEBUG"].as_deref(), Some("true"));
    assert_eq!(stdio.env["DROP"], None);
    assert_eq!(stdio.env_file.as_deref(), Some(".env"));
    assert_eq!(stdio.cwd.as_deref(), Some("/srv"));
    assert_eq!(stdio.forward_env, ["HOME", "TOKEN"]);
    assert!(config.warnings.is_empty());
    assert!(config.servers[0].extra.is_empty());
}

#[test]
fn remote_fields_and_their_aliases() {
    let config = one(json!({
        "type": "http",
        "url": "https://h/mcp",
        "http_headers": { "X-A": "1", "X-N": 2 },
        "env_http_headers": { "X-Org": "ORG" },
        "bearer_token_env_var": "TOKEN",
    }));
    let Transport::Http { remote, .. } = &config.servers[0].transport else {
        panic!()
    };
    assert_eq!(remote.headers["X-A"], "1");
    assert_eq!(remote.headers["X-N"], "2");
    assert_eq!(remote.env_headers["X-Org"], "ORG");
    assert_eq!(remote.bearer_token_env_var.as_deref(), Some("TOKEN"));
    assert!(config.warnings.is_empty());
}

#[test]
fn policy_fields_and_their_aliases() {
    let config = one(json!({
        "command": "run",
        "enabled": true,
        "disabled": true,
        "required": true,
        "trust": true,
        "startup_timeout_sec": 12.5,
        "tool_timeout_sec": 30,
        "includeTools": ["a"],
        "enabled_tools": ["b"],
        "excludeTools": ["c"],
        "disabled_tools": ["d"],
        "disabledTools": ["e"],
        "description": "does things",
    }));
    let s = &config.servers[0];
    let p = &s.policy;
    assert!(!p.enabled, "disabled wins over enabled");
    assert!(p.required && p.trust);
    assert_eq!(p.startup_timeout, Some(Duration::from_millis(12_500)));
    assert_eq!(p.request_timeout, Some(Duration::from_secs(30)));
    assert_eq!(
        p.include_tools.as_deref(),
        Some(&["a".to_owned(), "b".to_owned()][..])
    );
    assert_eq!(p.exclude_tools, ["c", "d", "e"]);
    assert!(s.allows_tool("a") && s.allows_tool("b"));
    assert!(!s.allows_tool("c") && !s.allows_tool("z"));
    assert_eq!(s.description.as_deref(), Some("does things"));

    // Milliseconds, by the field's name.
    let config = one(json!({ "command": "run", "timeout": 2500, "startup_timeout_ms": 4000 }));
    let p = &config.servers[0].policy;
    assert_eq!(p.request_timeout, Some(Duration::from_millis(2500)));
    assert_eq!(p.startup_timeout, Some(Duration::from_secs(4)));
    assert_eq!(
        kinds(&config),
        [WarningKind::DeprecatedField {
            replacement: "startup_timeout_sec"
        }]
    );
}

#[test]
fn every_warning_names_its_server_and_field() {
    let config = one(json!({ "command": "npx", "args": ["-y @pkg/server", "ok"] }));
    assert_eq!(kinds(&config), [WarningKind::ArgWithSpaces { index: 0 }]);
    let w = &config.warnings[0];
    assert_eq!(w.server.as_deref(), Some("s"));
    assert_eq!(w.origin.to_str(), Some("test.json"));
    assert!(w.position.is_some());
    assert!(w.to_string().contains("args[0]"), "{w}");

    let config = one(json!({ "command": "npx -y @pkg/server" }));
    assert_eq!(kinds(&config), [WarningKind::CommandWithSpaces]);
    // A program path with a space is not a command line.
    assert!(
        one(json!({ "command": "C:\\Program Files\\node.exe" }))
            .warnings
            .is_empty()
    );

    let config = one(json!({ "command": "run", "timeout": 30 }));
    assert_eq!(
        kinds(&config),
        [WarningKind::SubSecondTimeout {
            timeout: Duration::from_millis(30)
        }]
    );
    assert_eq!(config.warnings[0].field.as_deref(), Some("timeout"));

    let config = one(json!({ "type": "http", "url": "https://h", "bearer_token": "abc" }));
    assert_eq!(
        kinds(&config),
        [WarningKind::DeprecatedField {
            replacement: "bearer_token_env_var"
        }]
    );
    let Transport::Http { remote, .. } = &config.servers[0].transport else {
        panic!()
    };
    assert_eq!(remote.headers["Authorization"], "Bearer abc");
}

#[test]
fn conflicting_fields_keep_the_first_and_warn() {
    let cases = [
        (
            json!({ "type": "stdio", "transport": "sse", "command": "x" }),
            "type",
            "transport",
        ),
        (
            json!({ "httpUrl": "https://a", "url": "https://b" }),
            "httpUrl",
            "url",
        ),
        (
            json!({ "url": "https://a", "serverUrl": "https://b", "type": "http" }),
            "url",
            "serverUrl",
        ),
        (
            json!({ "command": "x", "env": {}, "environment": {} }),
            "env",
            "environment",
        ),
        (
            json!({ "command": "x", "url": "https://a" }),
            "command",
            "url",
        ),
        (
            json!({ "command": "x", "startup_timeout_sec": 5, "startup_timeout_ms": 9000 }),
            "startup_timeout_sec",
            "startup_timeout_ms",
        ),
        (
            json!({ "command": "x", "tool_timeout_sec": 5, "timeout": 9000 }),
            "tool_timeout_sec",
            "timeout",
        ),
        (
            json!({ "type": "http", "url": "https://a", "headers": {}, "http_headers": {} }),
            "headers",
            "http_headers",
        ),
    ];
    for (entry, used, ignored) in cases {
        let config = one(entry.clone());
        assert!(
            kinds(&config).contains(&WarningKind::ConflictingFields { used, ignored }),
            "{entry}: {:?}",
            config.warnings
        );
    }
    let config = one(json!({ "httpUrl": "https://a", "url": "https://b" }));
    let Transport::Http { remote, .. } = &config.servers[0].transport else {
        panic!()
    };
    assert_eq!(remote.url, "https://a");
}

#[test]
fn invalid_server_names_are_reported_not_refused() {
    let config =
        parse(r#"{"mcpServers": {"my server": {"command": "x"}, "a__b": {"command": "y"}}}"#)
            .unwrap();
    assert_eq!(config.servers.len(), 2);
    assert_eq!(
        kinds(&config),
        [
            WarningKind::InvalidServerName(NameError::InvalidCharacter { found: ' ' }),
            WarningKind::InvalidServerName(NameError::SeparatorClash),
        ]
    );
}

#[test]
fn unknown_fields_are_kept_verbatim() {
    let extra = json!({
        "autoApprove": ["read"],
        "alwaysAllow": [],
        "oauth": { "clientId": "x", "scopes": ["a", "b"] },
        "nested": { "deep": [1, 2.5, null, true, { "k": "v" }] },
    });
    let mut entry = extra.clone();
    entry["command"] = json!("run");
    let config = one(entry);
    assert_eq!(
        serde_json::Value::Object(config.servers[0].extra.clone()),
        extra
    );
}

#[test]
fn entry_errors_name_the_file_server_field_and_place() {
    let wrong = [
        (json!({ "command": 42 }), "command"),
        (json!({ "command": [] }), "command"),
        (json!({ "command": ["ok", 1] }), "command"),
        (json!({ "command": "x", "args": "--flag" }), "args"),
        (json!({ "command": "x", "args": [1] }), "args"),
        (json!({ "command": "x", "env": ["A=1"] }), "env"),
        (json!({ "command": "x", "env": { "A": [] } }), "env.A"),
        (json!({ "command": "x", "cwd": 1 }), "cwd"),
        (json!({ "command": "x", "envFile": false }), "envFile"),
        (json!({ "command": "x", "env_vars": [1] }), "env_vars"),
        (json!({ "command": "x", "enabled": "yes" }), "enabled"),
        (
            json!({ "command": "x", "includeTools": "a" }),
            "includeTools",
        ),
        (json!({ "command": "x", "timeout": "10s" }), "timeout"),
        (json!({ "command": "x", "description": 1 }), "description"),
        (json!({ "type": 3, "command": "x" }), "type"),
        (json!({ "url": 1 }), "url"),
        (
            json!({ "type": "http", "url": "https://h", "headers": { "A": {} } }),
            "headers.A",
        ),
        (
            json!({ "type": "http", "url": "https://h", "bearer_token_env_var": 1 }),
            "bearer_token_env_var",
        ),
    ];
    for (entry, field) in wrong {
        let e = entry_error(entry.clone());
        assert!(
            matches!(e.problem, EntryProblem::WrongType { .. }),
            "{entry}: {e}"
        );
        assert_eq!(e.field.as_deref(), Some(field), "{entry}");
        assert_eq!(e.server, "s");
        assert_eq!(e.origin.to_str(), Some("test.json"));
        assert!(e.position.is_some());
        let message = e.to_string();
        assert!(
            message.starts_with("test.json:1:") && message.contains(field),
            "{message}"
        );
    }

    let e = entry_error(json!("npx"));
    assert_eq!(e.problem, EntryProblem::NotAnObject { found: "a string" });
    let e = entry_error(json!({ "args": ["x"] }));
    assert_eq!(e.problem, EntryProblem::NoTransport);
    let e = entry_error(json!({ "type": "stdio", "url": "https://h" }));
    assert_eq!(e.problem, EntryProblem::MissingField { field: "command" });
    let e = entry_error(json!({ "type": "sse", "command": "x" }));
    assert_eq!(e.problem, EntryProblem::MissingField { field: "url" });
    for timeout in [json!(-1), json!(1e300)] {
        let e = entry_error(json!({ "command": "x", "tool_timeout_sec": timeout }));
        assert_eq!(e.problem, EntryProblem::InvalidTimeout);
        assert_eq!(e.field.as_deref(), Some("tool_timeout_sec"));
    }
}

#[test]
fn file_level_errors() {
    let text = "{\n  \"mcpServers\": {\n    \"a\": { \"command\": }\n  }\n}";
    let Err(LoadError::Syntax {
        position: Some(p),
        format: Format::Json,
        ref source,
        ..
    }) = parse(text)
    else {
        panic!("expected a syntax error")
    };
    assert_eq!(p.line, 3);
    assert!(!source.to_string().is_empty());

    let toml =
        LoadOptions::new().parse_str("[mcp_servers.a]\ncommand = \n", Format::Toml, "c.toml");
    let Err(LoadError::Syntax {
        position: Some(p),
        format: Format::Toml,
        ..
    }) = toml
    else {
        panic!("expected a syntax error, got {toml:?}")
    };
    assert_eq!(p.line, 2);

    for text in [
        "{}",
        "[]",
        "",
        "// only a comment",
        r#"{"theme": "dark", "other": {"x": 1}}"#,
        "42",
    ] {
        let e = parse(text).expect_err(text);
        assert!(matches!(e, LoadError::NoServers { .. }), "{text}: {e:?}");
        assert!(
            e.to_string().starts_with("test.json: no MCP servers"),
            "{e}"
        );
    }
    // A file with an empty server table is fine: it has no servers.
    assert!(parse(r#"{"mcpServers": {}}"#).unwrap().servers.is_empty());

    let e = parse(r#"{"mcpServers": [{"command": "x"}]}"#).unwrap_err();
    let LoadError::ServerTable { key, found, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((key.as_str(), *found), ("mcpServers", "an array"));
}

#[test]
fn a_server_defined_twice_in_one_file_is_not_silently_dropped() {
    let text =
        "{\"mcpServers\": {\n \"a\": {\"command\": \"x\"},\n \"a\": {\"command\": \"y\"}\n}}";
    let e = parse(text).unwrap_err();
    let LoadError::DuplicateServer {
        name,
        first_position,
        second_position,
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(name, "a");
    assert_eq!(first_position.map(|p| p.line), Some(2));
    assert_eq!(second_position.map(|p| p.line), Some(3));
    assert!(e.to_string().contains("test.json:2:2"), "{e}");
}

#[test]
fn every_shape_is_found_and_extra_tables_are_reported() {
    let shapes = [
        (
            r#"{"mcpServers": {"a": {"command": "x"}}}"#,
            Shape::McpServers,
        ),
        (
            r#"{"servers": {"a": {"command": "x"}}, "inputs": []}"#,
            Shape::Servers,
        ),
        (
            r#"{"mcp_servers": {"a": {"command": "x"}}}"#,
            Shape::McpServersSnakeCase,
        ),
        (r#"{"a": {"command": "x"}}"#, Shape::Bare),
    ];
    for (text, shape) in shapes {
        let config = parse(text).unwrap();
        assert_eq!(config.sources[0].shape, shape);
        assert_eq!(config.servers[0].name, "a");
    }
    let config =
        parse(r#"{"servers": {"b": {"command": "y"}}, "mcpServers": {"a": {"command": "x"}}}"#)
            .unwrap();
    assert_eq!(config.sources[0].shape, Shape::McpServers);
    assert_eq!(config.servers.len(), 1);
    assert_eq!(
        kinds(&config),
        [WarningKind::IgnoredServerTable { used: "mcpServers" }]
    );
    assert_eq!(config.warnings[0].field.as_deref(), Some("servers"));
    // A bare map with one broken entry is still a bare map: the entry fails.
    let e = parse(r#"{"a": {"command": "x"}, "b": {"args": []}}"#).unwrap_err();
    assert!(matches!(e, LoadError::Entry(ref e) if e.problem == EntryProblem::NoTransport));
}

#[test]
fn skip_invalid_leaves_out_the_broken_server_and_says_why() {
    let text = r#"{"mcpServers": {"good": {"command": "x"}, "bad": {"command": 1}, "also": {"url": "ws://h"}}}"#;
    let config = LoadOptions::new()
        .skip_invalid(true)
        .parse_str(text, Format::Json, "f.json")
        .unwrap();
    let names: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good", "also"]);
    let [w] = &config.warnings[..] else {
        panic!("{:?}", config.warnings)
    };
    let WarningKind::SkippedServer(e) = &w.kind else {
        panic!("{w:?}")
    };
    assert_eq!(
        (e.server.as_str(), e.field.as_deref()),
        ("bad", Some("command"))
    );
    assert_eq!(w.server.as_deref(), Some("bad"));
}

#[test]
fn vscode_inputs_are_read() {
    let text = r#"{"inputs": [
        {"type": "promptString", "id": "key", "description": "API key", "password": true, "default": "d"},
        {"type": "pickString", "id": "region", "options": ["eu", "us"], "default": "eu"},
        {"type": "promptString", "description": "no id: cannot be referred to"}
    ], "servers": {"a": {"command": "x"}}}"#;
    let config = parse(text).unwrap();
    assert_eq!(config.inputs.len(), 2);
    assert_eq!(config.inputs[0].id, "key");
    assert!(config.inputs[0].password);
    // A password input's default is hidden from Debug.
    assert!(!format!("{:?}", config.inputs[0]).contains("\"d\""));
    assert_eq!(config.inputs[1].options, ["eu", "us"]);
    assert_eq!(config.inputs[1].kind, "pickString");
}
