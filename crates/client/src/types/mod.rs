//! MCP protocol types (2025-11-25, readable from 2024-11-05 on).
//!
//! Every object keeps members it does not know in an `extra` map, so a value
//! read from the wire serializes back without loss; `_meta` is a field
//! wherever the specification allows it.

mod common;
mod content;
mod init;
mod prompts;
mod resources;
mod server_requests;
mod tools;

pub use common::{
    Annotations, Cancelled, Cursor, EmptyResult, Extra, Icon, Meta, PaginatedParams, Progress, Role,
};
pub use content::{
    ContentBlock, EmbeddedResource, MediaContent, ResourceContents, ResourceLink, TextContent,
};
pub use init::{
    ClientCapabilities, Implementation, InitializeParams, InitializeResult, ListCapability,
    ServerCapabilities,
};
pub use prompts::{
    Arguments, CompleteResult, Completion, CompletionReference, GetPromptResult, ListPromptsResult,
    LogMessage, LoggingLevel, Prompt, PromptArgument, PromptMessage,
};
pub use resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceTemplate, ResourceUpdated,
};
pub use server_requests::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    ListRootsResult, Root, SamplingMessage,
};
pub use tools::{CallToolParams, CallToolResult, ListToolsResult, Tool, ToolAnnotations};
