//! `initialize`: implementation info and capabilities.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Extra, Icon, Meta};

/// Who an implementation (client or server) is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Implementation {
    /// Its programmatic name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its version.
    pub version: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Its website.
    #[serde(
        rename = "websiteUrl",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub website_url: Option<String>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            version: version.into(),
            description: None,
            icons: None,
            website_url: None,
            extra: Extra::new(),
        }
    }
}

/// A capability that is a set of flags (`{"listChanged": true}`...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListCapability {
    /// The peer sends `list_changed` notifications.
    #[serde(
        rename = "listChanged",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub list_changed: Option<bool>,
    /// Resources only: the server accepts `resources/subscribe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What the client supports; derived from the configured handlers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Extra>,
    /// Present when a roots handler is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<ListCapability>,
    /// Present when a sampling handler is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Extra>,
    /// Present when an elicitation handler is configured (`form`, `url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<Extra>,
    /// Members this version does not know (tasks...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// What the server supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Extra>,
    /// The server sends log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Value>,
    /// The server offers argument completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Value>,
    /// The server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListCapability>,
    /// The server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ListCapability>,
    /// The server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListCapability>,
    /// Members this version does not know (tasks...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// `initialize` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InitializeParams {
    /// The latest version the client supports.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    #[serde(rename = "clientInfo")]
    pub client_info: Implementation,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `initialize` result: what the server chose and offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InitializeResult {
    /// The version the server chose.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    #[serde(rename = "serverInfo")]
    pub server_info: Implementation,
    /// How to use the server, for a model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `server/discover` result (the 2026-07-28 revision): the versions,
/// capabilities and identity of a stateless server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DiscoverResult {
    /// The protocol versions the server supports.
    #[serde(rename = "supportedVersions")]
    pub supported_versions: Vec<String>,
    /// The server's capabilities.
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    /// Who the server is, when sent as a member of the result (the
    /// revision puts it in `_meta` as `io.modelcontextprotocol/serverInfo`;
    /// [`server_info`](Self::server_info) reads either).
    #[serde(
        rename = "serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// How to use the server, for a model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know (`ttlMs`, `cacheScope`...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl DiscoverResult {
    /// Who the server says it is: `_meta`'s
    /// `io.modelcontextprotocol/serverInfo`, else a `serverInfo` member.
    pub fn server_info(&self) -> Option<Implementation> {
        self.meta
            .as_ref()
            .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .or_else(|| self.server_info.clone())
    }

    /// The description of the server the rest of the client works from,
    /// at the version chosen.
    pub(crate) fn into_session(self, version: &str) -> InitializeResult {
        let server_info = self
            .server_info()
            .unwrap_or_else(|| Implementation::new("unknown", ""));
        InitializeResult {
            protocol_version: version.to_owned(),
            capabilities: self.capabilities,
            server_info,
            instructions: self.instructions,
            meta: self.meta,
            extra: self.extra,
        }
    }
}
