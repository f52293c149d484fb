//! MCP protocol types (2025-11-25, readable from 2024-11-05 on).
//!
//! Every object keeps members it does not know in an `extra` map, so a value
//! read from the wire serializes back without loss; `_meta` is a field
//! wherever the specification allows it.

mod common;
mod init;
mod key;
mod content;
mod prompts;
mod resources;
mod server_requests;
mod tools;
pub(crate) mod page;

pub use common::{
    Annotations, Cancelled, Cursor, EmptyResult, Extra, Icon, Meta, PaginatedParams, Progress, Role,
};
pub use content::{
    ContentBlock, EmbeddedResource, MediaContent, Resource, ResourceContents, ResourceLink,
    TextContent,
};
pub use init::{
    ClientCapabilities, DiscoverResult, Implementation, InitializeParams, InitializeResult,
    ListCapability, ServerCapabilities,
};
pub use page::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Page,
};
pub use prompts::{
    Arguments, CompleteResult, Completion, CompletionReference, GetPromptResult, LogMessage,
    LoggingLevel, Prompt, PromptArgument, PromptMessage,
};
pub use resources::{ReadResourceResult, ResourceTemplate, ResourceUpdated};
pub use server_requests::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    ListRootsResult, Root, SamplingMessage,
};
pub use tools::{CallToolParams, CallToolResult, Tool, ToolAnnotations};

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::*;

    fn round_trip<T: Serialize + DeserializeOwned>(v: Value) {
        let parsed: T = serde_json::from_value(v.clone()).expect("parses");
        assert_eq!(serde_json::to_value(&parsed).unwrap(), v, "round trip");
    }

    #[test]
    fn messages_round_trip_with_unknown_members_and_meta() {
        round_trip::<InitializeResult>(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tools": {"listChanged": true, "future": 1},
                "resources": {"subscribe": true},
                "tasks": {"list": {}},
                "experimental": {"x": {}}
            },
            "serverInfo": {"name": "s", "title": "S", "version": "1", "icons": [{"src": "data:,", "sizes": ["48x48"], "theme": "light"}], "websiteUrl": "https://example.invalid"},
            "instructions": "hi",
            "_meta": {"k": 1},
            "newTopLevel": true
        }));
        round_trip::<ListToolsResult>(json!({
            "tools": [{
                "name": "t", "title": "T", "description": "d",
                "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false, "title": "A", "z": 1},
                "icons": [{"src": "https://example.invalid/i.png", "mimeType": "image/png"}],
                "execution": {"taskSupport": "optional"},
                "_meta": {"a": 2}
            }],
            "nextCursor": "c",
            "_meta": {}
        }));
        round_trip::<CallToolResult>(json!({
            "content": [{"type": "text", "text": "x", "_meta": {"m": 1}}],
            "structuredContent": {"a": 1},
            "isError": false,
            "_meta": {"progress": 1}
        }));
        round_trip::<GetPromptResult>(json!({
            "description": "d",
            "messages": [{"role": "assistant", "content": {"type": "resource", "resource": {"uri": "u", "blob": "AA==", "mimeType": "x"}}}]
        }));
        round_trip::<ListResourcesResult>(json!({
            "resources": [{"uri": "u", "name": "n", "annotations": {"audience": ["user"], "priority": 1.0, "lastModified": "2025-01-01T00:00:00Z"}, "size": 3}]
        }));
        round_trip::<ElicitParams>(json!({
            "mode": "url", "message": "m", "url": "https://example.invalid", "elicitationId": "e", "task": {"ttl": 1}
        }));
        round_trip::<CreateMessageParams>(json!({
            "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "tool_result", "toolUseId": "1", "content": []}]}],
            "maxTokens": 5,
            "includeContext": "none",
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "auto"}
        }));
        round_trip::<LogMessage>(json!({"level": "emergency", "logger": "l", "data": [1, 2]}));
        round_trip::<CompleteResult>(
            json!({"completion": {"values": ["a"], "total": 1, "hasMore": false}}),
        );
    }
}
