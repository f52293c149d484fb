//! What the server asks of the client: sampling, roots, elicitation.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Extra, Meta, Role};

/// One message of a sampling conversation.
///
/// `content` stays JSON because 2025-11-25 allows a single block or an array
/// (with tool use and tool results); [`text`](Self::text) reads plain text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// One content block, or an array of them.
    pub content: Value,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl SamplingMessage {
    /// The text of the message's text blocks, joined.
    pub fn text(&self) -> String {
        let block_text = |b: &Value| b.get("text").and_then(Value::as_str).map(str::to_owned);
        match &self.content {
            Value::Array(blocks) => blocks.iter().filter_map(block_text).collect(),
            b => block_text(b).unwrap_or_default(),
        }
    }
}

/// `sampling/createMessage` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// A system prompt.
    #[serde(
        rename = "systemPrompt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub system_prompt: Option<String>,
    /// The most tokens to generate.
    #[serde(rename = "maxTokens")]
    pub max_tokens: u64,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Model preferences, as sent.
    #[serde(
        rename = "modelPreferences",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub model_preferences: Option<Value>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Everything else (`includeContext`, `stopSequences`, `tools`...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// `sampling/createMessage` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Who said it (the assistant).
    pub role: Role,
    /// One content block (or an array, with tool use).
    pub content: Value,
    /// The model that produced it.
    pub model: String,
    /// Why generation stopped.
    #[serde(
        rename = "stopReason",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub stop_reason: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl CreateMessageResult {
    /// An assistant text answer from `model`.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: serde_json::json!({"type": "text", "text": text.into()}),
            model: model.into(),
            stop_reason: Some("endTurn".into()),
            meta: None,
            extra: Extra::new(),
        }
    }
}

/// A root: a directory or file the server may work in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Root {
    /// A root at `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: Option<String>) -> Self {
        Self {
            uri: uri.into(),
            name,
            meta: None,
            extra: Extra::new(),
        }
    }
}

/// `roots/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl ListRootsResult {
    /// A result listing `roots`.
    pub fn new(roots: Vec<Root>) -> Self {
        Self {
            roots,
            meta: None,
            extra: Extra::new(),
        }
    }
}

/// `elicitation/create` params, in form mode (no `mode`, or `"form"`) or URL
/// mode (`"url"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitParams {
    /// `"form"`, `"url"`, or absent (form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What to show the user.
    pub message: String,
    /// Form mode: the flat JSON Schema of the fields asked for.
    #[serde(
        rename = "requestedSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub requested_schema: Option<Value>,
    /// URL mode: where to send the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode: the server's id for this elicitation.
    #[serde(
        rename = "elicitationId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub elicitation_id: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl ElicitParams {
    /// True for URL mode.
    pub fn is_url_mode(&self) -> bool {
        self.mode.as_deref() == Some("url")
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted or confirmed.
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// `elicitation/create` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// Form mode, on accept: the values entered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl ElicitResult {
    /// A result with `action` and optional form `content`.
    pub fn new(action: ElicitAction, content: Option<Map<String, Value>>) -> Self {
        Self {
            action,
            content,
            meta: None,
            extra: Extra::new(),
        }
    }

    /// On `accept`, gives every field of `requested_schema` that has a
    /// `default` and is missing from the content that default (SEP-1034: a
    /// form is offered pre-filled with the defaults, so a field the user did
    /// not touch is submitted with its default). Values present are kept;
    /// `decline` and `cancel` are left alone.
    pub fn fill_defaults(&mut self, requested_schema: &Value) {
        if self.action != ElicitAction::Accept {
            return;
        }
        let Some(properties) = requested_schema
            .get("properties")
            .and_then(Value::as_object)
        else {
            return;
        };
        let mut defaults = properties
            .iter()
            .filter_map(|(name, field)| Some((name, field.get("default")?)))
            .peekable();
        if defaults.peek().is_none() {
            return;
        }
        let content = self.content.get_or_insert_with(Map::new);
        for (name, default) in defaults {
            content
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}
