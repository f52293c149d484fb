//! `cargo xtask cli-docs`: writes `docs/cli.md`, every `mcpwire` command
//! with the output the built binary gives against the demo server (over
//! stdio, and over Streamable HTTP in its `--http` mode). Nothing in the
//! page is typed by hand but the prose: each command runs through `sh` with
//! `target/debug` first on `PATH`, and its stdout, then its stderr, and a
//! non-zero exit code are copied as they come. Only the demo servers'
//! URLs are replaced, by `$URL` and `$TOKEN_URL` (their ports change every
//! run).

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::cmd::{cargo, run};

/// One section of the page: a heading, a sentence, the commands.
struct Section {
    title: &'static str,
    text: &'static str,
    commands: &'static [&'static str],
}

const SECTIONS: &[Section] = &[
    Section {
        title: "Help",
        text: "Every command's `--help` ends with an example.",
        commands: &["mcpwire --help", "mcpwire call --help"],
    },
    Section {
        title: "A local server: `-- CMD ARGS...`",
        text: "Everything after `--` is the server's command line, run without a shell.",
        commands: &[
            "mcpwire info -- mcpwire-demo-server",
            "mcpwire tools -- mcpwire-demo-server",
            "mcpwire tool add -- mcpwire-demo-server",
        ],
    },
    Section {
        title: "Calling tools",
        text: "`k=v` is converted by the tool's input schema (numbers, booleans, arrays, enums), \
               `k:=json` is raw JSON, `--args` takes a JSON object (inline, `@FILE` or `-`). \
               A value that does not fit, or a name the tool's schema does not list, is \
               refused before the call (exit 1; `--no-check` sends an unknown name anyway); \
               an unknown tool or a result with `isError` is exit 5. Structured content is \
               shown when it adds to the text (`--structured`: always). The server's log \
               messages go to stderr, in both eras.",
        commands: &[
            "mcpwire call echo message='hello, world' -- mcpwire-demo-server",
            "mcpwire call add a=2 b=40 -- mcpwire-demo-server",
            "mcpwire call slow steps=3 delay_ms:=10 -- mcpwire-demo-server",
            "echo '{\"message\": \"from stdin\"}' | mcpwire call echo --args - -- mcpwire-demo-server",
            "mcpwire call add a=2 b=forty -- mcpwire-demo-server",
            "mcpwire call add a=2 -- mcpwire-demo-server",
            "mcpwire call add a=2 bb=40 -- mcpwire-demo-server",
            "mcpwire call nope -- mcpwire-demo-server",
            "mcpwire call ask_llm prompt=hi -- mcpwire-demo-server",
        ],
    },
    Section {
        title: "Resources, templates, prompts, completion",
        text: "",
        commands: &[
            "mcpwire resources -- mcpwire-demo-server",
            "mcpwire templates -- mcpwire-demo-server",
            "mcpwire read demo://readme -- mcpwire-demo-server",
            "mcpwire read demo://echo/hello -o hello.txt -- mcpwire-demo-server && cat hello.txt",
            "mcpwire prompts -- mcpwire-demo-server",
            "mcpwire prompt greet name=Ada -- mcpwire-demo-server",
            "mcpwire complete --prompt greet name A -- mcpwire-demo-server",
            "mcpwire complete --resource 'demo://echo/{text}' text g -- mcpwire-demo-server",
        ],
    },
    Section {
        title: "Ping and the log level",
        text: "A server of the stateless revision (2026-07-28) has neither `ping` nor \
               `logging/setLevel`: `ping` then checks it with `server/discover`, and \
               `log-level` says that later requests of the session ask for the level.",
        commands: &[
            "mcpwire ping -- mcpwire-demo-server",
            "mcpwire log-level debug -- mcpwire-demo-server",
        ],
    },
    Section {
        title: "JSON and NDJSON",
        text: "`--format json` (or `--json`) prints exactly one MCP-shaped object on stdout; \
               `--format ndjson` prints one line per item of a list. Errors are one JSON line \
               on stderr.",
        commands: &[
            "mcpwire --json call add a=1 b=2 -- mcpwire-demo-server",
            "mcpwire prompts --json -- mcpwire-demo-server",
            "mcpwire tools --format ndjson -- mcpwire-demo-server",
            "mcpwire --json call nope -- mcpwire-demo-server",
        ],
    },
    Section {
        title: "A remote server: `-s URL`",
        text: "Streamable HTTP, or legacy HTTP+SSE if that is all the server speaks \
               (`--transport http|sse` fixes one). Here the demo server runs as \
               `mcpwire-demo-server --http`; `$URL` stands for the URL it printed.",
        commands: &[
            "mcpwire -s $URL tools",
            "mcpwire -s $URL call add a=1 b=2",
            "mcpwire -s http://127.0.0.1:9/mcp ping",
            "mcpwire --json -s http://127.0.0.1:9/mcp ping",
        ],
    },
    Section {
        title: "Servers that want a token",
        text: "A server that answers 401 and publishes no OAuth metadata wants a token given \
               beforehand (an API key, a personal access token): say so, and how to pass one. \
               A token given with `-H` (or in a configuration file's `headers`) that the server \
               refuses is reported as refused, naming where it came from; no OAuth flow starts \
               behind a token the user gave. Here `$TOKEN_URL` is the demo server started as \
               `mcpwire-demo-server --http --token demo-token`. `-v` shows every cause.",
        commands: &[
            "mcpwire -s $TOKEN_URL tools",
            "mcpwire -H 'Authorization: Bearer expired' -s $TOKEN_URL tools",
            "mcpwire -H 'Authorization: Bearer demo-token' -s $TOKEN_URL call echo message=in",
        ],
    },
    Section {
        title: "When the server asks: elicitation and sampling",
        text: "On a terminal, a server's `elicitation/create` is asked there: each field of its \
               form in the server's order, with its type, `required`, and its default (Enter \
               keeps it); a wrong answer is asked again; then `Send this to the server? [Y]es \
               (accept) / [n]o (decline) / [c]ancel`, and Ctrl-D at any question cancels. A \
               URL-mode request shows the URL and its site and asks whether to go on. Without \
               a terminal (as here) it is declined, with a note. The time spent answering \
               counts towards `--timeout`. A `sampling/createMessage` request is refused (the \
               server sees why) unless `--sampling-command CMD` names a program to answer it: \
               the request's params as JSON on its stdin, the result as JSON on its stdout, \
               within `--timeout` and 1 MiB. With `--format json` the notes are left out.",
        commands: &[
            "mcpwire call ask_user -- mcpwire-demo-server",
            "cat model.sh",
            "mcpwire --sampling-command 'sh model.sh' call ask_llm prompt=hi -- mcpwire-demo-server",
        ],
    },
    Section {
        title: "-v: every JSON-RPC message",
        text: "On stderr, `-->` going out and `<--` coming in, and under a frame sent over \
               HTTP the header fields it went with; authorization headers, tokens, secrets \
               and bearer credentials are redacted. It is the client's message tap, so a \
               command sends the same bytes and headers with `-v` as without.",
        commands: &[
            "mcpwire -v ping -- mcpwire-demo-server",
            "mcpwire -v -s $URL ping",
        ],
    },
    Section {
        title: "Configuration files: `--config FILE -s NAME`",
        text: "Any file the configuration crate reads (Claude Desktop, Claude Code, Cursor, \
               VS Code, Windsurf, Gemini CLI, Codex); with exactly one server, `-s` may be left \
               out. `servers` lists them without connecting, secrets redacted. `demo.json` \
               here is a Claude Desktop file naming the demo server, with a token in `env`.",
        commands: &[
            "cat demo.json",
            "mcpwire --config demo.json servers",
            "mcpwire --config demo.json servers --json",
            "mcpwire --config demo.json call echo message=configured",
        ],
    },
    Section {
        title: "serve: the whole fleet as one MCP server",
        text: "`serve` starts every server of the `--config` files and offers them as one MCP \
               server: its tools are `{server}__{tool}`, each entry's include and exclude \
               lists apply, and with `--pins FILE` (or `$MCPWIRE_PINS`) the fleet's \
               listings are held against the pin file as other commands hold theirs \
               (`--pin-policy`; a blocked tool is not listed and calling it is an error; \
               what is pinned on first use is saved, merged with what other commands \
               save). With `--watch` the fleet follows its `--config` files: a save \
               (in place or by rename) reloads it within about a second, restarting \
               only the servers whose entries changed, and a file that does not parse \
               changes nothing; each is a line on stderr. Watching is off by default: a \
               host that starts `serve` expects the servers it was started with, and a \
               reload restarts servers under it. Over stdio (the \
               default) one entry in a host's file gives it the whole fleet: \
               `{\"command\": \"mcpwire\", \"args\": [\"--config\", \"FILE\", \"serve\"]}`; \
               stdout carries only the protocol, and everything for people goes to stderr. \
               It answers `initialize` with the revision the client asks for when it speaks \
               it (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05), else the latest; then \
               `ping`, `tools/list|call`, `prompts/list|get`, `resources/list|read`, \
               `resources/templates/list`, `completion/complete` (asked of the server that \
               owns the prompt or template) and `logging/setLevel`. A client of the stateless \
               revision (2026-07-28) needs no `initialize`: `server/discover` answers it, \
               and each request is served as its `_meta` declares (that era has no `ping` \
               or `logging/setLevel`). It relays the servers' \
               progress under the client's own `progressToken`, the client's \
               `notifications/cancelled` to the upstream call, the servers' log messages \
               (logger `{server}` or `{server}/{logger}`, at or above the level the client \
               set), a `list_changed` when the fleet's catalogue changes, and the servers' \
               sampling, elicitation and roots requests to the client of the 2025 revisions whose call caused \
               them, when it declared that capability (`docs/manager.md` says how that \
               client is told). Each client's \
               requests run on their own tasks, at most 64 at once (one more is refused \
               with an error at once). Closing stdin ends the session: requests still \
               running are cancelled, so a script waits for its answers first (below, \
               `sleep` does).\
               \n\n`--http` serves Streamable HTTP at `http://127.0.0.1:PORT/mcp` instead \
               (`--port`, else a free one; the URL is the first line on stdout): sessions by \
               `Mcp-Session-Id`, answers as SSE (progress, then the answer) or JSON, a GET \
               stream for log messages and `list_changed`, DELETE to end a session, at most \
               64 sessions (`--max-sessions N`; one more `initialize` is answered 503), each \
               ended after 10 minutes idle. A request of the stateless \
               revision gets no session and counts against none: it is answered on its own \
               stream, which it cancels by closing. Every request must carry \
               `Authorization: Bearer TOKEN`: `--token`, or `$MCPWIRE_SERVE_TOKEN` (not \
               shown to other users by `ps`), else a random one printed once on stdout after \
               the URL, where only whoever started `serve` reads it (never on stderr, where \
               logs go). A request with an `Origin` or `Host` other than the loopback is \
               refused (403): a web page cannot reach the fleet through the user's browser.\
               \n\n`--socket PATH` serves on a Unix socket instead (the owner's only; each \
               connection is a client, 64 at once), and `-s unix:PATH` makes any later \
               command a call on that live fleet: the servers are started once, not at \
               every command. A socket file whose `serve` is gone is replaced; one still \
               served is not.\
               \n\nNot yet: `subscriptions/listen` (a stateless client hears no \
               `list_changed` and no log messages), the servers' requests for a client of \
               the stateless revision (they would go as its requests' input rounds; only \
               clients of the 2025 revisions are sent them), and named sessions.",
        commands: &[
            "mcpwire serve -h",
            "(printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"sh\",\"version\":\"0\"}}}'; sleep 1; printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"demo__echo\",\"arguments\":{\"message\":\"through serve\"}}}'; sleep 1) | mcpwire --config demo.json serve",
            "mcpwire --config demo.json serve --socket fleet.sock & sleep 2; mcpwire -s unix:fleet.sock call demo__echo message=lasting; mcpwire -s unix:fleet.sock ping > /dev/null && echo pong; kill -INT $!; wait",
        ],
    },
    Section {
        title: "shell",
        text: "A REPL over one connection, with history and completion of tool and prompt \
               names; the server's log messages and notifications show as they arrive. \
               Interactively it prompts `mcpwire>`; here its input is piped.",
        commands: &[
            "printf 'call add a=1 b=2\\nprompt greet name=Grace\\nexit\\n' | mcpwire shell -- mcpwire-demo-server",
        ],
    },
    Section {
        title: "Pinned tool definitions: `--pins FILE` and `pins`",
        text: "Trust on first use, as SSH's known hosts: with `--pins FILE` (or `$MCPWIRE_PINS`) \
               every listing of tools and prompts is held against the file. A tool or prompt seen \
               for the first time is pinned (a SHA-256 digest of its title, description, schemas \
               and annotations; a prompt's title, description and arguments) and the file saved. \
               One whose definition changed since it was approved is dealt with by \
               `--pin-policy`: `block` (the default) leaves it out of listings (and of the \
               shell's Tab completion) and a `call`, `prompt` or `complete --prompt` of it is \
               exit 6; `warn` shows it and says so on stderr; `quarantine` \
               leaves out every tool and prompt of the server (and its resources are refused). \
               A renamed tool (a pinned name gone, a new one with its exact definition) is \
               reported and pinned under its new name; hidden characters and tags that speak to \
               the model (`<IMPORTANT>`, `<system>`...) in a description are reported, not \
               blocked. With `--format json` each finding is one JSON line on stderr. Without a \
               pin file nothing is checked: there is no default file, so pinning, and blocking, \
               is something a user turns on. In the file a configured server is named by its \
               name, a URL without its user information, query and fragment, and a command \
               line by its words with credential arguments redacted. `pins list [SERVER]` shows \
               what is pinned; `pins approve` (the server as `-s` takes it, or `-- CMD`) shows \
               what would change and, at a terminal, asks (elsewhere it needs `--yes`); \
               `pins forget SERVER [TOOL]` drops pins so the next listing pins afresh. Every \
               save re-reads the file under a lock (`FILE.lock`, left beside it) and changes \
               only what this command pinned, approved or forgot, so commands sharing one pin \
               file (a shell, a script, `serve`) keep each other's pins. Below, \
               the pin file is edited with `sed` to stand for a server that changed or renamed a \
               tool after it was approved.",
        commands: &[
            "mcpwire --pins pins.json tools -- mcpwire-demo-server",
            "mcpwire --pins pins.json pins list",
            "mcpwire --pins pins.json pins list mcpwire-demo-server",
            "sed -i 's/\"echo\": \"sha256:[0-9a-f]*\"/\"echo\": \"sha256:0123\"/' pins.json",
            "mcpwire --pins pins.json tools -- mcpwire-demo-server",
            "mcpwire --pins pins.json call echo message=hi -- mcpwire-demo-server",
            "mcpwire --pins pins.json --pin-policy warn call echo message=hi -- mcpwire-demo-server",
            "mcpwire --pins pins.json --json call echo message=hi -- mcpwire-demo-server",
            "mcpwire --pins pins.json pins approve -- mcpwire-demo-server",
            "mcpwire --pins pins.json pins approve --yes -- mcpwire-demo-server",
            "sed -i 's/\"add\":/\"sum\":/' pins.json",
            "mcpwire --pins pins.json tools -- mcpwire-demo-server",
            "mcpwire --pins pins.json pins forget mcpwire-demo-server echo",
            "mcpwire --pins pins.json pins forget mcpwire-demo-server",
        ],
    },
    Section {
        title: "login and logout",
        text: "`login URL|NAME` runs the OAuth browser flow and keeps the tokens in a file \
               store (`--token-dir`, `$MCPWIRE_TOKEN_DIR`, or `~/.config/mcpwire/tokens`) \
               that later commands use; `logout` removes them. `--non-interactive` never \
               opens a browser: a server that needs one fails with exit 3.",
        commands: &["mcpwire --token-dir tokens logout https://example.com/mcp"],
    },
];

const CONFIG: &str = r#"{
  "mcpServers": {
    "demo": {
      "command": "mcpwire-demo-server",
      "env": { "DEMO_TOKEN": "s3cret" }
    }
  }
}
"#;

/// A "model" for `--sampling-command`: reads the request, answers one line.
const MODEL: &str = r#"#!/bin/sh
# The request's params arrive on stdin; the result goes to stdout.
cat > /dev/null
echo '{"role": "assistant", "content": {"type": "text", "text": "hello from model.sh"}, "model": "model.sh"}'
"#;

/// The demo server in its HTTP mode, killed on drop.
struct Http(std::process::Child);

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the demo server with `--http` and `extra`; returns it and its URL.
fn demo_http(bin: &Path, extra: &[&str]) -> Result<(Http, String), String> {
    let mut child = Command::new(bin.join("mcpwire-demo-server"))
        .arg("--http")
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("the demo server does not start: {e}"))?;
    let mut url = String::new();
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let http = Http(child);
    BufReader::new(stdout)
        .read_line(&mut url)
        .map_err(|e| e.to_string())?;
    Ok((http, url.trim().to_owned()))
}

pub(crate) fn cli_docs(root: &Path, _args: &[String]) -> Result<(), String> {
    run(cargo().args(["build", "-p", "mcpwire-cli", "-p", "mcpwire-demo-server"]))?;
    let bin = root.join("target/debug");
    let path = match std::env::var_os("PATH") {
        Some(p) => {
            let mut all = vec![bin.clone()];
            all.extend(std::env::split_paths(&p));
            std::env::join_paths(all).map_err(|e| e.to_string())?
        }
        None => bin.clone().into_os_string(),
    };
    let work = root.join("target/cli-docs");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    std::fs::write(work.join("demo.json"), CONFIG).map_err(|e| e.to_string())?;
    std::fs::write(work.join("model.sh"), MODEL).map_err(|e| e.to_string())?;

    let (http, url) = demo_http(&bin, &[])?;
    let (token_http, token_url) = demo_http(&bin, &["--token", "demo-token"])?;

    let mut page = String::from(
        "# The `mcpwire` command\n\n\
         Poke, script and debug any MCP server from a terminal. Install it with \
         `cargo install --path crates/cli`.\n\n\
         Every output below is real: `cargo xtask cli-docs` ran each command against the \
         bundled demo server (`crates/demo-server`) and copied what it printed (stdout, then \
         stderr) and its exit code when not 0. Exit codes: 0 ok, 1 usage or internal error, \
         3 authorization required or failed, 4 unreachable or transport failure, 5 tool error \
         (`isError` or an unknown tool), 6 blocked by the pins (see `--pins`), 130 \
         interrupted (Ctrl-C cancels the request).\n\n\
         On a terminal, long calls show a progress bar fed by the server's progress \
         notifications (with its message), and a spinner until the first one; not when \
         stdout is not a terminal, nor with `--no-color` or `NO_COLOR`.\n\n",
    );
    for section in SECTIONS {
        let _ = write!(page, "## {}\n\n", section.title);
        if !section.text.is_empty() {
            let _ = write!(page, "{}\n\n", section.text);
        }
        for command in section.commands {
            let line = command
                .replace("$URL", &url)
                .replace("$TOKEN_URL", &token_url);
            eprintln!("$ {line}");
            let out = Command::new("sh")
                .args(["-c", &line])
                .current_dir(&work)
                .env("PATH", &path)
                .env("MCPWIRE_TOKEN_DIR", work.join("tokens"))
                .env("MCPWIRE_HISTORY", work.join("history"))
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("cannot run {line}: {e}"))?;
            let mut shown = String::from_utf8_lossy(&out.stdout).into_owned();
            shown.push_str(&String::from_utf8_lossy(&out.stderr));
            // Paths of this checkout (the demo server's, in -v) are shown
            // relative to it.
            let shown = shown
                .replace(&url, "$URL")
                .replace(&token_url, "$TOKEN_URL")
                .replace(&format!("{}/", root.display()), "");
            let _ = write!(page, "```console\n$ {command}\n{shown}");
            if !shown.is_empty() && !shown.ends_with('\n') {
                page.push('\n');
            }
            match out.status.code() {
                Some(0) => {}
                Some(code) => {
                    let _ = writeln!(page, "(exit {code})");
                }
                None => page.push_str("(killed by a signal)\n"),
            }
            page.push_str("```\n\n");
        }
    }
    drop(http);
    drop(token_http);
    let page = page.trim_end().to_owned() + "\n";
    let target = root.join("docs/cli.md");
    std::fs::write(&target, page).map_err(|e| format!("{}: {e}", target.display()))?;
    eprintln!("wrote {}", target.display());
    Ok(())
}
