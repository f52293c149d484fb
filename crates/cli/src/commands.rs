//! The commands that talk to a connected server: each runs its requests
//! and returns what to show, as MCP-shaped JSON and as text for people.

use std::path::Path;
use std::time::{Duration, Instant};

use mcpwire::client::types::{CompletionReference, LoggingLevel, Prompt};
use mcpwire::client::{CancellationToken, LevelApplied};
use mcpwire::manager::ItemKind;
use mcpwire::{Client, Era};
use serde_json::{Map, Value, json};

use crate::args::Command;
use crate::failure::{Exit, Failure};
use crate::pins::{Held, PinCheck};
use crate::progress::Display;
use crate::{render, typed_args};

/// What a command shows: one MCP-shaped object (for `--format json`), the
/// items of a list (one line each for `--format ndjson`), and text.
#[derive(Debug)]
pub(crate) struct Shown {
    /// The object for `--format json`.
    pub(crate) json: Value,
    /// One value per `ndjson` line; `None` for a single object.
    pub(crate) items: Option<Vec<Value>>,
    /// The text for people.
    pub(crate) text: String,
    /// Shown, yet a failure (a tool's `isError`: exit 5).
    pub(crate) failure: Option<Failure>,
}

impl Shown {
    fn one(json: Value, text: String) -> Self {
        Self {
            json,
            items: None,
            text,
            failure: None,
        }
    }

    fn list(json: Value, member: &str, text: String) -> Self {
        let items = json[member].as_array().cloned().unwrap_or_default();
        Self {
            json,
            items: Some(items),
            text,
            failure: None,
        }
    }
}

/// What every request of a command shares.
pub(crate) struct Run<'a> {
    /// The connected client.
    pub(crate) client: &'a Client,
    /// Cancelled on Ctrl-C.
    pub(crate) cancel: CancellationToken,
    /// The per-request timeout.
    pub(crate) timeout: Duration,
    /// Whether to draw progress.
    pub(crate) fancy: bool,
    /// Whether argument names are checked against the schema.
    pub(crate) names: typed_args::Names,
    /// `--pins`: the listings are held against the pin file.
    pub(crate) pins: Option<&'a PinCheck>,
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Runs `command` (one that needs a connection).
pub(crate) async fn run(r: &Run<'_>, command: &Command) -> Result<Shown, Failure> {
    let c = r.client;
    match command {
        Command::Info => Ok(info(c)),
        Command::Tools { schema } => {
            let (tools, _) = listed_tools(r).await?;
            let text = render::tools(&tools, *schema, render::width());
            Ok(Shown::list(
                json!({ "tools": to_value(&tools) }),
                "tools",
                text,
            ))
        }
        Command::Tool { name } => {
            let tool = find_tool(r, name).await?;
            Ok(Shown::one(to_value(&tool), render::tool(&tool)))
        }
        Command::Call {
            tool,
            args,
            json_args,
            structured,
        } => {
            let structured = if *structured {
                render::Structured::Always
            } else {
                render::Structured::WhenItAdds
            };
            call(r, tool, args, json_args.as_deref(), structured).await
        }
        Command::Resources | Command::Templates | Command::Read { .. }
            if quarantined(r).await? =>
        {
            Err(Failure::new(
                Exit::Unapproved,
                "the server is quarantined by --pins: a definition changed since it was approved",
            ))
        }
        Command::Resources => {
            let list = c
                .list_all_resources()
                .cancel_token(r.cancel.clone())
                .timeout(r.timeout)
                .await
                .map_err(|e| Failure::client("listing resources failed", e))?;
            let text = render::resources(&list);
            Ok(Shown::list(
                json!({ "resources": to_value(&list) }),
                "resources",
                text,
            ))
        }
        Command::Templates => {
            let list = c
                .list_all_resource_templates()
                .cancel_token(r.cancel.clone())
                .timeout(r.timeout)
                .await
                .map_err(|e| Failure::client("listing resource templates failed", e))?;
            let text = render::templates(&list);
            let json = json!({ "resourceTemplates": to_value(&list) });
            Ok(Shown::list(json, "resourceTemplates", text))
        }
        Command::Read { uri, output } => {
            let result = c
                .read_resource(uri)
                .cancel_token(r.cancel.clone())
                .timeout(r.timeout)
                .await
                .map_err(|e| Failure::client(&format!("reading {uri} failed"), e))?;
            let text = match output {
                Some(path) => write_contents(path, &result.contents)?,
                None => render::read(&result),
            };
            Ok(Shown::one(to_value(&result), text))
        }
        Command::Prompts => {
            let (list, _) = listed_prompts(r).await?;
            let text = render::prompts(&list);
            Ok(Shown::list(
                json!({ "prompts": to_value(&list) }),
                "prompts",
                text,
            ))
        }
        Command::Prompt { name, args } => {
            let args = typed_args::strings(args)
                .map_err(|e| Failure::caused(Exit::Usage, "bad prompt arguments", e))?;
            if let Some(pins) = r.pins
                && listed_prompts(r).await?.1.holds(ItemKind::Prompt, name)
            {
                return Err(pins.refused(ItemKind::Prompt, name));
            }
            if r.names == typed_args::Names::Checked {
                let declared = prompt_arguments(r, name).await?;
                typed_args::check_prompt(&args, &declared).map_err(|e| {
                    Failure::caused(
                        Exit::Usage,
                        format!("the arguments do not fit prompt {name:?}"),
                        e,
                    )
                })?;
            }
            let result = c
                .get_prompt(name, Some(args))
                .cancel_token(r.cancel.clone())
                .timeout(r.timeout)
                .await
                .map_err(|e| Failure::client(&format!("getting prompt {name:?} failed"), e))?;
            Ok(Shown::one(to_value(&result), render::prompt(&result)))
        }
        Command::Complete {
            prompt,
            resource,
            argument,
            value,
            context,
        } => {
            if let (Some(pins), Some(name)) = (r.pins, prompt)
                && listed_prompts(r).await?.1.holds(ItemKind::Prompt, name)
            {
                return Err(pins.refused(ItemKind::Prompt, name));
            }
            let reference: CompletionReference = match (prompt, resource) {
                (Some(name), _) => {
                    serde_json::from_value(json!({"type": "ref/prompt", "name": name}))
                }
                (None, Some(uri)) => {
                    serde_json::from_value(json!({"type": "ref/resource", "uri": uri}))
                }
                (None, None) => return Err(Failure::usage("give --prompt NAME or --resource URI")),
            }
            .map_err(|e| Failure::caused(Exit::Usage, "bad completion reference", e))?;
            let context = typed_args::strings(context)
                .map_err(|e| Failure::caused(Exit::Usage, "bad completion context", e))?;
            let context = (!context.is_empty()).then_some(context);
            let result = c
                .complete(reference, argument, value, context)
                .cancel_token(r.cancel.clone())
                .timeout(r.timeout)
                .await
                .map_err(|e| Failure::client("completion failed", e))?;
            let mut text: String = result
                .completion
                .values
                .iter()
                .map(|v| format!("{v}\n"))
                .collect();
            if result.completion.has_more == Some(true) {
                text.push_str("(more)\n");
            }
            let json = to_value(&result);
            let items = json["completion"]["values"].as_array().cloned();
            Ok(Shown {
                json,
                items,
                text,
                failure: None,
            })
        }
        Command::Ping => {
            let started = Instant::now();
            c.ping()
                .cancel_token(r.cancel.clone())
                .timeout(r.timeout)
                .await
                .map_err(|e| Failure::client("ping failed", e))?;
            let ms = millis(started.elapsed());
            // The JSON stays the result MCP defines for `ping`.
            let how = match c.era() {
                Some(Era::Modern) => " (server/discover: the stateless revision has no ping)",
                _ => "",
            };
            Ok(Shown::one(json!({}), format!("pong in {ms:.1} ms{how}\n")))
        }
        Command::LogLevel { level } => {
            let parsed: LoggingLevel = serde_json::from_value(Value::String(level.to_lowercase()))
                .map_err(|_| {
                    Failure::usage(format!(
                        "unknown log level {level:?} (debug, info, notice, warning, error, critical, alert, emergency)"
                    ))
                })?;
            let applied = c
                .set_logging_level(parsed)
                .cancel_token(r.cancel.clone())
                .timeout(r.timeout)
                .await
                .map_err(|e| Failure::client("setting the log level failed", e))?;
            let level = level.to_lowercase();
            // The JSON stays the result MCP defines for `logging/setLevel`;
            // the text says what happened.
            let text = match applied {
                LevelApplied::Stamped => format!(
                    "this server speaks the stateless revision ({}), which has no logging/setLevel: \
                         each later request of this session asks for {level} messages instead \
                         (`mcpwire shell` keeps one session for many commands)\n",
                    c.protocol_version().unwrap_or_default()
                ),
                _ => format!("log level set to {level}\n"),
            };
            Ok(Shown::one(json!({}), text))
        }
        Command::Shell
        | Command::Servers
        | Command::Login { .. }
        | Command::Logout { .. }
        | Command::Pins(_)
        | Command::Serve { .. } => Err(Failure::usage("this command does not run here")),
    }
}

/// Runs `command`; Ctrl-C cancels its request (the server is told) and
/// fails with exit 130.
pub(crate) async fn interruptible(r: &Run<'_>, command: &Command) -> Result<Shown, Failure> {
    let running = run(r, command);
    tokio::pin!(running);
    tokio::select! {
        outcome = &mut running => return outcome,
        _ = tokio::signal::ctrl_c() => r.cancel.cancel(),
    }
    // The request ends as cancelled once the cancellation is queued; bound
    // the wait all the same.
    match tokio::time::timeout(Duration::from_secs(2), running).await {
        Ok(Ok(shown)) => Ok(shown),
        _ => Err(Failure::new(
            Exit::Interrupted,
            "interrupted: the request was cancelled",
        )),
    }
}

/// A duration in milliseconds, for people.
fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn info(c: &Client) -> Shown {
    let init = c
        .initialize_result()
        .map(|i| to_value(&*i))
        .unwrap_or(Value::Null);
    let text = info_text(&init);
    Shown::one(init, text)
}

/// `info`'s lines for an `initialize` result (or the stateless era's
/// equivalent).
fn info_text(init: &Value) -> String {
    let mut text = String::new();
    let s = &init["serverInfo"];
    let name = s["name"].as_str().unwrap_or("?");
    text.push_str(&format!("server        {name}"));
    // A server may send an empty version: no trailing blank for it.
    if let Some(version) = s["version"].as_str().filter(|v| !v.trim().is_empty()) {
        text.push(' ');
        text.push_str(version);
    }
    if let Some(title) = s["title"].as_str() {
        text.push_str(&format!(" ({title})"));
    }
    text.push('\n');
    text.push_str(&format!(
        "protocol      {}\n",
        init["protocolVersion"].as_str().unwrap_or("?")
    ));
    let caps: Vec<String> = init["capabilities"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let flags: Vec<&str> = v
                        .as_object()
                        .map(|f| {
                            f.iter()
                                .filter(|(_, on)| **on == Value::Bool(true))
                                .map(|(f, _)| f.as_str())
                                .collect()
                        })
                        .unwrap_or_default();
                    if flags.is_empty() {
                        k.clone()
                    } else {
                        format!("{k} ({})", flags.join(", "))
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    if caps.is_empty() {
        text.push_str("capabilities  none\n");
    } else {
        text.push_str(&format!("capabilities  {}\n", caps.join(", ")));
    }
    if let Some(i) = init["instructions"].as_str() {
        text.push_str(&format!("instructions  {}\n", i.trim()));
    }
    text
}

/// The server's tools, held against `--pins` if given: what it holds back
/// is left out (and returned).
async fn listed_tools(r: &Run<'_>) -> Result<(Vec<mcpwire::Tool>, Held), Failure> {
    let tools = r
        .client
        .list_all_tools()
        .cancel_token(r.cancel.clone())
        .timeout(r.timeout)
        .await
        .map_err(|e| Failure::client("listing tools failed", e))?;
    let Some(pins) = r.pins else {
        return Ok((tools, Held::default()));
    };
    let offers_prompts = r
        .client
        .server_capabilities()
        .is_some_and(|c| c.prompts.is_some());
    let prompts = if offers_prompts {
        list_prompts(r).await?
    } else {
        Vec::new()
    };
    let held = pins.hold(&tools, &prompts)?;
    let tools = tools
        .into_iter()
        .filter(|t| !held.holds(ItemKind::Tool, &t.name))
        .collect();
    Ok((tools, held))
}

/// The tool and prompt names the server offers, less what `--pins` holds
/// back: what the shell completes. A listing that fails offers nothing of
/// its kind; a pin file that cannot be used offers nothing at all (a name
/// not checked is not offered), its failure said on stderr.
pub(crate) async fn offered_names(r: &Run<'_>) -> Vec<String> {
    let tools = r.client.list_all_tools().timeout(r.timeout).await;
    let prompts = r.client.list_all_prompts().timeout(r.timeout).await;
    let (tools, prompts) = (tools.unwrap_or_default(), prompts.unwrap_or_default());
    let held = match r.pins.map(|pins| pins.hold(&tools, &prompts)) {
        None => Held::default(),
        Some(Ok(held)) => held,
        Some(Err(failure)) => {
            eprintln!("mcpwire: {}", failure.text(crate::failure::Detail::Short));
            return Vec::new();
        }
    };
    let tools = tools
        .into_iter()
        .map(|t| t.name)
        .filter(|name| !held.holds(ItemKind::Tool, name));
    let prompts = prompts
        .into_iter()
        .map(|p| p.name)
        .filter(|name| !held.holds(ItemKind::Prompt, name));
    tools.chain(prompts).collect()
}

/// The server's prompts, held against `--pins` if given: what it holds
/// back is left out (and returned).
async fn listed_prompts(r: &Run<'_>) -> Result<(Vec<Prompt>, Held), Failure> {
    let prompts = list_prompts(r).await?;
    let Some(pins) = r.pins else {
        return Ok((prompts, Held::default()));
    };
    let offers_tools = r
        .client
        .server_capabilities()
        .is_some_and(|c| c.tools.is_some());
    let tools = if offers_tools {
        r.client
            .list_all_tools()
            .cancel_token(r.cancel.clone())
            .timeout(r.timeout)
            .await
            .map_err(|e| Failure::client("listing tools failed", e))?
    } else {
        Vec::new()
    };
    let held = pins.hold(&tools, &prompts)?;
    let prompts = prompts
        .into_iter()
        .filter(|p| !held.holds(ItemKind::Prompt, &p.name))
        .collect();
    Ok((prompts, held))
}

async fn list_prompts(r: &Run<'_>) -> Result<Vec<Prompt>, Failure> {
    r.client
        .list_all_prompts()
        .cancel_token(r.cancel.clone())
        .timeout(r.timeout)
        .await
        .map_err(|e| Failure::client("listing prompts failed", e))
}

/// With `--pins`, whether the server is quarantined (every listing is
/// held against the pins first).
async fn quarantined(r: &Run<'_>) -> Result<bool, Failure> {
    match r.pins {
        Some(_) => Ok(listed_tools(r).await?.1.quarantined()),
        None => Ok(false),
    }
}

async fn find_tool(r: &Run<'_>, name: &str) -> Result<mcpwire::Tool, Failure> {
    let (tools, held) = listed_tools(r).await?;
    if let Some(pins) = r.pins
        && held.holds(ItemKind::Tool, name)
    {
        return Err(pins.refused(ItemKind::Tool, name));
    }
    let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    tools.into_iter().find(|t| t.name == name).ok_or_else(|| {
        Failure::new(
            Exit::Tool,
            format!("no tool {name:?} (the server has: {})", names.join(", ")),
        )
    })
}

/// `--args`: inline JSON, `@FILE`, or `-` for stdin.
fn json_args(raw: &str) -> Result<Map<String, Value>, Failure> {
    let text = if raw == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| Failure::caused(Exit::Usage, "cannot read --args from stdin", e))?
    } else if let Some(path) = raw.strip_prefix('@') {
        std::fs::read_to_string(path).map_err(|e| {
            Failure::caused(Exit::Usage, format!("cannot read --args file {path}"), e)
        })?
    } else {
        raw.to_owned()
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Failure::usage("--args must be a JSON object")),
        Err(e) => Err(Failure::caused(Exit::Usage, "--args is not valid JSON", e)),
    }
}

/// The arguments prompt `name` declares (name, required), from the
/// listing; none if the server does not list it (the server judges).
async fn prompt_arguments(r: &Run<'_>, name: &str) -> Result<Vec<(String, bool)>, Failure> {
    let prompts = list_prompts(r).await?;
    Ok(prompts
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| {
            p.arguments
                .unwrap_or_default()
                .into_iter()
                .map(|a| (a.name, a.required.unwrap_or(false)))
                .collect()
        })
        .unwrap_or_default())
}

async fn call(
    r: &Run<'_>,
    name: &str,
    pairs: &[String],
    raw_json: Option<&str>,
    structured: render::Structured,
) -> Result<Shown, Failure> {
    let base = raw_json.map(json_args).transpose()?;
    let tool = find_tool(r, name).await?;
    let args = typed_args::build(base, pairs, Some(&tool.input_schema), r.names).map_err(|e| {
        Failure::caused(
            Exit::Usage,
            format!("the arguments do not fit tool {name:?}"),
            e,
        )
    })?;
    let display = Display::start(name, r.fancy);
    let shown = display.clone();
    let outcome = r
        .client
        .call_tool(name, &Value::Object(args))
        .on_progress(move |p| shown.update(p))
        .cancel_token(r.cancel.clone())
        .timeout(r.timeout)
        .await;
    display.finish();
    let result = outcome.map_err(|e| Failure::tool_call(name, e))?;
    let mut shown = Shown::one(to_value(&result), render::call_result(&result, structured));
    if result.is_error == Some(true) {
        shown.failure = Some(Failure::new(
            Exit::Tool,
            format!("tool {name:?} reported an error"),
        ));
    }
    Ok(shown)
}

/// Writes a resource's contents to `path`: text as is, blobs decoded.
fn write_contents(path: &Path, contents: &[mcpwire::ResourceContents]) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    for c in contents {
        match (&c.text, &c.blob) {
            (Some(text), _) => bytes.extend_from_slice(text.as_bytes()),
            (None, Some(blob)) => {
                use base64::Engine as _;
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(blob.trim())
                    .map_err(|e| {
                        Failure::caused(Exit::Usage, format!("{} is not valid base64", c.uri), e)
                    })?;
                bytes.extend_from_slice(&decoded);
            }
            (None, None) => {}
        }
    }
    std::fs::write(path, &bytes)
        .map_err(|e| Failure::caused(Exit::Usage, format!("cannot write {}", path.display()), e))?;
    Ok(format!(
        "wrote {} bytes to {}\n",
        bytes.len(),
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_shown_in_milliseconds() {
        assert_eq!(millis(Duration::from_micros(1500)), 1.5);
        assert_eq!(millis(Duration::from_secs(2)), 2000.0);
    }

    #[test]
    fn info_leaves_out_an_empty_version_without_a_trailing_blank() {
        let text = info_text(&json!({"serverInfo": {"name": "s", "version": ""},
            "protocolVersion": "2025-11-25", "capabilities": {}}));
        assert!(text.starts_with("server        s\n"), "{text:?}");
        assert!(text.lines().all(|l| l == l.trim_end()), "{text:?}");
        let text = info_text(&json!({"serverInfo": {"name": "s", "version": "1.2"}}));
        assert!(text.starts_with("server        s 1.2\n"), "{text:?}");
    }
}
