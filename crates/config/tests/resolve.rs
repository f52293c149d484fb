//! Resolving entries: variable expansion with and without defaults, the
//! unset policies, env files, forwarded variables, header variables, and
//! the unsupported-transport check.

use std::collections::HashMap;
use std::path::Path;

use mcpwire_config::{
    Config, Format, LoadOptions, ResolveError, ResolvedServer, ResolvedTransport, Resolver,
    StandardVariables, TransportKind, UnsetVariable, Variable, WarningKind,
};
use serde_json::json;

fn load(entry: serde_json::Value, origin: &str) -> Config {
    LoadOptions::new()
        .parse_str(
            &json!({ "mcpServers": { "s": entry } }).to_string(),
            Format::Json,
            origin,
        )
        .unwrap()
}

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn stdio(server: &ResolvedServer) -> &mcpwire_config::ResolvedStdio {
    match &server.transport {
        ResolvedTransport::Stdio(s) => s,
        other => panic!("{other:?}"),
    }
}

fn remote(server: &ResolvedServer) -> &mcpwire_config::ResolvedRemote {
    match &server.transport {
        ResolvedTransport::Http { remote, .. } | ResolvedTransport::WebSocket(remote) => remote,
        other => panic!("{other:?}"),
    }
}

#[test]
fn variables_are_expanded_in_command_args_env_url_and_headers_only() {
    let config = load(
        json!({
            "command": "${BIN}/server",
            "args": ["--root", "${ROOT:-/data}", "${env:MODE}"],
            "env": { "KEY": "${KEY}", "LITERAL": "no vars", "GONE": null },
            "cwd": "${ROOT:-/data}/work",
            "description": "${KEY} is not expanded here",
            "includeTools": ["${KEY}"],
            "custom": "${KEY}",
        }),
        "cfg.json",
    );
    let e = env(&[("BIN", "/opt"), ("KEY", "k1"), ("MODE", "fast")]);
    let server = Resolver::new(&e).resolve(&config.servers[0]).unwrap();
    let s = stdio(&server);
    assert_eq!(s.command, "/opt/server");
    assert_eq!(s.args, ["--root", "/data", "fast"]);
    assert_eq!(s.env["KEY"].as_deref(), Some("k1"));
    assert_eq!(s.env["LITERAL"].as_deref(), Some("no vars"));
    assert_eq!(s.env["GONE"], None);
    assert_eq!(s.cwd.as_deref(), Some(Path::new("/data/work")));
    assert_eq!(
        server.description.as_deref(),
        Some("${KEY} is not expanded here")
    );
    assert_eq!(
        server.policy.include_tools.as_deref(),
        Some(&["${KEY}".to_owned()][..])
    );
    assert!(server.warnings.is_empty());

    let config = load(
        json!({
            "type": "http",
            "url": "https://${HOST:-example.com}/mcp",
            "headers": { "Authorization": "Bearer ${TOKEN}", "X-Static": "v" },
        }),
        "cfg.json",
    );
    let e = env(&[("TOKEN", "t0k")]);
    let server = Resolver::new(&e).resolve(&config.servers[0]).unwrap();
    let r = remote(&server);
    assert_eq!(r.url, "https://example.com/mcp");
    assert_eq!(r.headers["Authorization"], "Bearer t0k");
    assert_eq!(r.headers["X-Static"], "v");
}

#[test]
fn an_unset_variable_is_an_error_naming_file_server_field_and_variable() {
    let config = load(
        json!({ "type": "http", "url": "https://h/mcp", "headers": { "Authorization": "Bearer ${TOKEN}" } }),
        "dir/.mcp.json",
    );
    let e = env(&[]);
    let err = Resolver::new(&e).resolve(&config.servers[0]).unwrap_err();
    let ResolveError::UnsetVariable {
        origin,
        server,
        field,
        variable,
        position,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(origin, Path::new("dir/.mcp.json"));
    assert_eq!(server, "s");
    assert_eq!(field, "headers.Authorization");
    assert_eq!(variable, "TOKEN");
    assert!(position.is_some());
    let message = err.to_string();
    for part in [
        "dir/.mcp.json:1:",
        "\"s\"",
        "headers.Authorization",
        "\"TOKEN\"",
    ] {
        assert!(message.contains(part), "{part} in {message}");
    }

    // Each field names itself.
    for (entry, field) in [
        (json!({ "command": "${X}" }), "command"),
        (json!({ "command": "c", "args": ["a", "${X}"] }), "args[1]"),
        (json!({ "command": "c", "env": { "E": "${X}" } }), "env.E"),
        (json!({ "command": "c", "cwd": "${X}" }), "cwd"),
        (json!({ "command": "c", "envFile": "${X}" }), "envFile"),
        (json!({ "url": "${X}" }), "url"),
        (
            json!({ "url": "https://h", "env_http_headers": { "X-A": "X" } }),
            "env_http_headers.X-A",
        ),
        (
            json!({ "url": "https://h", "bearer_token_env_var": "X" }),
            "bearer_token_env_var",
        ),
    ] {
        let config = load(entry.clone(), "f.json");
        match Resolver::new(&e).resolve(&config.servers[0]) {
            Err(ResolveError::UnsetVariable {
                field: f, variable, ..
            }) => {
                assert_eq!((f.as_str(), variable.as_str()), (field, "X"), "{entry}");
            }
            other => panic!("{entry}: {other:?}"),
        }
    }
}

#[test]
fn lenient_policies_keep_or_empty_and_warn() {
    let config = load(
        json!({ "command": "c", "args": ["a${X}b"], "env": { "E": "${input:missing}" } }),
        "f.json",
    );
    let e = env(&[]);

    let kept = Resolver::new(&e)
        .unset(UnsetVariable::Keep)
        .resolve(&config.servers[0])
        .unwrap();
    assert_eq!(stdio(&kept).args, ["a${X}b"]);
    assert_eq!(stdio(&kept).env["E"].as_deref(), Some("${input:missing}"));
    let unset: Vec<_> = kept
        .warnings
        .iter()
        .map(|w| (w.field.clone().unwrap(), w.kind.clone()))
        .collect();
    assert_eq!(
        unset,
        [
            (
                "args[0]".to_owned(),
                WarningKind::UnsetVariable {
                    variable: "X".into()
                }
            ),
            (
                "env.E".to_owned(),
                WarningKind::UnsetVariable {
                    variable: "input:missing".into()
                }
            ),
        ]
    );

    let emptied = Resolver::new(&e)
        .unset(UnsetVariable::Empty)
        .resolve(&config.servers[0])
        .unwrap();
    assert_eq!(stdio(&emptied).args, ["ab"]);
    assert_eq!(stdio(&emptied).env["E"].as_deref(), Some(""));
    assert_eq!(emptied.warnings.len(), 2);

    // A header from an unset variable is left out rather than sent empty.
    let config = load(
        json!({ "url": "https://h", "bearer_token_env_var": "T", "env_http_headers": { "X-A": "A" } }),
        "f.json",
    );
    let server = Resolver::new(&e)
        .unset(UnsetVariable::Empty)
        .resolve(&config.servers[0])
        .unwrap();
    assert!(remote(&server).headers.is_empty());
    assert_eq!(server.warnings.len(), 2);
}

#[test]
fn malformed_references_are_left_with_a_warning() {
    let config = load(
        json!({ "command": "c", "args": ["${", "${not a var}"] }),
        "f.json",
    );
    let server = Resolver::new(&env(&[]))
        .resolve(&config.servers[0])
        .unwrap();
    assert_eq!(stdio(&server).args, ["${", "${not a var}"]);
    assert_eq!(server.warnings.len(), 2);
    assert!(
        server
            .warnings
            .iter()
            .all(|w| w.kind == WarningKind::MalformedVariable)
    );
}

#[test]
fn editor_variables_and_inputs_come_from_the_resolver() {
    let config = LoadOptions::new()
        .load_file(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vscode_mcp.json"))
        .unwrap();
    let perplexity = config.get("Perplexity").unwrap();
    let e = env(&[]);

    // Without a workspace folder (for its envFile) and an answer to
    // ${input:perplexity-key}: an error, at the first one met.
    let err = Resolver::new(&e).resolve(perplexity).unwrap_err();
    assert!(
        matches!(err, ResolveError::UnsetVariable { ref variable, .. } if variable == "workspaceFolder"),
        "{err:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".env"),
        "FROM_FILE=1\nPERPLEXITY_API_KEY=overridden\n",
    )
    .unwrap();
    let vars = StandardVariables::new()
        .workspace_folder(dir.path())
        .input("perplexity-key", "pk-123");
    let server = Resolver::new(&e)
        .variables(&vars)
        .resolve(perplexity)
        .unwrap();
    let s = stdio(&server);
    assert_eq!(s.env["FROM_FILE"].as_deref(), Some("1"));
    // `env` wins over the env file.
    assert_eq!(s.env["PERPLEXITY_API_KEY"].as_deref(), Some("pk-123"));
    // And Debug does not show the input's answer.
    assert!(!format!("{server:?}").contains("pk-123"));

    // A closure is a resolver too.
    let cursor = load(
        json!({ "command": "python", "args": ["${userHome}/s.py"] }),
        "f.json",
    );
    let home = |v: &Variable<'_>| {
        matches!(v, Variable::Predefined("userHome")).then(|| "/home/me".to_owned())
    };
    let server = Resolver::new(&e)
        .variables(&home)
        .resolve(&cursor.servers[0])
        .unwrap();
    assert_eq!(stdio(&server).args, ["/home/me/s.py"]);
}

#[test]
fn env_file_forwarding_and_env_layer_in_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("vars.env"), "A=file\nB=file\nC=file\n").unwrap();
    let origin = dir.path().join("mcp.json");
    let config = load(
        json!({ "command": "c", "envFile": "vars.env", "env_vars": ["B", "UNSET_ONE"], "env": { "C": "env" } }),
        origin.to_str().unwrap(),
    );
    let e = env(&[("B", "forwarded")]);
    let server = Resolver::new(&e).resolve(&config.servers[0]).unwrap();
    let s = stdio(&server);
    // The relative envFile is read next to the configuration file.
    assert_eq!(s.env["A"].as_deref(), Some("file"));
    assert_eq!(s.env["B"].as_deref(), Some("forwarded"));
    assert_eq!(s.env["C"].as_deref(), Some("env"));
    // A forwarded variable that is unset is simply not forwarded.
    assert!(!s.env.contains_key("UNSET_ONE"));

    let missing = load(
        json!({ "command": "c", "envFile": "nope.env" }),
        origin.to_str().unwrap(),
    );
    let err = Resolver::new(&e).resolve(&missing.servers[0]).unwrap_err();
    let ResolveError::EnvFile { path, source, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(path, &dir.path().join("nope.env"));
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn header_variables_and_bearer_tokens_become_headers() {
    let config = load(
        json!({ "url": "https://h", "env_http_headers": { "X-Org": "ORG" }, "bearer_token_env_var": "TOKEN" }),
        "f.json",
    );
    let e = env(&[("ORG", "acme"), ("TOKEN", "t0k")]);
    let server = Resolver::new(&e).resolve(&config.servers[0]).unwrap();
    let r = remote(&server);
    assert_eq!(r.headers["X-Org"], "acme");
    assert_eq!(r.headers["Authorization"], "Bearer t0k");
    let shown = format!("{server:?}");
    assert!(!shown.contains("t0k"), "{shown}");

    // An explicit Authorization header is not overwritten by the token.
    let config = load(
        json!({ "url": "https://h", "headers": { "authorization": "Basic x" }, "bearer_token_env_var": "TOKEN" }),
        "f.json",
    );
    let server = Resolver::new(&e).resolve(&config.servers[0]).unwrap();
    assert_eq!(remote(&server).headers.len(), 1);
    assert_eq!(remote(&server).headers["authorization"], "Basic x");
}

#[test]
fn websocket_parses_but_does_not_resolve_until_accepted() {
    let config = load(
        json!({ "type": "ws", "url": "wss://h/mcp", "headers": { "A": "${V}" } }),
        "f.json",
    );
    assert_eq!(config.servers[0].transport.kind(), TransportKind::WebSocket);
    let e = env(&[("V", "1")]);
    let err = Resolver::new(&e).resolve(&config.servers[0]).unwrap_err();
    let ResolveError::UnsupportedTransport { kind, server, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!((*kind, server.as_str()), (TransportKind::WebSocket, "s"));
    assert!(err.to_string().contains("websocket"), "{err}");

    // The switch a future `ws` feature flips.
    let server = Resolver::new(&e)
        .accept(TransportKind::WebSocket)
        .resolve(&config.servers[0])
        .unwrap();
    let ResolvedTransport::WebSocket(r) = &server.transport else {
        panic!()
    };
    assert_eq!(
        (r.url.as_str(), r.headers["A"].as_str()),
        ("wss://h/mcp", "1")
    );
}

#[test]
fn disabled_servers_still_resolve_and_keep_their_policy() {
    let config = load(
        json!({ "command": "c", "disabled": true, "required": true }),
        "f.json",
    );
    let server = Resolver::new(&env(&[]))
        .resolve(&config.servers[0])
        .unwrap();
    assert!(!server.policy.enabled && server.policy.required);
}
