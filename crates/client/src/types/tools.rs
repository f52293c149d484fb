//! Tools: `tools/list` and `tools/call`.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::key::{Key, set_once};
use super::{ContentBlock, Extra, Icon, Meta};

/// Hints about a tool's behaviour. Untrusted unless the server is trusted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(
        rename = "readOnlyHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(
        rename = "destructiveHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    #[serde(
        rename = "idempotentHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world of external entities.
    #[serde(
        rename = "openWorldHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub open_world_hint: Option<bool>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A tool the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tool {
    /// Its programmatic name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of its arguments.
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
    /// JSON Schema of its `structuredContent`, if it declares one.
    #[serde(
        rename = "outputSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know (`execution`...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl Tool {
    /// True when the server says calling the tool twice is safe: it is
    /// read-only or idempotent. Used to decide whether a call may be replayed.
    pub fn is_replay_safe(&self) -> bool {
        self.annotations
            .as_ref()
            .is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true))
    }
}

/// `tools/call` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallToolParams {
    /// The tool.
    pub name: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Other members to send (`task`...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl CallToolParams {
    /// A call of `name` with `arguments` (a JSON object; anything else is
    /// sent as no arguments).
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        let arguments = match arguments {
            Value::Object(m) => Some(m),
            _ => None,
        };
        Self {
            name: name.into(),
            arguments,
            meta: None,
            extra: Extra::new(),
        }
    }
}

/// `tools/call` result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CallToolResult {
    /// Unstructured content.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Structured content, checked against the tool's `outputSchema`.
    #[serde(
        rename = "structuredContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// True if the tool failed (a tool-level error, not a protocol error).
    #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl CallToolResult {
    /// The text of every text block, joined with newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

// Written by hand rather than derived: with `#[serde(flatten)]` the derived
// deserializer buffers the whole result (every content block included) into
// serde's internal tree before reading it; this one reads each member once,
// straight from the input, and keeps unknown members in `extra` all the same.
impl<'de> Deserialize<'de> for CallToolResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CallToolResult;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tools/call result object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CallToolResult, A::Error> {
                let mut content = None;
                let mut structured = None;
                let mut is_error = None;
                let mut meta = None;
                let mut extra = Extra::new();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    match key.as_str() {
                        "content" => set_once(&mut content, map.next_value()?, "content")?,
                        "structuredContent" => {
                            set_once(&mut structured, map.next_value()?, "structuredContent")?;
                        }
                        "isError" => set_once(&mut is_error, map.next_value()?, "isError")?,
                        "_meta" => set_once(&mut meta, map.next_value()?, "_meta")?,
                        _ => {
                            let value: Value = map.next_value()?;
                            extra.insert(key.into_string(), value);
                        }
                    }
                }
                Ok(CallToolResult {
                    content: content.unwrap_or_default(),
                    structured_content: structured.flatten(),
                    is_error: is_error.flatten(),
                    meta: meta.flatten(),
                    extra,
                })
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_call_result_keeps_unknown_members_at_every_level() {
        let wire = json!({
            "content": [
                {"type": "text", "text": "a\\n\"b\"", "future": [1, 2], "_meta": {"k": 1}},
                {"text": "type comes last", "type": "text", "later": null},
                {"type": "image", "data": "AAA=", "mimeType": "image/png", "x": true},
                {"kind": "no type at all"}
            ],
            "structuredContent": {"n": 3},
            "isError": false,
            "_meta": {"m": "v"},
            "task": {"id": "t1"}
        });
        let text = serde_json::to_string(&wire).unwrap();
        let parsed: CallToolResult = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed.content[0].as_text(), Some("a\\n\"b\""));
        assert_eq!(parsed.content[1].as_text(), Some("type comes last"));
        assert!(matches!(parsed.content[3], ContentBlock::Unknown(_)));
        assert_eq!(parsed.is_error, Some(false));
        assert_eq!(parsed.extra["task"], json!({"id": "t1"}));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), wire);
        // The same through a `Value` (another deserializer) agrees.
        let via_value: CallToolResult = serde_json::from_value(wire).unwrap();
        assert_eq!(via_value, parsed);
    }

    #[test]
    fn a_bad_call_result_is_an_error_not_a_guess() {
        for bad in [
            r#"{"content": [{"type": "text"}]}"#,
            r#"{"content": [{"type": "text", "text": 1}]}"#,
            r#"{"content": [{"type": "text", "text": "a", "text": "b"}]}"#,
            r#"{"content": [{"type": "text", "type": "image", "text": "a"}]}"#,
            r#"{"content": [], "content": []}"#,
            r#"{"content": ["text"]}"#,
            r#"{"isError": "yes"}"#,
            r#"[]"#,
        ] {
            assert!(
                serde_json::from_str::<CallToolResult>(bad).is_err(),
                "{bad}"
            );
        }
        let empty: CallToolResult = serde_json::from_str(r#"{"structuredContent": null}"#).unwrap();
        assert!(empty.content.is_empty() && empty.structured_content.is_none());
    }
}
