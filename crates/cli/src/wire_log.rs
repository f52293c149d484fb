//! `-v`: every JSON-RPC message written to stderr as it goes out (`-->`,
//! with the HTTP header fields it went with) and comes in (`<--`), with
//! secrets redacted.
//!
//! It is the client's message tap ([`ClientConfig::tap`]): it sees each
//! frame where the transport sends it and changes nothing of it, so a
//! session with `-v` sends the same bytes and headers as one without.
//!
//! [`ClientConfig::tap`]: mcpwire::ClientConfig::tap

use std::io::Write;

use mcpwire::transport::{Direction, Tap, Tapped};
use serde_json::Value;

/// The text shown instead of a secret.
pub(crate) const REDACTED: &str = "[redacted]";

/// Member names whose values are never shown (compared case-insensitively,
/// `-` and `_` ignored).
const SECRET_KEYS: &[&str] = &[
    "authorization",
    "proxyauthorization",
    "token",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "password",
    "secret",
    "clientsecret",
    "apikey",
    "cookie",
    "setcookie",
];

/// True if a member or header called `name` holds a secret.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    // A progress token only matches a request to its notifications.
    folded != "progresstoken"
        && (SECRET_KEYS.contains(&folded.as_str())
            || ["token", "secret", "apikey", "password"]
                .iter()
                .any(|end| folded.ends_with(end)))
}

/// `value` with every secret member's value replaced, and any string
/// that looks like a bearer credential.
pub(crate) fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if is_secret_name(k) && !v.is_null() {
                    *v = Value::String(REDACTED.to_owned());
                } else {
                    redact(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::String(s) => {
            let lower = s.to_ascii_lowercase();
            if lower.starts_with("bearer ")
                || lower.starts_with("basic ")
                || lower.starts_with("dpop ")
            {
                *s = REDACTED.to_owned();
            }
        }
        _ => {}
    }
}

/// One frame as a log line (redacted; not JSON shown as text).
pub(crate) fn line(arrow: &str, frame: &[u8]) -> String {
    match serde_json::from_slice::<Value>(frame) {
        Ok(mut v) => {
            redact(&mut v);
            format!("{arrow} {v}")
        }
        Err(_) => format!("{arrow} (not JSON, {} bytes)", frame.len()),
    }
}

fn write_line(text: &str) {
    // A failed write to stderr has nowhere to be reported.
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// The `-v` tap: one line per frame, and one for the header fields a
/// frame was sent with, if any.
#[derive(Debug)]
pub(crate) struct WireLog;

impl Tap for WireLog {
    fn frame(&self, tapped: &Tapped<'_>) {
        let arrow = match tapped.direction {
            Direction::Sent => "-->",
            _ => "<--",
        };
        let mut text = line(arrow, tapped.frame);
        if !tapped.headers.is_empty() {
            text.push_str("\n    ");
            text.push_str(&headers_line(tapped.headers));
        }
        write_line(&text);
    }
}

/// `name: value; name: value`, any value that may be a credential
/// redacted (the transport already redacts the standard ones; the user's
/// own headers are judged by name here too).
fn headers_line(headers: &[(&str, &str)]) -> String {
    headers
        .iter()
        .map(|(name, value)| {
            let shown = if is_secret_name(name) {
                REDACTED
            } else {
                value
            };
            format!("{name}: {shown}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Keeps a frame's bytes for a log line (for callers holding `Bytes`).
#[cfg(test)]
fn log_bytes(arrow: &str, frame: &[u8]) -> String {
    line(arrow, frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_at_any_depth() {
        let frame: &[u8] =
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"api_key":"k1","user":"me","headers":{"Authorization":"Bearer abc"},"note":"Bearer xyz"}}}"#;
        let shown = log_bytes("-->", frame);
        assert!(
            !shown.contains("k1") && !shown.contains("abc") && !shown.contains("xyz"),
            "{shown}"
        );
        assert!(shown.contains("\"user\":\"me\""), "{shown}");
        assert!(shown.starts_with("--> "), "{shown}");
    }

    #[test]
    fn headers_are_shown_with_their_values_but_credentials_redacted() {
        let shown = headers_line(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
            ("x-api-key", "k-123"),
        ]);
        assert_eq!(
            shown,
            "mcp-protocol-version: 2026-07-28; mcp-method: server/discover; x-api-key: [redacted]"
        );
    }

    #[test]
    fn secret_names_are_recognized() {
        for name in [
            "Authorization",
            "access_token",
            "X-API-Key",
            "refreshToken",
            "client_secret",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "message",
            "tokens_used_count",
            "authorize_url",
            "progressToken",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
