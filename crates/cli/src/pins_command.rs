//! `mcpwire pins list|approve|forget`, and how a server is named in the
//! pin file: a configured server by its name, a URL without its user
//! information, query and fragment (where tokens hide), a command line as
//! its words joined by spaces with credential arguments redacted (as
//! `servers` shows it), a lasting fleet (`-s unix:PATH`) as `unix:PATH`.
//! The same server reached the same way always has the same name, and the
//! pin file never holds a secret.

use std::path::Path;

use mcpwire::client::types::Prompt;
use mcpwire::manager::{ItemKind, PinFinding, Pins};
use mcpwire::{Client, Tool};
use serde_json::{Value, json};

use crate::args::{Global, PinsCommand};
use crate::commands::Shown;
use crate::failure::Failure;
use crate::pins::{self, PinCheck};
use crate::target::{self, Target};
use crate::{render, servers, tty};

/// The name `target`'s pins have in the pin file.
pub(crate) fn server_key(target: &Target) -> String {
    match target {
        Target::Entry(entry) => entry.name.clone(),
        Target::Url(raw) => url_key(raw),
        Target::Command(argv) => servers::redact_args(&argv.join(" ")),
        // A lasting fleet (`mcpwire serve --socket`): its tools, named
        // `server__tool`, are pinned under the socket's path.
        Target::Unix(path) => format!("unix:{}", path.display()),
    }
}

/// A URL without what may be a credential: user information, query and
/// fragment.
fn url_key(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        Err(_) => raw.split(['?', '#']).next().unwrap_or_default().to_owned(),
    }
}

/// With `--pins` (or `$MCPWIRE_PINS`), the check of `target`'s listings.
pub(crate) fn check(global: &Global, target: &Target) -> Result<Option<PinCheck>, Failure> {
    let Some(path) = pins::pin_file(global) else {
        return Ok(None);
    };
    let policy = pins::policy(global.pin_policy);
    PinCheck::open(
        path,
        server_key(target),
        policy,
        pins::json_findings(global),
    )
    .map(Some)
}

fn needs_file(global: &Global) -> Result<std::path::PathBuf, Failure> {
    pins::pin_file(global).ok_or_else(|| {
        Failure::usage(format!(
            "no pin file: give --pins FILE (or set {})",
            pins::PINS_VAR
        ))
    })
}

/// Runs `mcpwire pins ...`.
pub(crate) async fn run(
    global: &Global,
    server_command: &[String],
    command: &PinsCommand,
) -> Result<Shown, Failure> {
    let path = needs_file(global)?;
    match command {
        PinsCommand::List { server } => list(&pins::load(&path)?, server.as_deref()),
        PinsCommand::Forget { server, name } => forget(&path, server, name.as_deref()),
        PinsCommand::Approve { server, yes } => {
            let chosen = target::select(global, server_command, server.as_deref())?;
            let client = target::connect(global, &chosen).await?;
            let listed = listing(&client, global).await;
            client.close().await;
            let (tools, prompts) = listed?;
            approve(&path, &server_key(&chosen), &tools, &prompts, *yes)
        }
    }
}

fn kind_of(word: &str) -> ItemKind {
    if word == "prompt" {
        ItemKind::Prompt
    } else {
        ItemKind::Tool
    }
}

fn short(digest: &str) -> String {
    digest.chars().take("sha256:".len() + 16).collect()
}

fn list(pins: &Pins, server: Option<&str>) -> Result<Shown, Failure> {
    let Some(server) = server else {
        let items: Vec<Value> = pins
            .servers()
            .map(|s| {
                json!({
                    "server": s,
                    "tools": pins.pinned(s, ItemKind::Tool).len(),
                    "prompts": pins.pinned(s, ItemKind::Prompt).len(),
                })
            })
            .collect();
        let rows: Vec<Vec<String>> = items
            .iter()
            .map(|i| {
                vec![
                    i["server"].as_str().unwrap_or_default().to_owned(),
                    i["tools"].to_string(),
                    i["prompts"].to_string(),
                ]
            })
            .collect();
        let text = if rows.is_empty() {
            "no pins yet: a command run with --pins pins what it lists\n".to_owned()
        } else {
            render::table(&["SERVER", "TOOLS", "PROMPTS"], &rows)
        };
        return Ok(shown_list(json!({ "servers": items }), "servers", text));
    };
    if !pins.servers().any(|s| s == server) {
        return Err(no_pins(pins, server));
    }
    let items: Vec<Value> = ["tool", "prompt"]
        .into_iter()
        .flat_map(|kind| {
            pins.pinned(server, kind_of(kind))
                .into_iter()
                .map(move |(name, digest)| json!({"kind": kind, "name": name, "digest": digest}))
        })
        .collect();
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            vec![
                i["kind"].as_str().unwrap_or_default().to_owned(),
                i["name"].as_str().unwrap_or_default().to_owned(),
                short(i["digest"].as_str().unwrap_or_default()),
            ]
        })
        .collect();
    let text = if rows.is_empty() {
        format!("{server} has no pinned tools or prompts\n")
    } else {
        render::table(&["KIND", "NAME", "DIGEST"], &rows)
    };
    let json = json!({ "server": server, "pins": items });
    Ok(shown_list(json, "pins", text))
}

fn shown_list(json: Value, member: &str, text: String) -> Shown {
    let items = json[member].as_array().cloned();
    Shown {
        json,
        items,
        text,
        failure: None,
    }
}

fn no_pins(pins: &Pins, server: &str) -> Failure {
    let known: Vec<&str> = pins.servers().collect();
    Failure::usage(if known.is_empty() {
        format!("no pins for {server:?}: the pin file has none")
    } else {
        format!(
            "no pins for {server:?} (the pin file has: {})",
            known.join(", ")
        )
    })
}

fn forget(path: &Path, server: &str, name: Option<&str>) -> Result<Shown, Failure> {
    // Under the file's lock: a command pinning meanwhile keeps its pins.
    let text = pins::update(path, |pins| forget_in(pins, server, name))??;
    let json = json!({ "server": server, "forgot": name.map_or(Value::Null, |n| json!(n)) });
    Ok(Shown {
        json,
        items: None,
        text,
        failure: None,
    })
}

/// Forgets `server`'s pins (or its item `name`) in `pins`; what to say.
fn forget_in(pins: &mut Pins, server: &str, name: Option<&str>) -> Result<String, Failure> {
    match name {
        None => {
            if !pins.forget(server) {
                return Err(no_pins(pins, server));
            }
            Ok(format!(
                "forgot the pins of {server}: what it lists next is pinned afresh\n"
            ))
        }
        Some(name) => {
            let tool = pins.forget_item(server, ItemKind::Tool, name);
            let prompt = pins.forget_item(server, ItemKind::Prompt, name);
            if !tool && !prompt {
                return Err(Failure::usage(format!(
                    "{server} has no pinned tool or prompt {name:?} (see `mcpwire pins list`)"
                )));
            }
            let kind = if tool { "tool" } else { "prompt" };
            Ok(format!(
                "forgot the pin of {kind} {name:?} of {server}: its next listing pins it afresh\n"
            ))
        }
    }
}

/// Everything the server lists now: tools and prompts, as far as it
/// offers them.
async fn listing(client: &Client, global: &Global) -> Result<(Vec<Tool>, Vec<Prompt>), Failure> {
    let caps = client.server_capabilities().unwrap_or_default();
    let timeout = std::time::Duration::try_from_secs_f64(global.timeout)
        .unwrap_or(std::time::Duration::from_secs(60));
    let tools = if caps.tools.is_some() {
        client
            .list_all_tools()
            .timeout(timeout)
            .await
            .map_err(|e| Failure::client("listing tools failed", e))?
    } else {
        Vec::new()
    };
    let prompts = if caps.prompts.is_some() {
        client
            .list_all_prompts()
            .timeout(timeout)
            .await
            .map_err(|e| Failure::client("listing prompts failed", e))?
    } else {
        Vec::new()
    };
    Ok((tools, prompts))
}

/// One difference between the pins and what the server lists now.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Change {
    kind: ItemKind,
    name: String,
    what: ChangeKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ChangeKind {
    New,
    Changed,
    Gone,
    Renamed { from: String },
}

/// What approving `after` over `before` changes for `server`.
fn changes(before: &Pins, after: &Pins, server: &str) -> Vec<Change> {
    let mut out = Vec::new();
    for kind in [ItemKind::Tool, ItemKind::Prompt] {
        let old = before.pinned(server, kind);
        let new = after.pinned(server, kind);
        let digest_of = |list: &[(&str, &str)], name: &str| {
            list.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, d)| d.to_string())
        };
        let mut gone: Vec<(&str, &str)> = old
            .iter()
            .filter(|(n, _)| digest_of(&new, n).is_none())
            .copied()
            .collect();
        for (name, digest) in &new {
            let what = match digest_of(&old, name) {
                Some(d) if d == *digest => continue,
                Some(_) => ChangeKind::Changed,
                None => match gone.iter().position(|(_, d)| d == digest) {
                    Some(at) => ChangeKind::Renamed {
                        from: gone.swap_remove(at).0.to_owned(),
                    },
                    None => ChangeKind::New,
                },
            };
            out.push(Change {
                kind,
                name: (*name).to_owned(),
                what,
            });
        }
        out.extend(gone.into_iter().map(|(name, _)| Change {
            kind,
            name: name.to_owned(),
            what: ChangeKind::Gone,
        }));
    }
    out
}

/// A change in plain words, with the description it approves (hidden
/// characters escaped so they show).
fn change_line(change: &Change, description: Option<&str>) -> String {
    let item = format!("{} {:?}", pins::kind_word(change.kind), change.name);
    let reads = || match description {
        Some(d) => format!("; it reads: {d:?}"),
        None => "; it has no description".to_owned(),
    };
    match &change.what {
        ChangeKind::New => format!("new      {item}{}", reads()),
        ChangeKind::Changed => format!("changed  {item}{}", reads()),
        ChangeKind::Gone => format!("gone     {item}: its pin is dropped"),
        ChangeKind::Renamed { from } => {
            format!("renamed  {item}, was {from:?} (the same definition)")
        }
    }
}

fn approve(
    path: &Path,
    server: &str,
    tools: &[Tool],
    prompts: &[Prompt],
    yes: bool,
) -> Result<Shown, Failure> {
    let before = pins::load(path)?;
    let mut after = before.clone();
    after.approve(server, tools, prompts);
    let found = changes(&before, &after, server);
    let describe = |c: &Change| -> Option<String> {
        match c.kind {
            ItemKind::Tool => tools.iter().find(|t| t.name == c.name)?.description.clone(),
            _ => prompts
                .iter()
                .find(|p| p.name == c.name)?
                .description
                .clone(),
        }
    };
    let mut text = String::new();
    for change in &found {
        text.push_str(&change_line(change, describe(change).as_deref()));
        text.push('\n');
    }
    // The marks of tool poisoning in what is about to be approved.
    for finding in Pins::new().review(server, tools, prompts).findings {
        if let PinFinding::Suspicious { kind, name, marks } = finding {
            text.push_str(&format!(
                "warning: the description of {} {name:?} has {}\n",
                pins::kind_word(kind),
                pins::marks_text(&marks)
            ));
        }
    }
    let json_changes: Vec<Value> = found
        .iter()
        .map(|c| {
            let (change, from) = match &c.what {
                ChangeKind::New => ("new", None),
                ChangeKind::Changed => ("changed", None),
                ChangeKind::Gone => ("gone", None),
                ChangeKind::Renamed { from } => ("renamed", Some(from.as_str())),
            };
            let mut v = json!({"kind": pins::kind_word(c.kind), "name": c.name, "change": change});
            if let Some(from) = from {
                v["from"] = json!(from);
            }
            v
        })
        .collect();
    let mut shown = Shown {
        json: json!({ "server": server, "changes": json_changes, "approved": false }),
        items: None,
        text: String::new(),
        failure: None,
    };
    if found.is_empty() {
        shown.text = format!("nothing to approve: the pins of {server} match what it lists\n");
        return Ok(shown);
    }
    let approved = if yes {
        true
    } else if tty::person_present() {
        tty::confirm(&format!("{text}Approve these definitions?"))
    } else {
        shown.text = text;
        shown.failure = Some(Failure::usage(
            "not approved, nothing written: add --yes to approve without a terminal",
        ));
        return Ok(shown);
    };
    if !approved {
        shown.failure = Some(Failure::usage("not approved, nothing written"));
        return Ok(shown);
    }
    // The approval is applied to the file as it is now, under its lock:
    // what another command pinned meanwhile stays.
    pins::update(path, |file| file.approve(server, tools, prompts))?;
    shown.json["approved"] = json!(true);
    if !yes {
        // The changes were shown with the question.
        text.clear();
    }
    text.push_str(&format!(
        "approved {} and {} of {server} in {}\n",
        count(tools.len(), "tool"),
        count(prompts.len(), "prompt"),
        path.display()
    ));
    shown.text = text;
    Ok(shown)
}

/// "1 tool", "2 tools".
fn count(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_named_without_what_may_be_a_credential() {
        assert_eq!(
            url_key("https://me:pw@example.com/mcp?token=abc#x"),
            "https://example.com/mcp"
        );
        assert_eq!(url_key("http://127.0.0.1:9/mcp"), "http://127.0.0.1:9/mcp");
    }

    #[test]
    fn a_command_line_is_named_with_its_credentials_redacted() {
        let argv = ["srv", "--token", "abc", "--port", "3"].map(str::to_owned);
        let key = server_key(&Target::Command(argv.to_vec()));
        assert_eq!(key, "srv --token [redacted] --port 3");
    }
}
