//! Content blocks: text, image, audio, resource links and embedded resources; the resource a link names.

use std::fmt;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::key::{Key, set_once};
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

/// A resource the server offers (`resources/list`), or links to in a
/// content block (a [`ResourceLink`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Resource {
    /// Its URI.
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
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A link to a resource the client may read: in the schema a
/// `ResourceLink` is a [`Resource`] and a `type` of `"resource_link"`,
/// which [`ContentBlock`] reads and writes.
pub type ResourceLink = Resource;

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
        d.deserialize_map(BlockVisitor)
    }
}

/// Reads a content block. Servers put `type` first, and a text block then
/// parses member by member straight from the input; any other shape is
/// gathered into a JSON object first and classified by [`from_object`].
struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ContentBlock, A::Error> {
        let mut obj = Map::new();
        if let Some(first) = map.next_key::<Key<'de>>()? {
            if first.as_str() == "type" {
                let kind = match map.next_value::<TypeTag<'de>>()? {
                    TypeTag::Name(name) if name.as_str() == "text" => {
                        return text_rest(map).map(ContentBlock::Text);
                    }
                    TypeTag::Name(name) => Value::String(name.into_string()),
                    TypeTag::Other(v) => v,
                };
                obj.insert("type".to_owned(), kind);
            } else {
                let value: Value = map.next_value()?;
                obj.insert(first.into_string(), value);
            }
        }
        while let Some(key) = map.next_key::<String>()? {
            let value: Value = map.next_value()?;
            obj.insert(key, value);
        }
        from_object(obj).map_err(A::Error::custom)
    }
}

/// The value of a block's `type`: a name, read without allocating when it
/// has no escapes, or any other JSON value (which makes the block
/// [`ContentBlock::Unknown`]), kept as sent.
enum TypeTag<'de> {
    Name(Key<'de>),
    Other(Value),
}

impl<'de> Deserialize<'de> for TypeTag<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TypeTagVisitor)
    }
}

struct TypeTagVisitor;

impl<'de> Visitor<'de> for TypeTagVisitor {
    type Value = TypeTag<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block type")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<TypeTag<'de>, E> {
        Ok(TypeTag::Name(Key::Borrowed(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TypeTag<'de>, E> {
        Ok(TypeTag::Name(Key::Owned(v.to_owned())))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<TypeTag<'de>, E> {
        Ok(TypeTag::Name(Key::Owned(v)))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<TypeTag<'de>, E> {
        Ok(TypeTag::Other(Value::Bool(v)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<TypeTag<'de>, E> {
        Ok(TypeTag::Other(Value::from(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<TypeTag<'de>, E> {
        Ok(TypeTag::Other(Value::from(v)))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<TypeTag<'de>, E> {
        Ok(TypeTag::Other(Value::from(v)))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<TypeTag<'de>, E> {
        Ok(TypeTag::Other(Value::Null))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<TypeTag<'de>, E> {
        Ok(TypeTag::Other(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<TypeTag<'de>, D::Error> {
        Value::deserialize(d).map(TypeTag::Other)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<TypeTag<'de>, A::Error> {
        Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(TypeTag::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TypeTag<'de>, A::Error> {
        Value::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(TypeTag::Other)
    }
}

/// The members of a text block after its `type`.
fn text_rest<'de, A: MapAccess<'de>>(mut map: A) -> Result<TextContent, A::Error> {
    let mut text = None;
    let mut annotations = None;
    let mut meta = None;
    let mut extra = Extra::new();
    while let Some(key) = map.next_key::<Key<'de>>()? {
        match key.as_str() {
            "text" => set_once(&mut text, map.next_value::<String>()?, "text")?,
            "annotations" => set_once(&mut annotations, map.next_value()?, "annotations")?,
            "_meta" => set_once(&mut meta, map.next_value()?, "_meta")?,
            "type" => return Err(A::Error::duplicate_field("type")),
            _ => {
                let value: Value = map.next_value()?;
                extra.insert(key.into_string(), value);
            }
        }
    }
    Ok(TextContent {
        text: text.ok_or_else(|| A::Error::missing_field("text"))?,
        annotations: annotations.flatten(),
        meta: meta.flatten(),
        extra,
    })
}

/// Classifies a block held as a JSON object: a known `type` becomes its
/// typed form, anything else is kept whole as [`ContentBlock::Unknown`].
fn from_object(mut obj: Map<String, Value>) -> Result<ContentBlock, serde_json::Error> {
    let kind = match obj.get("type").and_then(Value::as_str) {
        Some(k @ ("text" | "image" | "audio" | "resource_link" | "resource")) => k.to_owned(),
        _ => return Ok(ContentBlock::Unknown(Value::Object(obj))),
    };
    obj.remove("type");
    let value = Value::Object(obj);
    match kind.as_str() {
        "text" => serde_json::from_value(value).map(ContentBlock::Text),
        "image" => serde_json::from_value(value).map(ContentBlock::Image),
        "audio" => serde_json::from_value(value).map(ContentBlock::Audio),
        "resource_link" => serde_json::from_value(value).map(ContentBlock::ResourceLink),
        _ => serde_json::from_value(value).map(ContentBlock::Resource),
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
    fn a_type_that_is_not_a_name_keeps_the_block_whole() {
        for kind in [
            json!(5),
            json!(-1.5),
            json!(null),
            json!(true),
            json!([1, "a"]),
            json!({"k": [null]}),
        ] {
            let block = json!({"type": kind, "text": "t", "x": 1});
            let text = serde_json::to_string(&block).unwrap();
            let parsed: ContentBlock = serde_json::from_str(&text).unwrap();
            assert_eq!(parsed, ContentBlock::Unknown(block.clone()), "{text}");
        }
        let escaped: ContentBlock =
            serde_json::from_str(r#"{"type": "t\u0065xt", "text": "hi"}"#).unwrap();
        assert_eq!(escaped.as_text(), Some("hi"), "an escaped name is read too");
    }

    #[test]
    fn a_known_type_with_a_missing_field_is_an_error() {
        let err = serde_json::from_value::<ContentBlock>(json!({"type": "image", "data": "x"}));
        assert!(err.is_err());
    }
}
