//! Arguments for a tool call, made up from the tool's input schema.
//!
//! The conformance client calls the tools a scenario offers without knowing
//! them in advance, the way a model would: every required property gets its
//! schema's `default`, else its first `examples` or `enum` entry, else a
//! plain value of its type.

use serde_json::{Map, Value, json};

/// An arguments object satisfying the required properties of `schema`.
pub(crate) fn from_schema(schema: &Value) -> Value {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    let mut args = Map::new();
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        args.insert(name.to_owned(), value_for(property));
    }
    Value::Object(args)
}

/// A value that `property` accepts.
fn value_for(property: &Value) -> Value {
    if let Some(v) = property.get("default") {
        return v.clone();
    }
    let first = |key: &str| {
        property
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .cloned()
    };
    if let Some(v) = first("examples").or_else(|| first("enum")) {
        return v;
    }
    if let Some(v) = property.get("const") {
        return v.clone();
    }
    // `type` may be one name or a list of names; the first one decides.
    let ty = match property.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Array(a)) => a.first().and_then(Value::as_str).unwrap_or("string"),
        _ => "string",
    };
    match ty {
        "integer" | "number" => {
            let min = property.get("minimum").and_then(Value::as_f64);
            match min {
                Some(m) if m > 1.0 => json!(m.ceil() as i64),
                _ => json!(1),
            }
        }
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => from_schema(property),
        "null" => Value::Null,
        _ => json!("mcpwire"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_get_defaults_examples_or_typed_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "number"},
                "b": {"type": "integer", "minimum": 5},
                "name": {"type": "string", "default": "x"},
                "level": {"type": "string", "enum": ["low", "high"]},
                "flag": {"type": ["boolean", "null"]},
                "nested": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]},
                "optional": {"type": "string"}
            },
            "required": ["a", "b", "name", "level", "flag", "nested", "missing"]
        });
        assert_eq!(
            from_schema(&schema),
            json!({
                "a": 1, "b": 5, "name": "x", "level": "low", "flag": true,
                "nested": {"k": "mcpwire"}, "missing": "mcpwire"
            })
        );
    }

    #[test]
    fn a_schema_without_required_properties_gives_an_empty_object() {
        assert_eq!(from_schema(&json!({"type": "object"})), json!({}));
        assert_eq!(from_schema(&Value::Null), json!({}));
    }
}

/// The tool calls a scenario's context names (`{"toolCalls": [{"name",
/// "arguments"}]}`), in order; none if the context has no such list.
pub(crate) fn tool_calls(context: &str) -> Vec<(String, Value)> {
    let Ok(context) = serde_json::from_str::<Value>(context) else {
        return Vec::new();
    };
    context
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let name = c.get("name")?.as_str()?.to_owned();
            let args = c.get("arguments").cloned().unwrap_or_else(|| json!({}));
            Some((name, args))
        })
        .collect()
}

/// Arguments for `prompt`: a placeholder for each required one.
pub(crate) fn for_prompt(prompt: &mcpwire::client::types::Prompt) -> Option<Map<String, Value>> {
    let args: Map<String, Value> = prompt
        .arguments
        .iter()
        .flatten()
        .filter(|a| a.required == Some(true))
        .map(|a| (a.name.clone(), Value::from("value")))
        .collect();
    (!args.is_empty()).then_some(args)
}

#[cfg(test)]
mod context_tests {
    use super::*;

    #[test]
    fn tool_calls_come_from_the_context_in_order() {
        let ctx = r#"{"toolCalls":[{"name":"a","arguments":{"x":1}},{"name":"b"},{"nope":1}]}"#;
        let calls = tool_calls(ctx);
        assert_eq!(
            calls,
            vec![("a".into(), json!({"x": 1})), ("b".into(), json!({}))]
        );
        assert!(tool_calls("not json").is_empty());
        assert!(tool_calls(r#"{"other":1}"#).is_empty());
    }
}
