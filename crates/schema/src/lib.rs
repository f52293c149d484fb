//! Tool output validation: a tool's `outputSchema` compiled once (JSON
//! Schema 2020-12) into an [`OutputSchema`], and the `structuredContent` of
//! its results checked against it.
//!
//! The schema comes from the server, so compiling is bounded:
//! - nothing is fetched: a `$ref` to anything but the schema itself fails
//!   to compile, as a server must not make the client reach the URLs it
//!   names (or wait on them); the 2020-12 meta-schema is bundled;
//! - a schema nested more than [`MAX_DEPTH`] levels deep is refused before
//!   it is compiled, as compiling and validating recurse once per level.
//!
//! Why a crate of its own: a JSON Schema validator is mostly generic code,
//! compiled into whichever crate calls it. Called from `mcpwire-client`, it
//! was a third of the client's compiled functions, laid out among the ones
//! every call runs, and a client kept that code resident whether or not any
//! tool declared an output schema. Behind this crate's plain functions it
//! is compiled here, once, out of the client's way.
//!
//! Stability: the API is two functions and an error; which validator
//! implements them is not part of it.

use serde_json::Value;

/// How many levels of objects and arrays a schema may nest. Real schemas
/// nest a few levels; the wire's JSON parser allows 128.
pub const MAX_DEPTH: usize = 64;

/// A tool's output schema, compiled.
///
/// ```
/// use mcpwire_schema::OutputSchema;
/// use serde_json::json;
///
/// let schema = OutputSchema::compile(&json!({
///     "type": "object",
///     "properties": {"temperature": {"type": "number"}},
///     "required": ["temperature"]
/// }))
/// .unwrap();
/// assert!(schema.errors(&json!({"temperature": 21.5}), 16).is_empty());
/// assert_eq!(schema.errors(&json!({"temperature": "warm"}), 16).len(), 1);
/// ```
pub struct OutputSchema {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema").finish_non_exhaustive()
    }
}

/// Why an output schema did not compile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// It nests more than [`MAX_DEPTH`] levels deep: refused unread.
    #[error("it nests more than {MAX_DEPTH} levels deep")]
    TooDeep,
    /// It is not a schema the validator accepts (a keyword of the wrong
    /// type, a `$ref` outside the schema...).
    #[error(transparent)]
    Invalid(Box<dyn std::error::Error + Send + Sync>),
}

impl OutputSchema {
    /// Compiles `schema` (JSON Schema 2020-12), offline and bounded in
    /// depth (see the crate's documentation).
    pub fn compile(schema: &Value) -> Result<Self, CompileError> {
        if nests_deeper_than(schema, MAX_DEPTH) {
            return Err(CompileError::TooDeep);
        }
        let validator = jsonschema::draft202012::options()
            .offline()
            .build(schema)
            .map_err(|e| CompileError::Invalid(Box::new(e)))?;
        Ok(Self { validator })
    }

    /// What is wrong with `value`, at most `max` findings, each as "at
    /// "/path": what"; empty if it matches.
    pub fn errors(&self, value: &Value, max: usize) -> Vec<String> {
        self.validator
            .iter_errors(value)
            .take(max)
            .map(|e| format!("at {:?}: {e}", e.instance_path().to_string()))
            .collect()
    }
}

/// Whether `value` nests objects and arrays more than `max` levels deep,
/// found without recursion.
fn nests_deeper_than(value: &Value, max: usize) -> bool {
    let mut pending = vec![(value, 0_usize)];
    while let Some((v, depth)) = pending.pop() {
        let (fields, items) = match v {
            Value::Object(m) => (Some(m.values()), None),
            Value::Array(a) => (None, Some(a.iter())),
            _ => continue,
        };
        if depth >= max {
            return true;
        }
        let children = fields
            .into_iter()
            .flatten()
            .chain(items.into_iter().flatten());
        pending.extend(children.map(|c| (c, depth + 1)));
    }
    false
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `levels` objects nested in `properties`, built from the inside
    /// out: the outermost schema, then one more level inside each.
    fn nested(levels: usize) -> Value {
        // Each level is two JSON objects: the schema and its `properties`.
        let mut v = json!({"type": "string"});
        for _ in 0..levels {
            v = json!({"properties": {"a": v}});
        }
        v
    }

    #[test]
    fn a_schema_nested_past_the_bound_is_refused_before_compiling() {
        // 31 levels are 63 JSON objects (the innermost `{"type": ...}`
        // too): within the bound of 64, compiled and used.
        let schema = nested(31);
        assert!(!nests_deeper_than(&schema, MAX_DEPTH));
        assert!(OutputSchema::compile(&schema).is_ok());
        // One level more is 65: refused, with the reason.
        let schema = nested(32);
        assert!(nests_deeper_than(&schema, MAX_DEPTH));
        let err = OutputSchema::compile(&schema).unwrap_err();
        assert!(matches!(err, CompileError::TooDeep));
        assert_eq!(err.to_string(), "it nests more than 64 levels deep");
        // Arrays count as levels too, and a deep branch is found beside
        // shallow ones.
        let arrays = json!({"allOf": [{"type": "object"}, {"anyOf": [[[[{}]]]]}]});
        assert!(nests_deeper_than(&arrays, 7));
        assert!(!nests_deeper_than(&arrays, 8));
        assert!(!nests_deeper_than(&json!(1), 0));
        assert!(nests_deeper_than(&json!({}), 0));
    }

    #[test]
    fn a_remote_reference_is_not_fetched_but_a_local_one_is_resolved() {
        let err = OutputSchema::compile(&json!({"$ref": "http://127.0.0.1:9/s.json"})).unwrap_err();
        assert!(matches!(err, CompileError::Invalid(_)));
        assert!(!err.to_string().is_empty());
        let local = json!({
            "$defs": {"n": {"type": "integer"}},
            "properties": {"n": {"$ref": "#/$defs/n"}}
        });
        let v = OutputSchema::compile(&local).unwrap();
        assert!(v.errors(&json!({"n": 1}), 16).is_empty());
        assert_eq!(v.errors(&json!({"n": "x"}), 16).len(), 1);
        // The 2020-12 meta-schema is bundled, not fetched.
        let dated =
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"});
        assert!(OutputSchema::compile(&dated).is_ok());
    }

    #[test]
    fn debug_names_the_type_only() {
        let v = OutputSchema::compile(&json!({"const": "a secret default"})).unwrap();
        assert_eq!(format!("{v:?}"), "OutputSchema { .. }");
    }

    #[test]
    fn errors_say_where_and_stop_at_the_most_asked_for() {
        let v = OutputSchema::compile(&json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}
        }))
        .unwrap();
        let bad = json!({"a": "x", "b": "y"});
        let all = v.errors(&bad, 16);
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all.iter().any(|e| e.starts_with(r#"at "/a": "#)), "{all:?}");
        assert!(all.iter().any(|e| e.starts_with(r#"at "/b": "#)), "{all:?}");
        assert_eq!(v.errors(&bad, 1).len(), 1);
        assert!(v.errors(&json!({"a": 1}), 16).is_empty());
    }
}
