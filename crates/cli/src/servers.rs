//! `servers`: the servers of the `--config` files, without connecting,
//! secrets redacted (header values, environment values, tokens in URLs
//! and arguments that look like credentials).

use mcpwire::config::{Config, ServerEntry, Transport};
use serde_json::{Value, json};

use crate::commands::Shown;
use crate::failure::Failure;
use crate::render;
use crate::wire_log::{REDACTED, is_secret_name};

fn target(entry: &ServerEntry) -> (String, String) {
    match &entry.transport {
        Transport::Stdio(s) => {
            let mut line = vec![s.command.clone()];
            line.extend(s.args.iter().cloned());
            ("stdio".into(), line.join(" "))
        }
        Transport::Http { remote, mode } => (
            format!("http ({})", format!("{mode:?}").to_lowercase()),
            remote.url.clone(),
        ),
        Transport::WebSocket(remote) => ("websocket".into(), remote.url.clone()),
        _ => ("other".into(), String::new()),
    }
}

/// An environment value as `servers` shows it: as it is (a path, a
/// flag, a `${VAR}` reference), unless its name or its text says it is a
/// credential.
fn shown_env(name: &str, value: &str) -> Value {
    // Stricter than for message members: environment variables are where
    // keys and credentials are usually given (`DEMO_KEY`, `DB_PASS`).
    let folded = name.to_ascii_lowercase();
    let secret = is_secret_name(name)
        || folded.ends_with("key")
        || ["pass", "cred", "auth", "private", "cookie", "session"]
            .iter()
            .any(|w| folded.contains(w));
    if secret {
        return json!(REDACTED);
    }
    let mut v = json!(value);
    crate::wire_log::redact(&mut v);
    v
}

fn entry_json(entry: &ServerEntry, original: &ServerEntry) -> Value {
    let (kind, target) = target(entry);
    let mut v = json!({
        "name": entry.name,
        "transport": kind,
        "target": target,
        "enabled": entry.policy.enabled,
        "origin": entry.origin.display().to_string(),
    });
    match &entry.transport {
        Transport::Stdio(s) => {
            v["command"] = json!(s.command);
            v["args"] = json!(s.args);
            let values = match &original.transport {
                Transport::Stdio(o) => Some(&o.env),
                _ => None,
            };
            let env: serde_json::Map<String, Value> = s
                .env
                .keys()
                .map(|k| {
                    let value = values.and_then(|e| e.get(k)).and_then(Option::as_deref);
                    let shown = value.map_or(Value::Null, |val| shown_env(k, val));
                    (k.clone(), shown)
                })
                .collect();
            v["env"] = Value::Object(env);
        }
        Transport::Http { remote, .. } | Transport::WebSocket(remote) => {
            v["url"] = json!(remote.url);
            let headers: serde_json::Map<String, Value> = remote
                .headers
                .keys()
                .map(|k| (k.clone(), json!(REDACTED)))
                .collect();
            v["headers"] = Value::Object(headers);
        }
        _ => {}
    }
    if let Some(d) = &entry.description {
        v["description"] = json!(d);
    }
    v
}

/// Hides arguments that carry a credential (`--token=x`, `--api-key x`).
pub(crate) fn redact_args(target: &str) -> String {
    let mut out = Vec::new();
    let mut hide_next = false;
    for word in target.split(' ') {
        if hide_next {
            out.push(REDACTED.to_owned());
            hide_next = false;
            continue;
        }
        let flag = word.trim_start_matches('-');
        match flag.split_once('=') {
            Some((name, _)) if word.starts_with('-') && is_secret_name(name) => {
                out.push(format!(
                    "{}={REDACTED}",
                    &word[..word.len() - flag.len() + name.len()]
                ));
            }
            None if word.starts_with('-') && is_secret_name(flag) => {
                out.push(word.to_owned());
                hide_next = true;
            }
            _ => out.push(word.to_owned()),
        }
    }
    out.join(" ")
}

/// The `servers` listing: every server, or only `only` (`-s NAME`).
pub(crate) fn list(config: &Config, only: Option<&str>) -> Result<Shown, Failure> {
    let chosen: Vec<&ServerEntry> = config
        .servers
        .iter()
        .filter(|e| only.is_none_or(|name| e.name == name))
        .collect();
    if let (Some(name), true) = (only, chosen.is_empty()) {
        let names: Vec<&str> = config.servers.iter().map(|e| e.name.as_str()).collect();
        return Err(Failure::usage(format!(
            "no server {name:?} in the configuration (it has: {})",
            names.join(", ")
        )));
    }
    let mut items: Vec<Value> = chosen
        .iter()
        .map(|e| entry_json(&e.redacted(), e))
        .collect();
    for item in &mut items {
        if let Some(t) = item["target"].as_str() {
            item["target"] = json!(redact_args(t));
        }
        if let Some(args) = item["args"].as_array() {
            let joined: Vec<String> = args
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            let redacted = redact_args(&joined.join(" "));
            item["args"] = json!(
                redacted
                    .split(' ')
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
            );
        }
    }
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            vec![
                i["name"].as_str().unwrap_or_default().to_owned(),
                i["transport"].as_str().unwrap_or_default().to_owned(),
                i["target"].as_str().unwrap_or_default().to_owned(),
            ]
        })
        .collect();
    let text = if rows.is_empty() {
        "no servers (give --config FILE)\n".to_owned()
    } else {
        render::table(&["NAME", "TRANSPORT", "TARGET"], &rows)
    };
    Ok(Shown {
        json: json!({ "servers": items.clone() }),
        items: Some(items),
        text,
        failure: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_values_are_shown_unless_they_are_credentials() {
        assert_eq!(
            shown_env("CONFIG_PATH", "/etc/x.json"),
            json!("/etc/x.json")
        );
        assert_eq!(shown_env("GITHUB_TOKEN", "ghp_1"), json!(REDACTED));
        assert_eq!(shown_env("DEMO_KEY", "k-1"), json!(REDACTED));
        assert_eq!(shown_env("DB_PASSWD", "p"), json!(REDACTED));
        assert_eq!(shown_env("HEADER", "Bearer abc"), json!(REDACTED));
    }

    #[test]
    fn credential_arguments_are_hidden() {
        assert_eq!(
            redact_args("npx srv --token abc --api-key=xyz --port 3"),
            "npx srv --token [redacted] --api-key=[redacted] --port 3"
        );
    }
}
