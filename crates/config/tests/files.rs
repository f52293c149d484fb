//! Reading files, merging several, and where the clients keep theirs.

use std::path::{Path, PathBuf};

use mcpwire_config::{
    ClientApp, DiscoveryContext, Duplicates, Format, LoadError, LoadOptions, Os, Scope,
    WarningKind, load_file, well_known_paths,
};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn several_files_merge_in_order_and_a_duplicate_is_an_error_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let user = write(
        dir.path(),
        "user.json",
        r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "user"}}}"#,
    );
    let project = write(
        dir.path(),
        "config.toml",
        "[mcp_servers.b]\ncommand = \"project\"\n[mcp_servers.c]\ncommand = \"z\"\n",
    );

    let err = LoadOptions::new()
        .load_files([&user, &project])
        .unwrap_err();
    let LoadError::DuplicateServer {
        name,
        first,
        second,
        second_position,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((name.as_str(), first, second), ("b", &user, &project));
    assert_eq!(second_position.map(|p| p.line), Some(1));
    let message = err.to_string();
    assert!(
        message.contains("user.json") && message.contains("config.toml"),
        "{message}"
    );

    let config = LoadOptions::new()
        .duplicates(Duplicates::LaterWins)
        .load_files([&user, &project])
        .unwrap();
    let servers: Vec<_> = config
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.origin.clone()))
        .collect();
    assert_eq!(
        servers,
        [
            ("a", user.clone()),
            ("b", project.clone()),
            ("c", project.clone())
        ]
    );
    let Some(mcpwire_config::Transport::Stdio(b)) = config.get("b").map(|s| &s.transport) else {
        panic!()
    };
    assert_eq!(b.command, "project");
    let [w] = &config.warnings[..] else {
        panic!("{:?}", config.warnings)
    };
    assert_eq!(
        w.kind,
        WarningKind::ReplacedServer {
            replaced: user.clone()
        }
    );
    assert_eq!(w.server.as_deref(), Some("b"));
    assert_eq!(config.sources.len(), 2);
    assert_eq!(config.sources[1].format, Format::Toml);
}

#[test]
fn reading_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let err = load_file(&missing).unwrap_err();
    assert!(matches!(&err, LoadError::Read { path, .. } if path == &missing));
    assert!(std::error::Error::source(&err).is_some());

    let big = write(
        dir.path(),
        "big.json",
        &format!("{{\"mcpServers\": {{}}, \"pad\": \"{}\"}}", "x".repeat(100)),
    );
    let err = LoadOptions::new()
        .max_file_len(64)
        .load_file(&big)
        .unwrap_err();
    assert!(
        matches!(err, LoadError::TooLarge { limit: 64, .. }),
        "{err:?}"
    );
    assert!(LoadOptions::new().max_file_len(200).load_file(&big).is_ok());

    let binary = dir.path().join("bin.json");
    std::fs::write(
        &binary,
        b"{\"mcpServers\": {\"a\": {\"command\": \"\xff\"}}}",
    )
    .unwrap();
    assert!(matches!(load_file(&binary), Err(LoadError::NotUtf8 { .. })));

    // A byte-order mark is accepted.
    let bom = write(
        dir.path(),
        "bom.json",
        "\u{feff}{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}",
    );
    assert_eq!(load_file(&bom).unwrap().servers.len(), 1);
}

#[test]
fn well_known_paths_per_os() {
    let paths = |cx: DiscoveryContext| {
        well_known_paths(&cx)
            .into_iter()
            .map(|p| (p.client, p.scope, p.path, p.format))
            .collect::<Vec<_>>()
    };
    let find = |list: &[(ClientApp, Scope, PathBuf, Format)], client, scope| {
        list.iter()
            .find(|(c, s, _, _)| *c == client && *s == scope)
            .map(|(_, _, p, f)| (p.clone(), *f))
            .unwrap_or_else(|| panic!("{client} {scope:?}"))
    };

    let linux = paths(DiscoveryContext::new(Os::Linux, "/home/u"));
    assert_eq!(
        find(&linux, ClientApp::ClaudeDesktop, Scope::User).0,
        Path::new("/home/u/.config/Claude/claude_desktop_config.json")
    );
    assert_eq!(
        find(&linux, ClientApp::ClaudeCode, Scope::User).0,
        Path::new("/home/u/.claude.json")
    );
    assert_eq!(
        find(&linux, ClientApp::ClaudeCode, Scope::Managed).0,
        Path::new("/etc/claude-code/managed-mcp.json")
    );
    assert_eq!(
        find(&linux, ClientApp::Cursor, Scope::User).0,
        Path::new("/home/u/.cursor/mcp.json")
    );
    assert_eq!(
        find(&linux, ClientApp::Windsurf, Scope::User).0,
        Path::new("/home/u/.codeium/windsurf/mcp_config.json")
    );
    assert_eq!(
        find(&linux, ClientApp::VsCode, Scope::User).0,
        Path::new("/home/u/.config/Code/User/mcp.json")
    );
    assert_eq!(
        find(&linux, ClientApp::GeminiCli, Scope::User).0,
        Path::new("/home/u/.gemini/settings.json")
    );
    assert_eq!(
        find(&linux, ClientApp::Codex, Scope::User),
        (PathBuf::from("/home/u/.codex/config.toml"), Format::Toml)
    );
    assert!(
        linux.iter().all(|(_, s, _, _)| *s != Scope::Project),
        "no project, no project files"
    );

    let linux = paths(
        DiscoveryContext::new(Os::Linux, "/home/u")
            .config_dir("/xdg")
            .codex_home("/codex")
            .project("/src/app"),
    );
    assert_eq!(
        find(&linux, ClientApp::VsCode, Scope::User).0,
        Path::new("/xdg/Code/User/mcp.json")
    );
    assert_eq!(
        find(&linux, ClientApp::Codex, Scope::User).0,
        Path::new("/codex/config.toml")
    );
    assert_eq!(
        find(&linux, ClientApp::ClaudeCode, Scope::Project).0,
        Path::new("/src/app/.mcp.json")
    );
    assert_eq!(
        find(&linux, ClientApp::Cursor, Scope::Project).0,
        Path::new("/src/app/.cursor/mcp.json")
    );
    assert_eq!(
        find(&linux, ClientApp::VsCode, Scope::Project).0,
        Path::new("/src/app/.vscode/mcp.json")
    );
    assert_eq!(
        find(&linux, ClientApp::GeminiCli, Scope::Project).0,
        Path::new("/src/app/.gemini/settings.json")
    );
    assert_eq!(
        find(&linux, ClientApp::Codex, Scope::Project).0,
        Path::new("/src/app/.codex/config.toml")
    );

    let mac = paths(DiscoveryContext::new(Os::MacOs, "/Users/u").config_dir("/ignored"));
    assert_eq!(
        find(&mac, ClientApp::ClaudeDesktop, Scope::User).0,
        Path::new("/Users/u/Library/Application Support/Claude/claude_desktop_config.json")
    );
    assert_eq!(
        find(&mac, ClientApp::VsCode, Scope::User).0,
        Path::new("/Users/u/Library/Application Support/Code/User/mcp.json")
    );
    assert_eq!(
        find(&mac, ClientApp::ClaudeCode, Scope::Managed).0,
        Path::new("/Library/Application Support/ClaudeCode/managed-mcp.json")
    );

    let windows = paths(DiscoveryContext::new(Os::Windows, "C:/Users/u"));
    assert_eq!(
        find(&windows, ClientApp::ClaudeDesktop, Scope::User).0,
        Path::new("C:/Users/u/AppData/Roaming/Claude/claude_desktop_config.json")
    );
    let windows = paths(DiscoveryContext::new(Os::Windows, "C:/Users/u").config_dir("D:/Roaming"));
    assert_eq!(
        find(&windows, ClientApp::VsCode, Scope::User).0,
        Path::new("D:/Roaming/Code/User/mcp.json")
    );
}

#[test]
fn every_discovered_format_matches_its_extension() {
    let cx = DiscoveryContext::new(Os::current(), "/h").project("/p");
    for known in well_known_paths(&cx) {
        assert_eq!(
            Format::from_path(&known.path),
            known.format,
            "{:?}",
            known.path
        );
    }
}
