//! The results of the paginated `*/list` methods: one page of items, where
//! the next page starts, `_meta`, and the members this version does not know.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{Cursor, Extra, Meta, Prompt, Resource, ResourceTemplate, Tool};

/// One page of a paginated list method, as the client follows them.
/// Implemented by the four list results of this module only.
pub trait Page: DeserializeOwned + Send + sealed::Sealed {
    /// What the page lists.
    type Item: Send;
    /// The method that returns it.
    const METHOD: &'static str;
    /// The items, and the cursor of the next page if there is one.
    fn into_parts(self) -> (Vec<Self::Item>, Option<Cursor>);
}

pub(crate) mod sealed {
    /// Keeps [`Page`](super::Page) to this module's types.
    pub trait Sealed {}
}

/// A list result type: its items under `$field`, then the members every
/// page has.
macro_rules! list_result {
    (
        $(#[doc = $doc:literal])*
        $name:ident, $method:literal,
        $(#[$field_attr:meta])*
        $field:ident: $item:ty
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[non_exhaustive]
        pub struct $name {
            $(#[$field_attr])*
            pub $field: Vec<$item>,
            /// Where the next page starts, if there is one.
            #[serde(
                rename = "nextCursor",
                default,
                skip_serializing_if = "Option::is_none"
            )]
            pub next_cursor: Option<Cursor>,
            /// Metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<Meta>,
            /// Members this version does not know.
            #[serde(flatten)]
            pub extra: Extra,
        }

        impl sealed::Sealed for $name {}

        impl Page for $name {
            type Item = $item;
            const METHOD: &'static str = $method;
            fn into_parts(self) -> (Vec<$item>, Option<Cursor>) {
                (self.$field, self.next_cursor)
            }
        }
    };
}

list_result! {
    /// `tools/list` result.
    ListToolsResult, "tools/list",
    /// This page of tools.
    tools: Tool
}

list_result! {
    /// `resources/list` result.
    ListResourcesResult, "resources/list",
    /// This page of resources.
    resources: Resource
}

list_result! {
    /// `resources/templates/list` result.
    ListResourceTemplatesResult, "resources/templates/list",
    /// This page of templates.
    #[serde(rename = "resourceTemplates")]
    resource_templates: ResourceTemplate
}

list_result! {
    /// `prompts/list` result.
    ListPromptsResult, "prompts/list",
    /// This page of prompts.
    prompts: Prompt
}
