//! Where the common MCP clients keep their configuration files, per OS.
//!
//! A pure function of a [`DiscoveryContext`] (OS, home, project, a few
//! overridable folders): nothing is read or checked, so the caller decides
//! which of the paths exist and which to load, and tests can ask about any
//! OS from any OS. Paths are built with the host's separator.
//!
//! Sources (the clients' own documentation):
//! - Claude Desktop: <https://modelcontextprotocol.io/quickstart/user>
//! - Claude Code: <https://docs.anthropic.com/en/docs/claude-code/mcp>
//! - Cursor: <https://docs.cursor.com/context/model-context-protocol>
//! - Windsurf: <https://docs.windsurf.com/windsurf/cascade/mcp>
//! - VS Code: <https://code.visualstudio.com/docs/copilot/reference/mcp-configuration>
//! - Gemini CLI: <https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md>
//! - Codex: <https://developers.openai.com/codex/mcp>

use std::fmt;
use std::path::{Path, PathBuf};

use crate::format::Format;

/// An MCP client whose files are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientApp {
    /// Anthropic's Claude Desktop.
    ClaudeDesktop,
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// Cursor.
    Cursor,
    /// Windsurf.
    Windsurf,
    /// Visual Studio Code.
    VsCode,
    /// Google's Gemini CLI.
    GeminiCli,
    /// OpenAI's Codex.
    Codex,
}

impl fmt::Display for ClientApp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClientApp::ClaudeDesktop => "Claude Desktop",
            ClientApp::ClaudeCode => "Claude Code",
            ClientApp::Cursor => "Cursor",
            ClientApp::Windsurf => "Windsurf",
            ClientApp::VsCode => "VS Code",
            ClientApp::GeminiCli => "Gemini CLI",
            ClientApp::Codex => "Codex",
        })
    }
}

/// Whose servers a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// The user's, for every project.
    User,
    /// One project's, in the project folder (often committed).
    Project,
    /// Set by an administrator for the whole machine.
    Managed,
}

/// An operating system, for choosing paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Os {
    /// Linux and other Unix-likes without their own conventions.
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
}

impl Os {
    /// The OS this program runs on (Linux for any other Unix).
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// What the paths depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct DiscoveryContext {
    os: Os,
    home: PathBuf,
    project: Option<PathBuf>,
    config_dir: Option<PathBuf>,
    codex_home: Option<PathBuf>,
}

impl DiscoveryContext {
    /// For `os` and the user whose home is `home`, with no project and the
    /// OS's default folders.
    pub fn new(os: Os, home: impl Into<PathBuf>) -> Self {
        Self {
            os,
            home: home.into(),
            project: None,
            config_dir: None,
            codex_home: None,
        }
    }

    /// This process's OS, home (`HOME`, or `USERPROFILE` on Windows) and
    /// folders (`APPDATA`, `XDG_CONFIG_HOME`, `CODEX_HOME`); `None` without
    /// a home. The only function here that reads the environment.
    pub fn from_process() -> Option<Self> {
        let os = Os::current();
        let var = |name| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = match os {
            Os::Windows => var("USERPROFILE").or_else(|| var("HOME")),
            _ => var("HOME"),
        }?;
        let mut cx = DiscoveryContext::new(os, home);
        cx.config_dir = match os {
            Os::Windows => var("APPDATA"),
            Os::Linux => var("XDG_CONFIG_HOME"),
            Os::MacOs => None,
        };
        cx.codex_home = var("CODEX_HOME");
        Some(cx)
    }

    /// Adds the project-level files of the project at `dir`.
    pub fn project(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project = Some(dir.into());
        self
    }

    /// The per-user configuration folder: `%APPDATA%` on Windows,
    /// `$XDG_CONFIG_HOME` on Linux. Default: `HOME\AppData\Roaming` and
    /// `HOME/.config`. Not used on macOS (`~/Library/Application Support`).
    pub fn config_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config_dir = Some(dir.into());
        self
    }

    /// Codex's folder (`$CODEX_HOME`). Default: `HOME/.codex`.
    pub fn codex_home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.codex_home = Some(dir.into());
        self
    }

    /// The folder where desktop apps keep per-user settings.
    fn app_config(&self) -> PathBuf {
        match self.os {
            Os::MacOs => self.home.join("Library").join("Application Support"),
            Os::Windows => self
                .config_dir
                .clone()
                .unwrap_or_else(|| self.home.join("AppData").join("Roaming")),
            Os::Linux => self
                .config_dir
                .clone()
                .unwrap_or_else(|| self.home.join(".config")),
        }
    }
}

/// A file where a client keeps MCP servers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KnownPath {
    /// Whose file.
    pub client: ClientApp,
    /// Whose servers.
    pub scope: Scope,
    /// Where (it may not exist).
    pub path: PathBuf,
    /// Its syntax.
    pub format: Format,
}

/// The configuration files of the common clients for `cx`, user files
/// first, then managed ones, then (when a project is set) the project's.
/// Nothing is read: which exist is for the caller to check.
///
/// Claude Code keeps user servers at the top level of `~/.claude.json`
/// (read here) and per-project "local" servers under its `projects` key
/// (not read here).
///
/// ```
/// use mcpwire_config::{ClientApp, DiscoveryContext, Os, Scope, well_known_paths};
///
/// let cx = DiscoveryContext::new(Os::Linux, "/home/u").project("/src/app");
/// let paths = well_known_paths(&cx);
/// let codex = paths.iter().find(|p| p.client == ClientApp::Codex && p.scope == Scope::User).unwrap();
/// assert_eq!(codex.path, std::path::Path::new("/home/u/.codex/config.toml"));
/// ```
pub fn well_known_paths(cx: &DiscoveryContext) -> Vec<KnownPath> {
    use ClientApp::*;
    use Scope::*;
    let home = &cx.home;
    let app = cx.app_config();
    let codex = cx.codex_home.clone().unwrap_or_else(|| home.join(".codex"));
    let json = |client, scope, path: PathBuf| KnownPath {
        client,
        scope,
        path,
        format: Format::Json,
    };
    let mut paths = vec![
        json(
            ClaudeDesktop,
            User,
            app.join("Claude").join("claude_desktop_config.json"),
        ),
        json(ClaudeCode, User, home.join(".claude.json")),
        json(Cursor, User, home.join(".cursor").join("mcp.json")),
        json(
            Windsurf,
            User,
            home.join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
        ),
        json(VsCode, User, app.join("Code").join("User").join("mcp.json")),
        json(GeminiCli, User, home.join(".gemini").join("settings.json")),
        KnownPath {
            client: Codex,
            scope: User,
            path: codex.join("config.toml"),
            format: Format::Toml,
        },
    ];
    let managed = match cx.os {
        Os::Linux => Path::new("/etc/claude-code").to_owned(),
        Os::MacOs => Path::new("/Library/Application Support/ClaudeCode").to_owned(),
        Os::Windows => Path::new(r"C:\ProgramData\ClaudeCode").to_owned(),
    };
    paths.push(json(ClaudeCode, Managed, managed.join("managed-mcp.json")));
    if let Some(project) = &cx.project {
        paths.extend([
            json(ClaudeCode, Project, project.join(".mcp.json")),
            json(Cursor, Project, project.join(".cursor").join("mcp.json")),
            json(VsCode, Project, project.join(".vscode").join("mcp.json")),
            json(
                GeminiCli,
                Project,
                project.join(".gemini").join("settings.json"),
            ),
            KnownPath {
                client: Codex,
                scope: Project,
                path: project.join(".codex").join("config.toml"),
                format: Format::Toml,
            },
        ]);
    }
    paths
}
