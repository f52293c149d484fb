//! Standard HTTP headers of the 2026-07-28 revision (SEP-2243): the value
//! encoding of `Mcp-Name` and `Mcp-Param-*`, and the `x-mcp-header`
//! annotations of a tool's input schema (checked, and read from a call's
//! arguments).
//!
//! Pure functions: which headers a request gets is the era's decision
//! (`crate::base::stamp`), which tools are dropped the typed API's.

use base64::Engine as _;
use serde_json::Value;

/// The largest integer a header may carry (JavaScript's safe range).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// `value` as a header value: as it is when it is plain visible ASCII (space
/// inside allowed) without leading or trailing whitespace, otherwise (and
/// whenever it looks like the sentinel itself) `=?base64?…?=` of its UTF-8.
pub(crate) fn encode_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

/// One tool parameter mirrored into a header: the `properties` path to it
/// and the `{name}` of `Mcp-Param-{name}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    pub(crate) path: Vec<String>,
    pub(crate) name: String,
}

impl ParamHeader {
    /// The header's value for a call with `arguments`, or `None` when the
    /// argument is absent or null (the header is then omitted).
    pub(crate) fn value(&self, arguments: &Value) -> Option<String> {
        let mut at = arguments;
        for key in &self.path {
            at = at.get(key)?;
        }
        let text = match at {
            Value::String(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.as_i64().filter(|i| safe_integer(*i))?.to_string(),
            _ => return None,
        };
        Some(encode_value(&text))
    }
}

/// The `x-mcp-header` annotations of `schema`, or why the tool must be
/// rejected: an annotation that is not a non-empty token, is not unique
/// (ignoring case), sits on a parameter that is not an integer, string or
/// boolean, or is not reachable from the root through `properties` alone.
pub(crate) fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    visit(schema, &mut Vec::new(), true, &mut found)?;
    let mut seen = std::collections::HashSet::new();
    for h in &found {
        if !seen.insert(h.name.to_ascii_lowercase()) {
            return Err(format!("x-mcp-header {:?} is used twice", h.name));
        }
    }
    Ok(found)
}

fn visit(
    schema: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    match schema {
        Value::Object(map) => {
            if let Some(name) = map.get("x-mcp-header") {
                let at = path.join(".");
                if !reachable || path.is_empty() {
                    return Err(format!(
                        "x-mcp-header at {at:?} is not reachable through properties alone"
                    ));
                }
                let Some(name) = name.as_str() else {
                    return Err(format!("x-mcp-header at {at:?} is not a string"));
                };
                if name.is_empty() {
                    return Err(format!("x-mcp-header at {at:?} is empty"));
                }
                if !name.bytes().all(is_tchar) {
                    return Err(format!(
                        "x-mcp-header {name:?} at {at:?} is not an HTTP token"
                    ));
                }
                match map.get("type").and_then(Value::as_str) {
                    Some("string" | "integer" | "boolean") => {}
                    other => {
                        return Err(format!(
                            "x-mcp-header {name:?} at {at:?} is on a parameter of type {}, \
                             not integer, string or boolean",
                            other.unwrap_or("(none)")
                        ));
                    }
                }
                found.push(ParamHeader {
                    path: path.clone(),
                    name: name.to_owned(),
                });
            }
            for (key, sub) in map {
                if key == "properties"
                    && let Value::Object(props) = sub
                {
                    for (prop, sub) in props {
                        path.push(prop.clone());
                        let r = visit(sub, path, reachable, found);
                        path.pop();
                        r?;
                    }
                    continue;
                }
                if key != "x-mcp-header" {
                    visit(sub, path, false, found)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            for item in items {
                visit(item, path, false, found)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// True if an integer argument fits a header (JavaScript's safe range).
fn safe_integer(i: i64) -> bool {
    (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&i)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_are_plain_or_base64_as_the_spec_table_says() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("us west 1"), "us west 1");
        assert_eq!(encode_value(""), "");
        assert_eq!(
            encode_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert!(encode_value("\tindented").starts_with("=?base64?"));
        assert!(safe_integer(MAX_SAFE_INTEGER) && !safe_integer(MAX_SAFE_INTEGER + 1));
    }

    #[test]
    fn annotated_parameters_are_found_and_read_from_arguments() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
            "nested": {"type": "object", "properties": {
                "deep": {"type": "string", "x-mcp-header": "Deep"}}},
            "query": {"type": "string"}
        }});
        let headers = param_headers(&schema).unwrap();
        assert_eq!(headers.len(), 4);
        let args =
            json!({"region": "eu", "n": 42, "flag": false, "nested": {"deep": "é"}, "query": "q"});
        let got: Vec<_> = headers
            .iter()
            .map(|h| (h.name.as_str(), h.value(&args)))
            .collect();
        assert!(got.contains(&("Region", Some("eu".into()))));
        assert!(got.contains(&("N", Some("42".into()))));
        assert!(got.contains(&("Flag", Some("false".into()))));
        assert!(got.contains(&("Deep", Some("=?base64?w6k=?=".into()))));
        let none = json!({"region": null});
        assert!(headers.iter().all(|h| h.value(&none).is_none()));
    }

    #[test]
    fn invalid_annotations_reject_the_tool() {
        let bad = [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "A B"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "A:B"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Ü"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "a\r\nb"}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "array", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "null", "x-mcp-header": "V"}}}),
            json!({"properties": {
                "a": {"type": "string", "x-mcp-header": "Same"},
                "b": {"type": "string", "x-mcp-header": "same"}}}),
            json!({"properties": {"v": {"type": "array",
                "items": {"type": "string", "x-mcp-header": "V"}}}}),
            json!({"anyOf": [{"properties": {"v": {"type": "string", "x-mcp-header": "V"}}}]}),
            json!({"type": "string", "x-mcp-header": "Root"}),
        ];
        for schema in bad {
            assert!(param_headers(&schema).is_err(), "{schema}");
        }
    }
}
