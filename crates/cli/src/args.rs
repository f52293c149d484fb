//! The command line: global options, the target server and the commands,
//! as `clap` derives them. `-- CMD ARGS...` is split off before parsing
//! (see [`split_server_command`]), so a server's own flags never reach clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const EXAMPLES: &str = "\
Target (one of):
  -s NAME            a server from the --config files (optional with exactly one)
  -s URL             a remote server (Streamable HTTP, or legacy HTTP+SSE)
  -s unix:PATH       a fleet left running by `mcpwire serve --socket PATH`
  -- CMD ARGS...     at the end of the line: a local server over stdio

Examples:
  mcpwire tools -- npx -y @modelcontextprotocol/server-everything
  mcpwire -s https://example.com/mcp call search query=rust
  mcpwire --config ~/.cursor/mcp.json -s github tools --json

Exit codes: 0 ok, 1 usage or internal error, 3 authorization required or failed,
4 unreachable or transport failure, 5 tool error (isError or an unknown tool),
6 blocked by --pins (the definition changed since it was approved),
130 interrupted (Ctrl-C; the request is cancelled).";

/// mcpwire: poke, script and debug any MCP server from a terminal.
#[derive(Debug, Parser)]
#[command(name = "mcpwire", version, after_help = EXAMPLES)]
#[command(override_usage = "mcpwire [GLOBAL] <COMMAND> [ARGS] [-- CMD ARGS...]")]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options accepted anywhere before `--`.
#[derive(Debug, Clone, Args)]
pub(crate) struct Global {
    /// The server: a NAME from the --config files, a URL, or unix:PATH (a
    /// `serve --socket PATH` left running).
    #[arg(short = 's', long = "server", global = true, value_name = "NAME|URL")]
    pub(crate) server: Option<String>,
    /// A configuration file (Claude Desktop, Claude Code, Cursor, VS Code,
    /// Windsurf, Gemini CLI, Codex); repeatable.
    #[arg(long = "config", global = true, value_name = "FILE")]
    pub(crate) config: Vec<PathBuf>,
    /// An HTTP header for a remote server, "Name: value"; repeatable.
    #[arg(short = 'H', long = "header", global = true, value_name = "K: V")]
    pub(crate) headers: Vec<String>,
    /// An environment variable for a local server, K=V; repeatable. A
    /// local server gets only a safe few of this environment's variables
    /// (PATH, HOME, USER, LOGNAME, SHELL, TERM, and on Windows what
    /// programs need there), plus these, --pass-env, and its configuration
    /// entry's `env`.
    #[arg(short = 'e', long = "env", global = true, value_name = "K=V")]
    pub(crate) env: Vec<String>,
    /// Passes this environment's variable NAME on to a local server (a
    /// token, a proxy setting); repeatable.
    #[arg(long = "pass-env", global = true, value_name = "NAME")]
    pub(crate) pass_env: Vec<String>,
    /// The working directory of a local server.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    /// How to reach the server.
    #[arg(long, global = true, value_enum, default_value_t = TransportChoice::Auto)]
    pub(crate) transport: TransportChoice,
    /// Seconds each request may take.
    #[arg(long, global = true, value_name = "S", default_value_t = 60.0)]
    pub(crate) timeout: f64,
    /// Seconds to connect and hand-shake.
    #[arg(
        long = "connect-timeout",
        global = true,
        value_name = "S",
        default_value_t = 30.0
    )]
    pub(crate) connect_timeout: f64,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// Same as --format json.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// A directory the server may work in, answered to its `roots/list`
    /// (a filesystem server started without one lists none); repeatable.
    #[arg(long = "root", global = true, value_name = "DIR")]
    pub(crate) roots: Vec<PathBuf>,
    /// A command that answers the server's sampling requests with a model
    /// of yours: it gets the request's params as JSON on stdin and prints
    /// the result (role, content, model) as JSON on stdout, within
    /// --timeout and 1 MiB. Run without a shell (words split as a shell
    /// would). Without it, sampling requests are refused.
    #[arg(long = "sampling-command", global = true, value_name = "CMD")]
    pub(crate) sampling_command: Option<String>,
    /// Show a local server's own stderr (its warnings, tracebacks) as it
    /// comes; the default on a terminal and with -v. Otherwise its last
    /// lines are kept for the error message if it fails.
    #[arg(long = "server-stderr", global = true)]
    pub(crate) server_stderr: bool,
    /// Send arguments whose names the tool's or prompt's schema does not
    /// list (they are refused before sending otherwise).
    #[arg(long = "no-check", global = true)]
    pub(crate) no_check: bool,
    /// Write every JSON-RPC message to stderr (secrets redacted).
    #[arg(short = 'v', long = "verbose", global = true)]
    pub(crate) verbose: bool,
    /// No colour, progress bar or spinner (also when NO_COLOR is set).
    #[arg(long = "no-color", global = true)]
    pub(crate) no_color: bool,
    /// Never open a browser: a server that needs a person to authorize
    /// fails with exit code 3 (for CI).
    #[arg(long = "non-interactive", global = true)]
    pub(crate) non_interactive: bool,
    /// Where login keeps tokens [default: $MCPWIRE_TOKEN_DIR, or
    /// ~/.config/mcpwire/tokens].
    #[arg(long = "token-dir", global = true, value_name = "DIR")]
    pub(crate) token_dir: Option<PathBuf>,
    /// Export this run's spans and metrics over OTLP/HTTP to
    /// $OTEL_EXPORTER_OTLP_ENDPOINT [default: http://localhost:4318]; on
    /// whenever that variable is set.
    #[arg(long = "otel", global = true)]
    pub(crate) otel: bool,
    /// Check every listing of tools and prompts against the pinned
    /// definitions in FILE [default: $MCPWIRE_PINS]: new ones are pinned
    /// on first use, a changed one is dealt with by --pin-policy (see
    /// `mcpwire pins`).
    #[arg(long = "pins", global = true, value_name = "FILE")]
    pub(crate) pins: Option<PathBuf>,
    /// What a tool or prompt whose definition changed since it was
    /// approved gets: warn (shown, and said on stderr), block (left out;
    /// calling it is exit 6) or quarantine (every tool and prompt of the
    /// server left out).
    #[arg(
        long = "pin-policy",
        global = true,
        value_enum,
        value_name = "POLICY",
        default_value_t = PolicyChoice::Block
    )]
    pub(crate) pin_policy: PolicyChoice,
}

/// `--pin-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum PolicyChoice {
    /// Shown, and reported on stderr.
    Warn,
    /// Left out; the server's other tools and prompts stay.
    Block,
    /// Every tool and prompt of the server left out.
    Quarantine,
}

impl Global {
    /// The output format, `--json` included.
    pub(crate) fn format(&self) -> Format {
        if self.json { Format::Json } else { self.format }
    }
}

/// How to reach the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TransportChoice {
    /// By the target: a command is stdio, a URL is HTTP with fallback.
    Auto,
    /// A local process over stdin and stdout.
    Stdio,
    /// Streamable HTTP only.
    Http,
    /// Legacy HTTP+SSE only.
    Sse,
    /// A WebSocket (a compatibility transport).
    Ws,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// For people: tables and rendered content.
    Text,
    /// Exactly one MCP-shaped JSON object on stdout.
    Json,
    /// One JSON object per line (one per list item).
    Ndjson,
}

/// What to do.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum Command {
    /// The server's name, version, protocol, capabilities and instructions.
    #[command(after_help = "Example:\n  mcpwire info -- cargo run -q -p mcpwire-demo-server")]
    Info,
    /// The server's tools, with their signatures.
    #[command(after_help = "Example:\n  mcpwire tools --schema -s https://example.com/mcp")]
    Tools {
        /// Show each tool's input and output schema.
        #[arg(long)]
        schema: bool,
    },
    /// One tool in detail: parameters, annotations, schemas.
    #[command(after_help = "Example:\n  mcpwire tool add -- ./mcpwire-demo-server")]
    Tool {
        /// The tool's name.
        name: String,
    },
    /// Calls a tool. k=v is converted by the tool's input schema, k:=json
    /// takes raw JSON.
    #[command(
        after_help = "Examples:\n  mcpwire call add a=1 b=2 -- ./mcpwire-demo-server\n  \
        mcpwire call search 'filters:={\"lang\":\"rust\"}' -s https://example.com/mcp\n  \
        echo '{\"message\":\"hi\"}' | mcpwire call echo --args - -s my-server"
    )]
    Call {
        /// The tool's name.
        tool: String,
        /// Arguments: k=v (typed by the schema) or k:=json.
        #[arg(value_name = "k=v|k:=json")]
        args: Vec<String>,
        /// Arguments as a JSON object: inline, @FILE, or - for stdin
        /// (k=v given too override its members).
        #[arg(long = "args", value_name = "JSON|@FILE|-")]
        json_args: Option<String>,
        /// Show the structured content even when the text already says
        /// the same (it is shown when it adds something).
        #[arg(long)]
        structured: bool,
    },
    /// The server's resources.
    #[command(after_help = "Example:\n  mcpwire resources --json -s my-server")]
    Resources,
    /// The server's resource templates.
    #[command(after_help = "Example:\n  mcpwire templates -s my-server")]
    Templates,
    /// Reads a resource.
    #[command(
        after_help = "Example:\n  mcpwire read demo://readme -o readme.txt -- ./mcpwire-demo-server"
    )]
    Read {
        /// The resource's URI.
        uri: String,
        /// Write the contents to FILE (binary contents decoded).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// The server's prompts.
    #[command(after_help = "Example:\n  mcpwire prompts -s my-server")]
    Prompts,
    /// Gets a prompt with its arguments (k=v).
    #[command(after_help = "Example:\n  mcpwire prompt greet name=Ada -- ./mcpwire-demo-server")]
    Prompt {
        /// The prompt's name.
        name: String,
        /// Arguments: k=v.
        #[arg(value_name = "k=v")]
        args: Vec<String>,
    },
    /// Completion values for a prompt's argument or a template's variable.
    #[command(
        after_help = "Examples:\n  mcpwire complete --prompt greet name A -- ./mcpwire-demo-server\n  \
        mcpwire complete --resource 'demo://echo/{text}' text he -s my-server"
    )]
    Complete {
        /// Complete an argument of this prompt.
        #[arg(
            long,
            value_name = "NAME",
            conflicts_with = "resource",
            required_unless_present = "resource"
        )]
        prompt: Option<String>,
        /// Complete a variable of this resource template.
        #[arg(long, value_name = "URI_TEMPLATE")]
        resource: Option<String>,
        /// The argument (or variable) to complete.
        argument: String,
        /// What was typed so far.
        #[arg(default_value = "")]
        value: String,
        /// Arguments already chosen, k=v.
        #[arg(value_name = "k=v")]
        context: Vec<String>,
    },
    /// Checks the server answers.
    #[command(after_help = "Example:\n  mcpwire ping -s https://example.com/mcp")]
    Ping,
    /// Sets the level of the log messages the server sends.
    #[command(
        name = "log-level",
        after_help = "Example:\n  mcpwire log-level debug -s my-server"
    )]
    LogLevel {
        /// debug, info, notice, warning, error, critical, alert or emergency.
        level: String,
    },
    /// A REPL over one connection (history, completion of tool and prompt
    /// names, notifications shown as they arrive).
    #[command(after_help = "Example:\n  mcpwire shell -- ./mcpwire-demo-server\n  \
        mcpwire> call echo message=hi")]
    Shell,
    /// The servers in the --config files, without connecting (secrets
    /// redacted).
    #[command(after_help = "Example:\n  mcpwire servers --config ~/.cursor/mcp.json")]
    Servers,
    /// Authorizes with an OAuth-protected server in the browser and keeps
    /// the tokens for later commands.
    #[command(after_help = "Example:\n  mcpwire login https://example.com/mcp")]
    Login {
        /// The server's URL or its name in the --config files (or -s).
        target: Option<String>,
    },
    /// Forgets the tokens kept for a server.
    #[command(after_help = "Example:\n  mcpwire logout https://example.com/mcp")]
    Logout {
        /// The server's URL or its name in the --config files (or -s).
        target: Option<String>,
    },
    /// Offers every server of the --config files as one MCP server (tools
    /// named server__tool): on stdin and stdout, or with --http on
    /// 127.0.0.1. Logs go to stderr only.
    #[command(
        after_help = "Examples (a host's entry: one server, the whole fleet):\n  \
        {\"mcpServers\": {\"fleet\": {\"command\": \"mcpwire\",\n    \
        \"args\": [\"--config\", \"/home/me/.cursor/mcp.json\", \"serve\"]}}}\n  \
        MCPWIRE_SERVE_TOKEN=s3cret mcpwire --config fleet.json serve --http --port 8808"
    )]
    Serve {
        /// Serve Streamable HTTP at http://127.0.0.1:PORT/mcp instead of
        /// stdio; the URL is the first line on stdout.
        #[arg(long)]
        http: bool,
        /// The port for --http [default: a free one].
        #[arg(long, value_name = "N", requires = "http")]
        port: Option<u16>,
        /// The bearer token HTTP clients must send [default:
        /// $MCPWIRE_SERVE_TOKEN, else a random one, shown once on stdout
        /// after the URL]. A flag's value is visible to other users of
        /// the machine (ps): prefer the variable.
        #[arg(long, value_name = "TOKEN", requires = "http")]
        token: Option<String>,
        /// How many HTTP sessions may be open at once; one more
        /// `initialize` is answered 503 [default: 64].
        #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..))]
        max_sessions: Option<u32>,
        /// Serve on a Unix socket at PATH instead (readable by you only):
        /// each connection is a client, and `-s unix:PATH` makes later
        /// commands calls on this live fleet.
        #[arg(long, value_name = "PATH", conflicts_with = "http")]
        socket: Option<PathBuf>,
        /// Reload the fleet when a --config file changes (read every half
        /// second; a burst of saves is one reload): only the servers whose
        /// entries changed are restarted, and a file that does not parse
        /// changes nothing (said on stderr).
        #[arg(long)]
        watch: bool,
    },
    /// The pinned tool and prompt definitions of --pins FILE: list them,
    /// approve a server's as it lists them now, or forget them.
    #[command(subcommand)]
    Pins(PinsCommand),
}

/// `mcpwire pins ...`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum PinsCommand {
    /// The pinned servers, or one server's pinned tools and prompts.
    #[command(after_help = "Example:\n  mcpwire --pins pins.json pins list github")]
    List {
        /// A server as the pin file names it.
        server: Option<String>,
    },
    /// Pins what the server lists now, after showing what changes.
    #[command(
        after_help = "Examples:\n  mcpwire --pins pins.json --config mcp.json pins approve github\n  \
        mcpwire --pins pins.json pins approve --yes -- ./my-server"
    )]
    Approve {
        /// The server: a NAME from the --config files or a URL (or -s, or
        /// -- CMD ARGS...).
        server: Option<String>,
        /// Approve without asking (needed when no person is at a terminal).
        #[arg(short = 'y', long)]
        yes: bool,
    },
    /// Forgets a server's pins, or one tool's or prompt's: its next
    /// listing is pinned afresh.
    #[command(after_help = "Example:\n  mcpwire --pins pins.json pins forget github create_issue")]
    Forget {
        /// A server as the pin file names it.
        server: String,
        /// A tool (or prompt) of it.
        name: Option<String>,
    },
}

/// Splits `argv` (without the program name) at the first `--`: what is
/// before it is for clap, what follows is a local server's command line.
pub(crate) fn split_server_command(argv: Vec<String>) -> (Vec<String>, Vec<String>) {
    match argv.iter().position(|a| a == "--") {
        Some(at) => {
            let mut ours = argv;
            let theirs = ours.split_off(at + 1);
            ours.pop();
            (ours, theirs)
        }
        None => (argv, Vec::new()),
    }
}

/// Whether the command line asks for JSON output, read before parsing (a
/// usage error is then reported as JSON too).
pub(crate) fn asks_for_json(argv: &[String]) -> bool {
    argv.iter().enumerate().any(|(i, a)| {
        a == "--json"
            || a == "--format=json"
            || a == "--format=ndjson"
            || (a == "--format"
                && argv
                    .get(i + 1)
                    .is_some_and(|f| f == "json" || f == "ndjson"))
    })
}

/// Whether `word` names one of the subcommands.
pub(crate) fn is_command(word: &str) -> bool {
    use clap::CommandFactory as _;
    Cli::command()
        .get_subcommands()
        .any(|c| c.get_name() == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_first_double_dash_starts_the_server_command() {
        let (ours, theirs) = split_server_command(strings(&["tools", "--", "srv", "--", "-x"]));
        assert_eq!(ours, strings(&["tools"]));
        assert_eq!(theirs, strings(&["srv", "--", "-x"]));
        let (ours, theirs) = split_server_command(strings(&["tools", "-s", "a"]));
        assert_eq!(ours, strings(&["tools", "-s", "a"]));
        assert!(theirs.is_empty());
    }

    #[test]
    fn global_options_stand_anywhere() {
        let cli = Cli::try_parse_from(["mcpwire", "call", "echo", "-v", "message=hi", "--json"])
            .expect("parses");
        assert!(cli.global.verbose);
        assert_eq!(cli.global.format(), Format::Json);
        let Command::Call { args, .. } = cli.command else {
            panic!("not call")
        };
        assert_eq!(args, strings(&["message=hi"]));
    }

    #[test]
    fn the_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
