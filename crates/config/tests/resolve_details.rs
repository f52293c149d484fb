//! Details of resolving that the other tests leave open: every kind of
//! environment gives its values, `${VAR:-default}` takes the default only
//! for an empty or unset variable, the path separator variables, and what
//! each resolved type shows in `Debug` (its shape, never a secret).

use std::collections::{BTreeMap, HashMap};

use mcpwire_config::{
    Config, Environment, Format, LoadOptions, ResolvedServer, ResolvedTransport, Resolver,
    StandardVariables,
};
use serde_json::json;

fn load(entry: serde_json::Value) -> Config {
    LoadOptions::new()
        .parse_str(
            &json!({ "mcpServers": { "s": entry } }).to_string(),
            Format::Json,
            "/etc/mcp/cfg.json",
        )
        .unwrap()
}

fn args(server: &ResolvedServer) -> Vec<String> {
    match &server.transport {
        ResolvedTransport::Stdio(s) => s.args.clone(),
        other => panic!("{other:?}"),
    }
}

/// A map of either kind, and a reference to one, is an environment.
#[test]
fn every_kind_of_environment_gives_its_values() {
    let config = load(json!({ "command": "c", "args": ["${KEY}"] }));
    let btree: BTreeMap<String, String> = [("KEY".to_owned(), "from-btree".to_owned())].into();
    let hash: HashMap<String, String> = [("KEY".to_owned(), "from-hash".to_owned())].into();
    let by_ref: &BTreeMap<String, String> = &btree;
    assert_eq!(btree.var("KEY").as_deref(), Some("from-btree"));
    assert_eq!(btree.var("OTHER"), None);
    assert_eq!(by_ref.var("KEY").as_deref(), Some("from-btree"));
    let hash_ref: &HashMap<String, String> = &hash;
    assert_eq!(hash_ref.var("OTHER"), None);
    for (env, want) in [
        (&btree as &dyn Environment, "from-btree"),
        (&by_ref as &dyn Environment, "from-btree"),
        (&hash as &dyn Environment, "from-hash"),
    ] {
        let server = Resolver::new(env).resolve(&config.servers[0]).unwrap();
        assert_eq!(args(&server), [want]);
    }
}

/// `${VAR:-default}`: the variable's value when it has one, the default
/// when it is empty or unset.
#[test]
fn a_default_replaces_only_an_empty_or_unset_variable() {
    let config = load(json!({ "command": "c", "args": ["${MODE:-slow}"] }));
    let resolve = |pairs: &[(&str, &str)]| {
        let env: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        args(&Resolver::new(&env).resolve(&config.servers[0]).unwrap())
    };
    assert_eq!(resolve(&[("MODE", "fast")]), ["fast"]);
    assert_eq!(resolve(&[("MODE", "")]), ["slow"]);
    assert_eq!(resolve(&[]), ["slow"]);
}

#[test]
fn the_path_separator_has_two_names() {
    let config = load(json!({ "command": "c", "args": ["a${pathSeparator}b${/}c"] }));
    let env: HashMap<String, String> = HashMap::new();
    let vars = StandardVariables::new();
    let server = Resolver::new(&env)
        .variables(&vars)
        .resolve(&config.servers[0])
        .unwrap();
    let sep = std::path::MAIN_SEPARATOR;
    assert_eq!(args(&server), [format!("a{sep}b{sep}c")]);
}

/// `Debug` shows what a server is and where it goes; a variable's value,
/// a header's credential and an input's answer never show.
#[test]
fn debug_shows_the_shape_and_hides_the_secrets() {
    let env: HashMap<String, String> = [("TOKEN".to_owned(), "tok-9f2c".to_owned())].into();
    let vars = StandardVariables::new()
        .user_home("/home/me")
        .input("api-key", "in-7d1e");
    assert!(format!("{vars:?}").contains("\"api-key\""), "{vars:?}");
    assert!(format!("{vars:?}").contains("/home/me"), "{vars:?}");
    assert!(!format!("{vars:?}").contains("in-7d1e"), "{vars:?}");
    let resolver = Resolver::new(&env).variables(&vars);
    let shown = format!("{resolver:?}");
    assert!(shown.starts_with("Resolver {"), "{shown}");
    assert!(shown.contains("unset: Error"), "{shown}");

    let config = load(json!({
        "command": "server-bin",
        "args": ["--verbose"],
        "env": { "API_KEY": "${TOKEN}", "OTHER": "${input:api-key}" },
        "description": "the test server",
    }));
    let server = resolver.resolve(&config.servers[0]).unwrap();
    let shown = format!("{server:?}");
    for part in [
        "ResolvedServer {",
        "name: \"s\"",
        "ResolvedStdio {",
        "\"server-bin\"",
        "\"--verbose\"",
        "\"API_KEY\"",
        "the test server",
    ] {
        assert!(shown.contains(part), "{part} in {shown}");
    }
    assert!(!shown.contains("tok-9f2c"), "{shown}");
    assert!(!shown.contains("in-7d1e"), "{shown}");

    let config = load(json!({
        "url": "https://example.com/mcp",
        "headers": { "Authorization": "Bearer ${TOKEN}", "X-Trace": "on" },
    }));
    let server = resolver.resolve(&config.servers[0]).unwrap();
    let shown = format!("{server:?}");
    for part in [
        "ResolvedRemote {",
        "example.com",
        "\"Authorization\"",
        "\"X-Trace\"",
    ] {
        assert!(shown.contains(part), "{part} in {shown}");
    }
    assert!(!shown.contains("tok-9f2c"), "{shown}");
}
