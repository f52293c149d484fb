//! `-v`: every JSON-RPC message written to stderr as it goes out (`-->`)
//! and comes in (`<--`), with secrets redacted.
//!
//! The client has no message hook of its own, so the transport is wrapped:
//! [`logged`] wraps a [`TransportFactory`], and each transport it opens
//! logs inbound frames as they are polled and outbound frames through a
//! queue of its own in front of the real sender (one extra hop, only with
//! `-v`).

use std::io::Write;
use std::task::{Context, Poll};

use mcpwire::client::TransportFactory;
use mcpwire::transport::{Active, FrameSender, Transport, TransportEvent, TransportInfo};
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
    SECRET_KEYS.contains(&folded.as_str())
        || ["token", "secret", "apikey", "password"]
            .iter()
            .any(|end| folded.ends_with(end))
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

/// A factory whose transports log every message to stderr.
pub(crate) fn logged(mut inner: TransportFactory) -> TransportFactory {
    Box::new(move || {
        let opening = inner();
        Box::pin(async move {
            let transport = opening.await?;
            let info = transport.info();
            write_line(&format!("-- connected: {} {}", info.kind, info.peer));
            Ok(Box::new(LoggedTransport::new(transport)) as Box<dyn Transport>)
        })
    })
}

/// A transport that logs what passes through it.
struct LoggedTransport {
    inner: Box<dyn Transport>,
    sender: FrameSender,
}

impl LoggedTransport {
    fn new(inner: Box<dyn Transport>) -> Self {
        let real = inner.sender();
        let (sender, mut queue) = FrameSender::channel(64);
        tokio::spawn(async move {
            while let Some(frame) = queue.recv().await {
                write_line(&line("-->", &frame));
                if real.send(frame).await.is_err() {
                    break;
                }
            }
        });
        Self { inner, sender }
    }
}

impl Transport for LoggedTransport {
    fn sender(&self) -> FrameSender {
        self.sender.clone()
    }

    fn set_active(&mut self, active: Active) {
        self.inner.set_active(active);
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        let event = self.inner.poll_event(cx);
        if let Poll::Ready(Some(ref e)) = event {
            match e {
                TransportEvent::Frame(frame) => write_line(&line("<--", frame)),
                TransportEvent::Closed(reason) => write_line(&format!("-- closed: {reason}")),
                TransportEvent::Undelivered { error, .. } => {
                    write_line(&format!("-- undelivered: {error}"));
                }
                _ => {}
            }
        }
        event
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.inner.poll_close(cx)
    }

    fn info(&self) -> TransportInfo {
        self.inner.info()
    }
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
        for name in ["message", "tokens_used_count", "authorize_url"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
