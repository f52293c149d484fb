//! Tool output validation: each tool's `outputSchema` compiled once (JSON
//! Schema 2020-12) and cached until the tool list changes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};

use mcpwire_schema::{CompileError, OutputSchema};
use serde_json::Value;

use crate::base::error::Error;
use crate::base::headers::{ParamHeader, param_headers};
use crate::base::lock::Mutex;
use crate::types::Tool;

/// The compiled validator of one tool, or why its schema did not compile.
type Compiled = Arc<Result<OutputSchema, CompileError>>;

/// What the client knows about the server's tools, from the last full
/// `tools/list` walk.
pub(crate) struct ToolCache {
    inner: Mutex<CacheInner>,
    /// The id of the `tools/list` request that opens the listing under way
    /// (its first page), or -1: the driver notes the generation when that
    /// answer arrives (see [`ToolCache::answered`]).
    first_page: AtomicI64,
}

impl Default for ToolCache {
    fn default() -> Self {
        Self {
            inner: Mutex::default(),
            first_page: AtomicI64::new(-1),
        }
    }
}

#[derive(Default)]
struct CacheInner {
    /// Bumped on every invalidation, so a listing that raced with a
    /// `list_changed` is not stored as current.
    generation: u64,
    /// True once a full listing was stored for this generation.
    listed: bool,
    /// The first page's request id and the generation when the driver
    /// took its answer off the wire.
    answered: Option<(i64, u64)>,
    tools: HashMap<String, Arc<ToolEntry>>,
}

/// What a call needs of one listed tool and, once a result needed it, its
/// compiled output schema. A call looks its tool up once and keeps the
/// entry: the replay check before sending and the validation after the
/// answer take no lock.
///
/// Only that is kept, not the whole tool: a session holds the entries for
/// as long as the listing is current, and a tool's input schema and
/// description (most of its size) are never needed after listing.
pub(crate) struct ToolEntry {
    name: String,
    /// Annotated read-only or idempotent.
    replay_safe: bool,
    output_schema: Option<Value>,
    compiled: OnceLock<Compiled>,
    /// Its parameters annotated with `x-mcp-header` (none if the
    /// annotations are invalid: such a tool is not listed in the stateless
    /// era).
    headers: Vec<ParamHeader>,
}

/// What one `tools/call` needs to know of the cache.
pub(crate) struct Lookup {
    /// No full listing is stored (none yet, or invalidated since).
    pub(crate) needs_listing: bool,
    /// The tool, if the listing has it.
    pub(crate) entry: Option<Arc<ToolEntry>>,
}

impl ToolCache {
    /// Forgets every tool and compiled schema. Calls already under way keep
    /// the entry they looked up.
    pub(crate) fn invalidate(&self) {
        let mut inner = self.inner.lock();
        inner.generation += 1;
        inner.listed = false;
        inner.tools.clear();
    }

    pub(crate) fn generation(&self) -> u64 {
        self.inner.lock().generation
    }

    /// Marks request `id` as the first page of a listing: when its answer
    /// arrives, the driver notes the generation (see
    /// [`answered`](Self::answered)). A later listing takes the mark over;
    /// the earlier one then falls back to the generation it started at.
    pub(crate) fn begin_listing(&self, id: i64) {
        self.first_page.store(id, Ordering::Relaxed);
    }

    /// Called by the driver for each answer, before the caller sees it:
    /// if `id` opens the listing under way, notes the generation now.
    ///
    /// A `list_changed` taken off the wire before this answer was sent by
    /// the server before the answer, so the answer already reflects it
    /// (server-everything announces a change right after start-up, while
    /// the first listing is in flight); only a change after it makes the
    /// listing stale. Costs one atomic load for any other answer.
    pub(crate) fn answered(&self, id: i64) {
        if self.first_page.load(Ordering::Relaxed) != id {
            return;
        }
        let mut inner = self.inner.lock();
        inner.answered = Some((id, inner.generation));
    }

    /// Remembers `tools`, the listing whose first page was request
    /// `first_page`, if no invalidation happened since its answer arrived
    /// (or, if that answer was not noted, since `generation`, taken before
    /// the listing started).
    pub(crate) fn store(&self, generation: u64, first_page: i64, tools: &[Tool]) {
        let mut inner = self.inner.lock();
        let since = match inner.answered {
            Some((id, at)) if id == first_page => at,
            _ => generation,
        };
        if inner.generation != since {
            return;
        }
        inner.listed = true;
        for t in tools {
            let entry = ToolEntry {
                name: t.name.clone(),
                replay_safe: t.is_replay_safe(),
                output_schema: t.output_schema.clone(),
                compiled: OnceLock::new(),
                headers: param_headers(&t.input_schema).unwrap_or_default(),
            };
            inner.tools.insert(t.name.clone(), Arc::new(entry));
        }
    }

    /// Whether a listing is needed, and the tool `name`: one lock, one hash.
    pub(crate) fn lookup(&self, name: &str) -> Lookup {
        let inner = self.inner.lock();
        Lookup {
            needs_listing: !inner.listed,
            entry: inner.tools.get(name).cloned(),
        }
    }
}

impl ToolEntry {
    /// The `Mcp-Param-*` headers of a call with `arguments`: (name, encoded
    /// value), absent and null arguments left out.
    pub(crate) fn param_headers(&self, arguments: &Value) -> Vec<(String, String)> {
        self.headers
            .iter()
            .filter_map(|h| h.value(arguments).map(|v| (h.name.clone(), v)))
            .collect()
    }

    /// True if the tool mirrors some argument into a header.
    pub(crate) fn has_param_headers(&self) -> bool {
        !self.headers.is_empty()
    }

    /// True if the tool is annotated read-only or idempotent.
    pub(crate) fn replay_safe(&self) -> bool {
        self.replay_safe
    }

    /// The compiled output validator, compiled on first use; `None` if the
    /// tool declares no output schema. Two first calls racing may both
    /// compile (no caller ever blocks on another's compilation); the first
    /// result is kept.
    fn validator(&self) -> Option<&Compiled> {
        if let Some(c) = self.compiled.get() {
            return Some(c);
        }
        let schema = self.output_schema.as_ref()?;
        let compiled: Compiled = Arc::new(OutputSchema::compile(schema));
        let _ = self.compiled.set(compiled);
        self.compiled.get()
    }

    /// Checks a `tools/call` result against the tool's output schema.
    ///
    /// A tool that declares an output schema must return structured content
    /// matching it, unless the result is a tool error (`isError`).
    pub(crate) fn validate(&self, structured: Option<&Value>, is_error: bool) -> Result<(), Error> {
        if is_error {
            return Ok(());
        }
        let Some(compiled) = self.validator() else {
            return Ok(());
        };
        let name = &self.name;
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
        let errors: Vec<String> = validator.errors(value, 16);
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

    /// What `call_tool` does: look the tool up, validate if it is known.
    fn validate(
        cache: &ToolCache,
        name: &str,
        v: Option<&Value>,
        is_error: bool,
    ) -> Result<(), Error> {
        match cache.lookup(name).entry {
            Some(entry) => entry.validate(v, is_error),
            None => Ok(()),
        }
    }

    #[test]
    fn validates_against_the_cached_schema_until_invalidated() {
        let cache = ToolCache::default();
        assert!(cache.lookup("t").needs_listing);
        let schema = json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"]
        });
        cache.store(cache.generation(), -1, &[tool(schema)]);
        assert!(!cache.lookup("t").needs_listing);
        assert!(validate(&cache, "t", Some(&json!({"n": 1})), false).is_ok());
        let err = validate(&cache, "t", Some(&json!({"n": "x"})), false).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::SchemaValidation);
        assert!(err.validation_errors()[0].contains("/n"), "{err:?}");
        assert!(validate(&cache, "t", None, false).is_err());
        assert!(validate(&cache, "t", None, true).is_ok());
        // A call under way keeps the entry it looked up across an
        // invalidation, and its compiled schema is compiled once.
        let held = cache.lookup("t").entry.unwrap();
        let first = Arc::as_ptr(held.validator().unwrap());
        // 2020-12 keywords work (prefixItems is new in 2020-12).
        let g = cache.generation();
        cache.invalidate();
        cache.store(g, -1, &[tool(json!({"type": "array"}))]);
        assert!(
            cache.lookup("t").needs_listing,
            "a stale listing is not stored"
        );
        assert!(held.validate(Some(&json!({"n": "x"})), false).is_err());
        assert_eq!(Arc::as_ptr(held.validator().unwrap()), first);
        cache.store(
            cache.generation(),
            -1,
            &[tool(json!({"prefixItems": [{"type": "string"}]}))],
        );
        assert!(validate(&cache, "t", Some(&json!(["a", 1])), false).is_ok());
        assert!(validate(&cache, "t", Some(&json!([1])), false).is_err());
        assert!(validate(&cache, "unknown", Some(&json!(1)), false).is_ok());
    }

    #[test]
    fn a_change_before_the_first_answer_keeps_the_listing() {
        let cache = ToolCache::default();
        let t = || tool(json!({"type": "object"}));
        // Changed while the first page was in flight: still current.
        let g = cache.generation();
        cache.begin_listing(7);
        cache.invalidate();
        cache.answered(8); // another request's answer notes nothing
        cache.answered(7);
        cache.store(g, 7, &[t()]);
        assert!(!cache.lookup("t").needs_listing);
        // Changed after the first answer: stale.
        let g = cache.generation();
        cache.begin_listing(9);
        cache.answered(9);
        cache.invalidate();
        cache.store(g, 9, &[t()]);
        assert!(cache.lookup("t").needs_listing);
        // The mark taken over by another listing: the start generation
        // decides for this one.
        let g = cache.generation();
        cache.begin_listing(10);
        cache.begin_listing(11);
        cache.answered(10);
        cache.invalidate();
        cache.store(g, 10, &[t()]);
        assert!(cache.lookup("t").needs_listing);
    }
}
