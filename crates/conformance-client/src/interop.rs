//! Interop mode: one case against a real server, with the default client
//! settings (for HTTP, the automatic fallback decides the transport from the
//! URL alone).
//!
//! The case connects, lists the tools and calls one, reads a resource and
//! gets a prompt when the server offers them, and closes. On success it
//! prints one line saying what it did; on failure it says which step failed.

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcpwire::auth::{Auth, FollowLocation, OAuthConfig};
use mcpwire::client::types::{Arguments, Prompt, Resource};
use mcpwire::{
    Client, ClientConfig, HttpClient, HttpConfig, Server as McpServer, StdioConfig, Tool,
};
use serde_json::Value;

use crate::arguments;
use crate::scenario::chain;

/// How interop mode is invoked.
pub(crate) const USAGE: &str = "usage: mcpwire-conformance interop [--tool NAME] [--arguments JSON] \
[--expect-progress] [--resource URI] [--prompt NAME] [--prompt-arguments JSON] \
[--env KEY=VALUE]... \
[--oauth-follow-location | --bearer-env VAR | --bearer-file PATH] \
(--url URL | --stdio PROGRAM [ARG]...)";

/// How an HTTP case authorizes; without one, the default settings (OAuth
/// through a browser, idle until the server asks).
#[derive(Debug, Clone, PartialEq)]
enum Authorize {
    /// OAuth, the authorization redirect read from the authorization
    /// endpoint's `Location` (servers that approve at once).
    FollowLocation,
    /// A bearer token from an environment variable.
    BearerEnv(String),
    /// A bearer token from a file (read when connecting).
    BearerFile(String),
}

/// Where the server is.
#[derive(Debug, Clone, PartialEq)]
enum Server {
    /// Reached over HTTP at this URL.
    Url(String),
    /// Spawned: the program, its arguments and extra environment variables.
    Stdio {
        program: OsString,
        args: Vec<OsString>,
        env: Vec<(String, String)>,
    },
}

/// One interop case.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Case {
    server: Server,
    tool: Option<String>,
    arguments: Option<Value>,
    /// Whether the tool call must see at least one progress notification.
    expect_progress: bool,
    resource: Option<String>,
    prompt: Option<String>,
    prompt_arguments: Option<Arguments>,
    authorize: Option<Authorize>,
}

impl Case {
    /// Parses the arguments after `interop`.
    pub(crate) fn parse(args: &[String]) -> Result<Self, String> {
        let mut it = args.iter();
        let mut server = None;
        let (mut tool, mut arguments, mut resource, mut prompt, mut prompt_arguments) =
            (None, None, None, None, None);
        let mut env = Vec::new();
        let mut authorize = None;
        let mut expect_progress = false;
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            match flag.as_str() {
                "--tool" => tool = Some(value()?),
                "--arguments" => arguments = Some(json(&value()?)?),
                "--expect-progress" => expect_progress = true,
                "--resource" => resource = Some(value()?),
                "--prompt" => prompt = Some(value()?),
                "--prompt-arguments" => match json(&value()?)? {
                    Value::Object(map) => prompt_arguments = Some(map),
                    _ => return Err("--prompt-arguments must be a JSON object".into()),
                },
                "--env" => {
                    let pair = value()?;
                    let (k, v) = pair
                        .split_once('=')
                        .ok_or_else(|| format!("--env {pair}: expected KEY=VALUE"))?;
                    env.push((k.to_owned(), v.to_owned()));
                }
                "--oauth-follow-location" => authorize = Some(Authorize::FollowLocation),
                "--bearer-env" => authorize = Some(Authorize::BearerEnv(value()?)),
                "--bearer-file" => authorize = Some(Authorize::BearerFile(value()?)),
                "--url" => server = Some(Server::Url(value()?)),
                "--stdio" => {
                    let program = value()?.into();
                    let args = it.by_ref().map(OsString::from).collect();
                    server = Some(Server::Stdio {
                        program,
                        args,
                        env: Vec::new(),
                    });
                }
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        let mut server = server.ok_or("no server: give --url or --stdio")?;
        match &mut server {
            Server::Stdio { env: e, .. } => *e = env,
            Server::Url(_) if !env.is_empty() => {
                return Err("--env only applies to --stdio servers".into());
            }
            Server::Url(_) => {}
        }
        Ok(Case {
            server,
            tool,
            arguments,
            expect_progress,
            resource,
            prompt,
            prompt_arguments,
            authorize,
        })
    }

    /// Runs the case; prints a one-line summary on success.
    pub(crate) async fn run(self) -> Result<(), String> {
        let config = ClientConfig::new();
        let (client, transport, _http) = match &self.server {
            Server::Url(url) if is_websocket(url) => {
                if self.authorize.is_some() {
                    return Err("authorization options apply to HTTP servers only".into());
                }
                (connect_ws(url, config).await?, "websocket", None)
            }
            Server::Url(url) => {
                let http =
                    HttpClient::new(HttpConfig::new()).map_err(|e| format!("HTTP client: {e}"))?;
                let mut server = McpServer::http(url.clone()).client(http.clone());
                match &self.authorize {
                    None => {}
                    Some(Authorize::FollowLocation) => {
                        let step =
                            FollowLocation::new(http.fetcher(), "http://127.0.0.1:9/callback");
                        server = server.auth(Auth::oauth(OAuthConfig::new().redirect(step)));
                    }
                    Some(Authorize::BearerEnv(var)) => {
                        server =
                            server.auth(Auth::bearer_from_env(var).map_err(|e| e.to_string())?);
                    }
                    Some(Authorize::BearerFile(path)) => {
                        let token =
                            std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
                        server = server.bearer_token(token.trim()).map_err(|e| chain(&e))?;
                    }
                }
                let client = mcpwire::connect(server, config)
                    .await
                    .map_err(|e| format!("connect {url}: {}", chain(&e)))?;
                let mode = http.cached_mode(url).map_or("http", |m| m.kind());
                (client, mode, Some(http))
            }
            Server::Stdio { program, args, env } => {
                let stdio = StdioConfig::new(program)
                    .args(args)
                    .envs(env.iter().map(|(k, v)| (k, v)));
                let client = mcpwire::connect_stdio(stdio, config)
                    .await
                    .map_err(|e| format!("connect: {}", chain(&e)))?;
                (client, "stdio", None)
            }
        };
        // The era and version first: `cargo xtask interop` reads them there.
        let chose = format!(
            "era={} {}",
            client.era().map_or("none", |e| e.as_str()),
            client.protocol_version().unwrap_or_else(|| "none".into())
        );
        let outcome = self.exercise(&client).await;
        client.close().await;
        let done = outcome?;
        println!("{chose} {transport}: {done}");
        Ok(())
    }

    /// Everything between connecting and closing; returns what was done.
    async fn exercise(&self, client: &Client) -> Result<String, String> {
        let server = client
            .server_info()
            .map(|i| format!("{} {}", i.name, i.version).trim().to_owned())
            .unwrap_or_default();
        let mut done = vec![server];
        let caps = client.server_capabilities().unwrap_or_default();

        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list: {}", chain(&e)))?;
        let tool = pick(&tools, self.tool.as_deref(), |t: &Tool| &t.name)
            .ok_or_else(|| format!("no tool to call among {} listed", tools.len()))?;
        let args = self
            .arguments
            .clone()
            .unwrap_or_else(|| arguments::from_schema(&tool.input_schema));
        // Every call carries a progress handler (so a progress token); the
        // notifications that arrive before the result are counted.
        let progress = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&progress);
        let result = client
            .call_tool(&tool.name, &args)
            .on_progress(move |_| {
                seen.fetch_add(1, Ordering::Relaxed);
            })
            .await
            .map_err(|e| format!("tools/call {}: {}", tool.name, chain(&e)))?;
        if result.is_error == Some(true) {
            return Err(format!(
                "tools/call {}: the tool reported an error: {}",
                tool.name,
                result.text()
            ));
        }
        let progress = progress.load(Ordering::Relaxed);
        if self.expect_progress && progress == 0 {
            return Err(format!(
                "tools/call {}: no progress notification arrived before the result",
                tool.name
            ));
        }
        done.push(format!(
            "{} tools, called {} ({progress} progress)",
            tools.len(),
            tool.name
        ));

        if caps.resources.is_some() {
            let resources = client
                .list_all_resources()
                .await
                .map_err(|e| format!("resources/list: {}", chain(&e)))?;
            let uri = match &self.resource {
                Some(uri) => Some(uri.clone()),
                None => resources.first().map(|r: &Resource| r.uri.clone()),
            };
            match uri {
                Some(uri) => {
                    let read = client
                        .read_resource(&uri)
                        .await
                        .map_err(|e| format!("resources/read {uri}: {}", chain(&e)))?;
                    if read.contents.is_empty() {
                        return Err(format!("resources/read {uri}: no contents"));
                    }
                    done.push(format!("{} resources, read {uri}", resources.len()));
                }
                None => done.push("0 resources".into()),
            }
        }

        if caps.prompts.is_some() {
            let prompts = client
                .list_all_prompts()
                .await
                .map_err(|e| format!("prompts/list: {}", chain(&e)))?;
            // Without a name, the first prompt that needs no arguments.
            let prompt = match &self.prompt {
                Some(name) => pick(&prompts, Some(name), |p: &Prompt| &p.name),
                None => prompts
                    .iter()
                    .find(|p| required_arguments(p).is_empty())
                    .or(prompts.first()),
            };
            match prompt {
                Some(prompt) => {
                    let args = self.prompt_arguments.clone().unwrap_or_else(|| {
                        required_arguments(prompt)
                            .into_iter()
                            .map(|a| (a, Value::from("mcpwire")))
                            .collect()
                    });
                    let got = client
                        .get_prompt(&prompt.name, Some(args))
                        .await
                        .map_err(|e| format!("prompts/get {}: {}", prompt.name, chain(&e)))?;
                    if got.messages.is_empty() {
                        return Err(format!("prompts/get {}: no messages", prompt.name));
                    }
                    done.push(format!("{} prompts, got {}", prompts.len(), prompt.name));
                }
                None => done.push("0 prompts".into()),
            }
        }
        Ok(done.join("; "))
    }
}

fn is_websocket(url: &str) -> bool {
    let scheme = url.split(':').next().unwrap_or_default();
    scheme.eq_ignore_ascii_case("ws") || scheme.eq_ignore_ascii_case("wss")
}

/// Connects over a WebSocket with the default settings, through the
/// facade's general `connect` (the URL's scheme picks the transport).
async fn connect_ws(url: &str, config: ClientConfig) -> Result<Client, String> {
    let server = mcpwire::Server::url(url).map_err(|e| format!("{url}: {}", chain(&e)))?;
    mcpwire::connect(server, config)
        .await
        .map_err(|e| format!("connect {url}: {}", chain(&e)))
}

/// The item named `name`, or the first one when no name is given.
fn pick<'a, T>(
    items: &'a [T],
    name: Option<&str>,
    name_of: impl Fn(&T) -> &String,
) -> Option<&'a T> {
    match name {
        Some(name) => items.iter().find(|i| name_of(i) == name),
        None => items.first(),
    }
}

fn required_arguments(prompt: &Prompt) -> Vec<String> {
    prompt
        .arguments
        .iter()
        .flatten()
        .filter(|a| a.required == Some(true))
        .map(|a| a.name.clone())
        .collect()
}

fn json(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("`{text}` is not JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn stdio_takes_the_rest_of_the_line_and_env_goes_to_it() {
        let case = Case::parse(&args(&[
            "--tool",
            "echo",
            "--arguments",
            r#"{"m":1}"#,
            "--env",
            "TZ=UTC",
            "--expect-progress",
            "--stdio",
            "node",
            "server.js",
            "--tool",
            "x",
        ]))
        .unwrap();
        assert_eq!(case.tool.as_deref(), Some("echo"));
        assert!(case.expect_progress);
        assert_eq!(case.arguments, Some(serde_json::json!({"m": 1})));
        assert_eq!(
            case.server,
            Server::Stdio {
                program: "node".into(),
                args: vec!["server.js".into(), "--tool".into(), "x".into()],
                env: vec![("TZ".into(), "UTC".into())],
            }
        );
    }

    #[test]
    fn websocket_urls_are_told_from_http_ones() {
        assert!(is_websocket("ws://127.0.0.1:1/ws"));
        assert!(is_websocket("WSS://example.com/"));
        assert!(!is_websocket("http://127.0.0.1:1/mcp"));
        assert!(!is_websocket("wsx://a/"));
    }

    #[test]
    fn bad_invocations_are_refused() {
        assert!(Case::parse(&args(&["--tool", "x"])).is_err());
        assert!(Case::parse(&args(&["--url"])).is_err());
        assert!(Case::parse(&args(&["--arguments", "{", "--url", "u"])).is_err());
        assert!(Case::parse(&args(&["--prompt-arguments", "[]", "--url", "u"])).is_err());
        assert!(Case::parse(&args(&["--env", "A=1", "--url", "u"])).is_err());
        assert!(Case::parse(&args(&["--bogus", "--url", "u"])).is_err());
    }
}
