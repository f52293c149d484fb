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
