//! The interop matrix: every case, in the order the report lists them.
//!
//! Each official SDK's server (the Python SDK 1.x and 2.x, fastmcp, the
//! TypeScript SDK 1.x and 2.x, rmcp) is a small script kept in
//! `crates/conformance-client/interop/` (rmcp: the
//! `crates/interop-rmcp-server` crate) taking its mode from its arguments;
//! each mode is one row. Those rows call the `count` tool with a progress
//! handler and, except where the mode answers with a single JSON body
//! (which cannot carry a notification before the result), require that
//! progress arrived. The rows of published servers (server-everything,
//! server-filesystem, mcp-server-time), of fastmcp requiring authorization
//! and the fleet follow.

use std::path::{Path, PathBuf};

/// How the case reaches its server.
pub(super) enum Transport {
    /// The client spawns `program args...` and talks over stdin/stdout.
    Stdio {
        program: PathBuf,
        args: Vec<String>,
        env: Vec<(&'static str, String)>,
    },
    /// We start `program args...` with `PORT` (and `port_arg`) set to a free
    /// port, then the client connects to `{scheme}://127.0.0.1:PORT{path}`
    /// (`http`, or `ws` for a WebSocket server).
    Http {
        program: PathBuf,
        args: Vec<String>,
        /// Whether the port is also passed as the last argument.
        port_arg: bool,
        scheme: &'static str,
        path: &'static str,
        /// Environment for both the server and the client (a shared token,
        /// where a token file goes, where Node finds the SDK).
        env: Vec<(&'static str, String)>,
    },
    /// A Claude Desktop style configuration file naming these stdio servers
    /// (name, program, arguments) and, by its URL, the `http` server (which
    /// we start), loaded and used through the manager (the client's `fleet`
    /// mode).
    Fleet {
        stdio: Vec<(&'static str, PathBuf, Vec<String>)>,
        http: (&'static str, Box<Transport>),
    },
}

pub(super) struct Case {
    pub(super) server: &'static str,
    pub(super) transport: &'static str,
    pub(super) how: Transport,
    /// Extra arguments for the client (`--tool`, `--arguments`...).
    pub(super) client_args: Vec<String>,
    /// The tool and its JSON arguments the `mcpwire` command calls, for the
    /// cases it runs (all but those needing authorization and the fleet).
    pub(super) cli: Option<(&'static str, String)>,
}

impl Case {
    pub(super) fn name(&self) -> String {
        format!("{}/{}", self.server, self.transport)
    }
}

/// The SDK servers' modes: the mode argument, the URL path (`None` for
/// stdio) and whether progress must arrive.
type Modes = &'static [(&'static str, Option<&'static str>, bool)];

const PYTHON_MODES: Modes = &[
    ("stdio", None, true),
    ("http-stateful", Some("/mcp"), true),
    ("http-stateless", Some("/mcp"), true),
    ("http-json", Some("/mcp"), false),
    ("sse", Some("/sse"), true),
];
const TS_SDK1_MODES: Modes = &[
    ("stdio", None, true),
    ("http-stateful", Some("/mcp"), true),
    ("http-stateful-json", Some("/mcp"), false),
    ("http-stateless", Some("/mcp"), true),
    ("http-stateless-json", Some("/mcp"), false),
    ("sse", Some("/sse"), true),
];
const TS_SDK2_MODES: Modes = &[
    ("stdio", None, true),
    // `auto` upgrades the response to SSE when progress comes first.
    ("http-stateless", Some("/mcp"), true),
    ("http-stateless-sse", Some("/mcp"), true),
    ("http-stateless-json", Some("/mcp"), false),
    ("http-stateful", Some("/mcp"), true),
    ("http-stateful-json", Some("/mcp"), false),
];
const RMCP_MODES: Modes = &[
    ("stdio", None, true),
    ("http-stateful", Some("/mcp"), true),
    ("http-stateless", Some("/mcp"), true),
    // rmcp answers in JSON only when nothing comes before the result.
    ("http-stateless-json", Some("/mcp"), true),
];

/// One row per mode of an SDK server: `program [prefix...] MODE [PORT]`.
fn sdk_rows(
    server: &'static str,
    program: &Path,
    prefix: &[String],
    env: &[(&'static str, String)],
    modes: Modes,
) -> Vec<Case> {
    let count = r#"{"steps":3}"#;
    modes
        .iter()
        .map(|&(mode, path, progress)| {
            let mut args = prefix.to_vec();
            args.push(mode.into());
            let how = match path {
                None => Transport::Stdio {
                    program: program.to_path_buf(),
                    args,
                    env: env.to_vec(),
                },
                Some(path) => Transport::Http {
                    program: program.to_path_buf(),
                    args,
                    port_arg: true,
                    scheme: "http",
                    path,
                    env: env.to_vec(),
                },
            };
            let mut client_args = strings(&["--tool", "count", "--arguments", count]);
            if progress {
                client_args.push("--expect-progress".into());
            }
            Case {
                server,
                transport: mode,
                how,
                client_args,
                cli: Some(("count", count.into())),
            }
        })
        .collect()
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

pub(super) fn path_str(p: &Path) -> Result<String, String> {
    p.to_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

/// The cases, in the order they are listed. `dir` holds the installed
/// servers, `rmcp` is the built rmcp server, `work` this run's scratch
/// directory.
pub(super) fn cases(
    root: &Path,
    dir: &Path,
    rmcp: &Path,
    work: &Path,
) -> Result<Vec<Case>, String> {
    let node = PathBuf::from("node");
    let node_modules = dir.join("npm").join("node_modules");
    let npm = node_modules.join("@modelcontextprotocol");
    let everything = path_str(&npm.join("server-everything").join("dist").join("index.js"))?;
    let filesystem = path_str(&npm.join("server-filesystem").join("dist").join("index.js"))?;
    // The npm server listens on every interface and has no host option: this
    // preload binds every `listen()` without a host to 127.0.0.1.
    let loopback = path_str(
        &root
            .join("crates")
            .join("transport-http")
            .join("tests")
            .join("servers")
            .join("loopback.js"),
    )?;
    let scripts = root
        .join("crates")
        .join("conformance-client")
        .join("interop");
    let script = |name: &str| path_str(&scripts.join(name));
    let python = dir.join("venv").join("bin").join("python");
    let mcpserver = script("mcpserver.py")?;
    let time = dir.join("venv").join("bin").join("mcp-server-time");
    // The Python SDK 1.x (and its WebSocket server: mcp 2.x has none).
    let python1 = dir.join("venv-mcp1").join("bin").join("python");
    let ws_script = path_str(
        &root
            .join("crates")
            .join("transport-ws")
            .join("tests")
            .join("servers")
            .join("mcp1_ws_server.py"),
    )?;
    // The TypeScript scripts are CommonJS: `require` finds the installed
    // SDKs through NODE_PATH wherever the script lives.
    let node_env = vec![("NODE_PATH", path_str(&node_modules)?)];

    // The filesystem server gets a directory of its own with one file in it.
    let fs_root = work.join("fs-root");
    std::fs::create_dir_all(&fs_root).map_err(|e| e.to_string())?;
    std::fs::write(fs_root.join("hello.txt"), "hello from mcpwire interop\n")
        .map_err(|e| e.to_string())?;
    let fs_root = path_str(&fs_root)?;
    let read_hello = serde_json::json!({ "path": format!("{fs_root}/hello.txt") }).to_string();

    let echo_json = r#"{"message":"hello from mcpwire"}"#;
    let echo = strings(&["--tool", "echo", "--arguments", echo_json]);
    let add = strings(&["--tool", "add", "--arguments", r#"{"a":2,"b":3}"#]);
    let everything_http = |mode: &str, path| Transport::Http {
        program: node.clone(),
        args: vec![
            "--require".into(),
            loopback.clone(),
            everything.clone(),
            mode.into(),
        ],
        port_arg: false,
        scheme: "http",
        path,
        env: Vec::new(),
    };
    // fastmcp servers that require authorization; the client reaches each
    // by its URL, with one authorization setting.
    let fastmcp_auth = script("fastmcp_auth.py")?;
    let fastmcp_http = |mode: &str, env| Transport::Http {
        program: python.clone(),
        args: vec![fastmcp_auth.clone(), mode.into()],
        port_arg: true,
        scheme: "http",
        path: "/mcp",
        env,
    };
    let token_file = path_str(&work.join("fastmcp-jwt.token"))?;
    // A fresh token per run: nothing to keep secret, nothing to reuse.
    let static_token = format!("interop-{:x}", std::process::id() as u64 * 0x9e37_79b9 + 17);

    let fleet_http = everything_http("streamableHttp", "/mcp");
    let mut all = Vec::new();
    all.extend(sdk_rows(
        "python-sdk-1",
        &python1,
        &[script("mcp1server.py")?],
        &[],
        PYTHON_MODES,
    ));
    all.push(Case {
        server: "python-sdk-1",
        transport: "websocket",
        how: Transport::Http {
            program: python1,
            args: vec![ws_script],
            port_arg: true,
            scheme: "ws",
            path: "/ws",
            env: Vec::new(),
        },
        client_args: add.clone(),
        cli: Some(("add", r#"{"a":2,"b":3}"#.into())),
    });
    all.extend(sdk_rows(
        "python-sdk-2",
        &python,
        std::slice::from_ref(&mcpserver),
        &[],
        PYTHON_MODES,
    ));
    all.extend(sdk_rows(
        "fastmcp",
        &python,
        &[script("fastmcp_server.py")?],
        &[],
        PYTHON_MODES,
    ));
    all.extend(sdk_rows(
        "ts-sdk-1",
        &node,
        &[script("ts_sdk1_server.cjs")?],
        &node_env,
        TS_SDK1_MODES,
    ));
    all.extend(sdk_rows(
        "ts-sdk-2",
        &node,
        &[script("ts_sdk2_server.cjs")?],
        &node_env,
        TS_SDK2_MODES,
    ));
    all.extend(sdk_rows("rmcp", rmcp, &[], &[], RMCP_MODES));

    all.extend([
        Case {
            server: "server-everything",
            transport: "stdio",
            how: Transport::Stdio {
                program: node.clone(),
                args: vec![everything.clone(), "stdio".into()],
                env: Vec::new(),
            },
            client_args: echo.clone(),
            cli: Some(("echo", echo_json.into())),
        },
        Case {
            server: "server-everything",
            transport: "streamableHttp",
            how: everything_http("streamableHttp", "/mcp"),
            client_args: echo.clone(),
            cli: Some(("echo", echo_json.into())),
        },
        Case {
            server: "server-everything",
            transport: "sse",
            how: everything_http("sse", "/sse"),
            client_args: echo,
            cli: Some(("echo", echo_json.into())),
        },
        Case {
            server: "server-filesystem",
            transport: "stdio",
            how: Transport::Stdio {
                program: node.clone(),
                args: vec![filesystem.clone(), fs_root.clone()],
                env: Vec::new(),
            },
            client_args: vec![
                "--tool".into(),
                "read_text_file".into(),
                "--arguments".into(),
                read_hello.clone(),
            ],
            cli: Some(("read_text_file", read_hello.clone())),
        },
        Case {
            server: "mcp-server-time",
            transport: "stdio",
            how: Transport::Stdio {
                program: time,
                args: Vec::new(),
                // Its local timezone comes from TZ; the client passes only a
                // safe allow-list of the environment.
                env: vec![("TZ", "UTC".into())],
            },
            client_args: strings(&[
                "--tool",
                "get_current_time",
                "--arguments",
                r#"{"timezone":"UTC"}"#,
            ]),
            cli: Some(("get_current_time", r#"{"timezone":"UTC"}"#.into())),
        },
        Case {
            server: "fastmcp",
            transport: "http+oauth",
            how: fastmcp_http("oauth", Vec::new()),
            client_args: [add.clone(), strings(&["--oauth-follow-location"])].concat(),
            cli: None,
        },
        Case {
            server: "fastmcp",
            transport: "http+bearer",
            how: fastmcp_http("bearer", vec![("MCPWIRE_INTEROP_TOKEN", static_token)]),
            client_args: [
                add.clone(),
                strings(&["--bearer-env", "MCPWIRE_INTEROP_TOKEN"]),
            ]
            .concat(),
            cli: None,
        },
        Case {
            server: "fastmcp",
            transport: "http+jwt",
            how: fastmcp_http(
                "jwt",
                vec![("MCPWIRE_INTEROP_TOKEN_FILE", token_file.clone())],
            ),
            client_args: [add, strings(&["--bearer-file", &token_file])].concat(),
            cli: None,
        },
        Case {
            server: "fleet",
            transport: "config file",
            how: Transport::Fleet {
                stdio: vec![
                    ("everything", node.clone(), vec![everything, "stdio".into()]),
                    ("filesystem", node, vec![filesystem, fs_root.clone()]),
                    ("python", python, vec![mcpserver, "stdio".into()]),
                ],
                http: ("everything-http", Box::new(fleet_http)),
            },
            client_args: vec![
                "--call".into(),
                "everything__echo".into(),
                r#"{"message":"hello from the fleet"}"#.into(),
                "--call".into(),
                "everything-http__echo".into(),
                r#"{"message":"hello from the fleet"}"#.into(),
                "--call".into(),
                "filesystem__read_text_file".into(),
                read_hello,
                "--call".into(),
                "python__add".into(),
                r#"{"a":2,"b":3}"#.into(),
            ],
            cli: None,
        },
    ]);
    Ok(all)
}
