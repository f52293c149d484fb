//! What counts as a secret, and how it is hidden.
//!
//! Used by every `Debug` impl and by the `redacted()` views, so a secret in
//! a configuration file never reaches a log line or a terminal by accident.

use serde_json::{Map, Value};

/// What a hidden value is replaced with.
pub(crate) const REDACTED: &str = "<redacted>";

/// Whether a header, environment variable or extra field named `name`
/// probably holds a credential: `Authorization`, `Proxy-Authorization`,
/// `Cookie`, and any name containing `token`, `key`, `secret`, `password`,
/// `passwd`, `credential` or `auth` (case-insensitive).
pub(crate) fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "cookie"
        || [
            "auth",
            "token",
            "key",
            "secret",
            "password",
            "passwd",
            "credential",
        ]
        .iter()
        .any(|word| lower.contains(word))
}

/// `value`, or [`REDACTED`] unless it is a template that holds no literal
/// secret: variable references (`${TOKEN}`) and the words `Bearer`, `Basic`
/// and `Token` between them are shown, since they name where the secret
/// comes from without being it.
pub(crate) fn hide(value: &str) -> String {
    if is_template_only(value) {
        value.to_owned()
    } else {
        REDACTED.to_owned()
    }
}

/// A header value: hidden when the header name looks like a credential.
pub(crate) fn header_value(name: &str, value: &str) -> String {
    if is_secret_name(name) {
        hide(value)
    } else {
        value.to_owned()
    }
}

fn is_template_only(value: &str) -> bool {
    let mut rest = value;
    let mut saw_reference = false;
    let mut literal = String::new();
    while let Some(start) = rest.find("${") {
        literal.push_str(&rest[..start]);
        let Some(len) = rest[start..].find('}') else {
            return false;
        };
        saw_reference = true;
        rest = &rest[start + len + 1..];
    }
    literal.push_str(rest);
    saw_reference
        && literal.split_whitespace().all(|word| {
            ["bearer", "basic", "token"]
                .iter()
                .any(|w| word.eq_ignore_ascii_case(w))
        })
}

/// A URL with its password (`user:pass@`) and the values of query
/// parameters with secret-looking names hidden.
pub(crate) fn url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let (before_query, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    // userinfo sits between "://" and the first '@' before the path.
    match before_query.split_once("://") {
        Some((scheme, rest)) => {
            out.push_str(scheme);
            out.push_str("://");
            let authority_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(authority_end);
            match authority.rsplit_once('@') {
                Some((userinfo, host)) => {
                    match userinfo.split_once(':') {
                        Some((user, _password)) => {
                            out.push_str(user);
                            out.push(':');
                            out.push_str(REDACTED);
                        }
                        None => out.push_str(userinfo),
                    }
                    out.push('@');
                    out.push_str(host);
                }
                None => out.push_str(authority),
            }
            out.push_str(path);
        }
        None => out.push_str(before_query),
    }
    if let Some(query) = query {
        out.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) if is_secret_name(k) => format!("{k}={}", hide(v)),
                _ => pair.to_owned(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    out
}

/// Command-line arguments with secret values hidden: the value of
/// `--api-key=VALUE`, and the argument after a flag such as `--token`.
pub(crate) fn args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for arg in args {
        if std::mem::take(&mut hide_next) {
            out.push(hide(arg));
            continue;
        }
        let flag = arg.trim_start_matches('-');
        if flag.len() < arg.len() {
            if let Some((name, value)) = flag.split_once('=') {
                if is_secret_name(name) {
                    out.push(format!(
                        "{}={}",
                        &arg[..arg.len() - flag.len() + name.len()],
                        hide(value)
                    ));
                    continue;
                }
            } else {
                hide_next = is_secret_name(flag);
            }
        }
        out.push(arg.clone());
    }
    out
}

/// A copy of `map` with the values under secret-looking keys hidden, at any
/// depth (Cursor's `auth.CLIENT_SECRET`, Gemini's `oauth.clientSecret`).
pub(crate) fn extra(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .map(|(k, v)| (k.clone(), extra_value(k, v)))
        .collect()
}

fn extra_value(key: &str, value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(extra(map)),
        Value::Array(items) => Value::Array(items.iter().map(|v| extra_value(key, v)).collect()),
        Value::String(s) if is_secret_name(key) => Value::String(hide(s)),
        Value::Number(_) | Value::Bool(_) if is_secret_name(key) => {
            Value::String(REDACTED.to_owned())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_names() {
        for name in [
            "Authorization",
            "x-api-key",
            "GITHUB_TOKEN",
            "client_secret",
            "Cookie",
            "DB_PASSWORD",
            "Proxy-Authorization",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["Accept", "X-Region", "LOG_LEVEL", "PATH"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn templates_are_shown_literals_are_hidden() {
        assert_eq!(hide("Bearer ${TOKEN}"), "Bearer ${TOKEN}");
        assert_eq!(hide("${env:API_KEY}"), "${env:API_KEY}");
        assert_eq!(hide("${A}${B}"), "${A}${B}");
        assert_eq!(hide("Bearer sk-123"), REDACTED);
        assert_eq!(hide("sk-1${X}"), REDACTED);
        assert_eq!(hide("${unterminated"), REDACTED);
        assert_eq!(hide(""), REDACTED);
        assert_eq!(header_value("Accept", "text/plain"), "text/plain");
        assert_eq!(header_value("authorization", "Basic abc"), REDACTED);
    }

    #[test]
    fn urls_lose_passwords_and_secret_query_values() {
        assert_eq!(
            url("https://me:hunter2@example.com/mcp?api_key=abc&region=eu"),
            format!("https://me:{REDACTED}@example.com/mcp?api_key={REDACTED}&region=eu")
        );
        assert_eq!(url("https://example.com/a@b"), "https://example.com/a@b");
        assert_eq!(url("http://h/x?token=${T}"), "http://h/x?token=${T}");
        assert_eq!(url("not a url"), "not a url");
    }

    #[test]
    fn secret_arguments_are_hidden() {
        let given: Vec<String> = [
            "-y",
            "--api-key=abc",
            "--token",
            "xyz",
            "--port",
            "80",
            "--auth-file=${F}",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            args(&given),
            [
                "-y",
                "--api-key=<redacted>",
                "--token",
                REDACTED,
                "--port",
                "80",
                "--auth-file=${F}"
            ]
        );
    }

    #[test]
    fn extra_is_hidden_at_any_depth() {
        let map = json!({
            "auth": {"CLIENT_ID": "id", "CLIENT_SECRET": "s3"},
            "oauth": {"clientSecret": "s4", "scopes": ["a"]},
            "autoApprove": ["read"],
            "apiKey": 12
        });
        let hidden = extra(map.as_object().unwrap());
        assert_eq!(hidden["auth"]["CLIENT_ID"], "id");
        assert_eq!(hidden["auth"]["CLIENT_SECRET"], REDACTED);
        assert_eq!(hidden["oauth"]["clientSecret"], REDACTED);
        assert_eq!(hidden["autoApprove"], json!(["read"]));
        assert_eq!(hidden["apiKey"], REDACTED);
    }
}
