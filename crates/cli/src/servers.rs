//! `servers`: the servers of the `--config` files, without connecting,
//! secrets redacted (header values, environment values, tokens in URLs
//! and arguments that look like credentials).

use mcpwire::config::{Config, ServerEntry, Transport};
use serde_json::{Value, json};

use crate::commands::Shown;
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

fn entry_json(entry: &ServerEntry) -> Value {
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
            let env: serde_json::Map<String, Value> = s
                .env
                .iter()
                .map(|(k, val)| {
                    (
                        k.clone(),
                        if val.is_some() {
                            json!(REDACTED)
                        } else {
                            Value::Null
                        },
                    )
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
fn redact_args(target: &str) -> String {
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

/// The `servers` listing.
pub(crate) fn list(config: &Config) -> Shown {
    let entries: Vec<ServerEntry> = config.servers.iter().map(ServerEntry::redacted).collect();
    let mut items: Vec<Value> = entries.iter().map(entry_json).collect();
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
    Shown {
        json: json!({ "servers": items.clone() }),
        items: Some(items),
        text,
        failure: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_arguments_are_hidden() {
        assert_eq!(
            redact_args("npx srv --token abc --api-key=xyz --port 3"),
            "npx srv --token [redacted] --api-key=[redacted] --port 3"
        );
    }
}
