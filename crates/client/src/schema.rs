//! Tool output validation: each tool's `outputSchema` compiled once (JSON
//! Schema 2020-12) and cached until the tool list changes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::Error;
use crate::types::Tool;

/// The compiled validator of one tool, or why its schema did not compile.
type Compiled = Arc<Result<jsonschema::Validator, String>>;

/// What the client knows about the server's tools, from the last full
/// `tools/list` walk.
#[derive(Default)]
pub(crate) struct ToolCache {
    inner: Mutex<CacheInner>,
}

#[derive(Default)]
struct CacheInner {
    /// Bumped on every invalidation, so a listing that raced with a
    /// `list_changed` is not stored as current.
    generation: u64,
    /// True once a full listing was stored for this generation.
    listed: bool,
    tools: HashMap<String, Tool>,
    compiled: HashMap<String, Compiled>,
}

impl ToolCache {
    /// Forgets every tool and compiled schema.
    pub(crate) fn invalidate(&self) {
        let mut inner = self.inner.lock().expect("tool cache lock");
        inner.generation += 1;
        inner.listed = false;
        inner.tools.clear();
        inner.compiled.clear();
    }

    pub(crate) fn generation(&self) -> u64 {
        self.inner.lock().expect("tool cache lock").generation
    }

    /// Remembers `tools` if no invalidation happened since `generation`.
    pub(crate) fn store(&self, generation: u64, tools: &[Tool]) {
        let mut inner = self.inner.lock().expect("tool cache lock");
        if inner.generation != generation {
            return;
        }
        inner.listed = true;
        for t in tools {
            inner.tools.insert(t.name.clone(), t.clone());
        }
    }

    /// True until a full listing is stored (and again after invalidation).
    pub(crate) fn needs_listing(&self) -> bool {
        !self.inner.lock().expect("tool cache lock").listed
    }

    /// True if the tool is known and annotated read-only or idempotent.
    pub(crate) fn replay_safe(&self, name: &str) -> bool {
        let inner = self.inner.lock().expect("tool cache lock");
        inner.tools.get(name).is_some_and(Tool::is_replay_safe)
    }

    /// The tool's compiled output validator, compiling it on first use.
    /// `None` if the tool is unknown or declares no output schema.
    fn validator(&self, name: &str) -> Option<Compiled> {
        let schema = {
            let inner = self.inner.lock().expect("tool cache lock");
            if let Some(c) = inner.compiled.get(name) {
                return Some(c.clone());
            }
            inner.tools.get(name)?.output_schema.clone()?
        };
        // Compile outside the lock: it can take a while for a large schema.
        let compiled: Compiled =
            Arc::new(jsonschema::draft202012::new(&schema).map_err(|e| e.to_string()));
        let mut inner = self.inner.lock().expect("tool cache lock");
        if inner.tools.contains_key(name) {
            inner.compiled.insert(name.to_owned(), compiled.clone());
        }
        Some(compiled)
    }

    /// Checks a `tools/call` result against the tool's output schema.
    ///
    /// A tool that declares an output schema must return structured content
    /// matching it, unless the result is a tool error (`isError`).
    pub(crate) fn validate(
        &self,
        name: &str,
        structured: Option<&Value>,
        is_error: bool,
    ) -> Result<(), Error> {
        if is_error {
            return Ok(());
        }
        let Some(compiled) = self.validator(name) else {
            return Ok(());
        };
        let validator = match compiled.as_ref() {
            Ok(v) => v,
            Err(e) => {
                return Err(Error::validation(
                    name,
                    vec![format!("the tool's output schema is invalid: {e}")],
                ));
            }
        };
        let Some(value) = structured else {
            return Err(Error::validation(
                name,
                vec!["the tool declares an output schema but returned no structuredContent".into()],
            ));
        };
        let errors: Vec<String> = validator
            .iter_errors(value)
            .take(16)
            .map(|e| format!("at {:?}: {e}", e.instance_path().to_string()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::validation(name, errors))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(schema: Value) -> Tool {
        serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema
        }))
        .unwrap()
    }

    #[test]
    fn validates_against_the_cached_schema_until_invalidated() {
        let cache = ToolCache::default();
        let schema = json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"]
        });
        cache.store(cache.generation(), &[tool(schema)]);
        assert!(cache.validate("t", Some(&json!({"n": 1})), false).is_ok());
        let err = cache
            .validate("t", Some(&json!({"n": "x"})), false)
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::SchemaValidation);
        assert!(err.validation_errors()[0].contains("/n"), "{err:?}");
        assert!(cache.validate("t", None, false).is_err());
        assert!(cache.validate("t", None, true).is_ok());
        // 2020-12 keywords work (prefixItems is new in 2020-12).
        let g = cache.generation();
        cache.invalidate();
        cache.store(g, &[tool(json!({"type": "array"}))]);
        assert!(cache.needs_listing(), "a stale listing is not stored");
        cache.store(
            cache.generation(),
            &[tool(json!({"prefixItems": [{"type": "string"}]}))],
        );
        assert!(cache.validate("t", Some(&json!(["a", 1])), false).is_ok());
        assert!(cache.validate("t", Some(&json!([1])), false).is_err());
        assert!(cache.validate("unknown", Some(&json!(1)), false).is_ok());
    }
}
