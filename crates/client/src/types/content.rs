//! Content blocks: text, image, audio, resource links and embedded resources.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{Annotations, Extra, Icon, Meta};

/// Text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl TextContent {
    /// Text content with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            annotations: None,
            meta: None,
            extra: Extra::new(),
        }
    }
}

/// Image or audio content: base64 data with a MIME type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MediaContent {
    /// Base64-encoded data.
    pub data: String,
    /// Its MIME type.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The contents of a resource: text or a base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text, for a text resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 data, for a binary resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A resource embedded in a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A link to a resource the client may read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its programmatic name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One block of content in a tool result, prompt message or sampling message.
///
/// A block whose `type` this version does not know is kept whole as
/// [`Unknown`](Self::Unknown), so newer servers do not break older clients.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(MediaContent),
    /// `"type": "audio"`.
    Audio(MediaContent),
    /// `"type": "resource_link"`.
    ResourceLink(ResourceLink),
    /// `"type": "resource"`.
    Resource(EmbeddedResource),
    /// Any other type, as sent.
    Unknown(Value),
}

impl ContentBlock {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum Tagged<'a> {
    #[serde(rename = "text")]
    Text(&'a TextContent),
    #[serde(rename = "image")]
    Image(&'a MediaContent),
    #[serde(rename = "audio")]
    Audio(&'a MediaContent),
    #[serde(rename = "resource_link")]
    ResourceLink(&'a ResourceLink),
    #[serde(rename = "resource")]
    Resource(&'a EmbeddedResource),
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(c) => Tagged::Text(c).serialize(s),
            ContentBlock::Image(c) => Tagged::Image(c).serialize(s),
            ContentBlock::Audio(c) => Tagged::Audio(c).serialize(s),
            ContentBlock::ResourceLink(c) => Tagged::ResourceLink(c).serialize(s),
            ContentBlock::Resource(c) => Tagged::Resource(c).serialize(s),
            ContentBlock::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = Value::deserialize(d)?;
        let Some(obj) = value.as_object_mut() else {
            return Err(D::Error::custom("content block must be an object"));
        };
        let kind = match obj.get("type").and_then(Value::as_str) {
            Some(k @ ("text" | "image" | "audio" | "resource_link" | "resource")) => k.to_owned(),
            _ => return Ok(ContentBlock::Unknown(value)),
        };
        obj.remove("type");
        let block = match kind.as_str() {
            "text" => serde_json::from_value(value).map(ContentBlock::Text),
            "image" => serde_json::from_value(value).map(ContentBlock::Image),
            "audio" => serde_json::from_value(value).map(ContentBlock::Audio),
            "resource_link" => serde_json::from_value(value).map(ContentBlock::ResourceLink),
            _ => serde_json::from_value(value).map(ContentBlock::Resource),
        };
        block.map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_kind_round_trips_with_unknown_members() {
        let blocks = json!([
            {"type": "text", "text": "hi", "annotations": {"priority": 0.5, "x": 1}, "future": true},
            {"type": "image", "data": "AAA=", "mimeType": "image/png"},
            {"type": "audio", "data": "AAA=", "mimeType": "audio/wav", "_meta": {"k": "v"}},
            {"type": "resource_link", "uri": "file:///a", "name": "a", "icons": [{"src": "data:,", "theme": "dark"}]},
            {"type": "resource", "resource": {"uri": "file:///b", "text": "b", "extra": 2}},
            {"type": "hologram", "depth": 3}
        ]);
        let parsed: Vec<ContentBlock> = serde_json::from_value(blocks.clone()).unwrap();
        assert_eq!(parsed[0].as_text(), Some("hi"));
        assert!(matches!(parsed[5], ContentBlock::Unknown(_)));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), blocks);
    }

    #[test]
    fn a_known_type_with_a_missing_field_is_an_error() {
        let err = serde_json::from_value::<ContentBlock>(json!({"type": "image", "data": "x"}));
        assert!(err.is_err());
    }
}
