//! [`Input`]: VS Code's `inputs`, the values a user is asked for when a
//! server that refers to them (`${input:ID}`) starts.

use std::fmt;

use serde_json::{Map, Value};

use crate::document::{Node, NodeKind};
use crate::redact;

/// One of VS Code's `inputs`. The loader only reads them; asking the user
/// and answering `${input:ID}` is the caller's, through a
/// [`VariableResolver`](crate::VariableResolver).
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Input {
    /// What `${input:ID}` refers to it by.
    pub id: String,
    /// `type`: `promptString`, `pickString` or `command`.
    pub kind: String,
    /// The prompt shown (`description`).
    pub description: Option<String>,
    /// The answer is a secret: hide it while typed, never log it
    /// (`password`).
    pub password: bool,
    /// The value proposed (`default`).
    pub default: Option<String>,
    /// The choices of a `pickString` (`options`, the plain string ones).
    pub options: Vec<String>,
    /// Every other field, verbatim.
    pub extra: Map<String, Value>,
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let default = match (&self.default, self.password) {
            (Some(_), true) => Some(redact::REDACTED.to_owned()),
            (d, _) => d.clone(),
        };
        f.debug_struct("Input")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("description", &self.description)
            .field("password", &self.password)
            .field("default", &default)
            .field("options", &self.options)
            .field("extra", &redact::extra(&self.extra))
            .finish()
    }
}

/// The inputs of a VS Code `inputs` array; elements without a string `id`
/// cannot be referred to and are skipped.
pub(crate) fn read(node: Option<&Node>) -> Vec<Input> {
    let Some(NodeKind::Array(items)) = node.map(|n| &n.kind) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let mut extra = item.to_value().as_object()?.clone();
            let id = extra.remove("id")?.as_str()?.to_owned();
            let text = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_owned));
            Some(Input {
                id,
                kind: text(extra.remove("type")).unwrap_or_default(),
                description: text(extra.remove("description")),
                password: extra
                    .remove("password")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false),
                default: text(extra.remove("default")),
                options: match extra.remove("options") {
                    Some(Value::Array(options)) => options
                        .into_iter()
                        .filter_map(|o| o.as_str().map(str::to_owned))
                        .collect(),
                    _ => Vec::new(),
                },
                extra,
            })
        })
        .collect()
}
