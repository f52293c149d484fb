//! Object member names read without allocating, for the hand-written
//! deserializers of the hot result types.
//!
//! A derived deserializer with `#[serde(flatten)]` first buffers the whole
//! object into serde's internal tree and then deserializes every field from
//! it; on `tools/call` results that was most of the client's decoding work.
//! The hand-written visitors read each member once, straight from the input,
//! and only the members they do not know are kept as [`Value`]s.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// A member name, borrowed from the input when it has no escapes.
pub(super) enum Key<'de> {
    /// Borrowed from the input.
    Borrowed(&'de str),
    /// Unescaped or otherwise copied.
    Owned(String),
}

impl Key<'_> {
    /// The name.
    pub(super) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }

    /// The name as an owned string, for an unknown member kept in `extra`.
    pub(super) fn into_string(self) -> String {
        match self {
            Key::Borrowed(s) => s.to_owned(),
            Key::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// Stores `value` in `slot`, refusing a member that appears twice (as the
/// derived deserializers do).
pub(super) fn set_once<T, E: de::Error>(
    slot: &mut Option<T>,
    value: T,
    name: &'static str,
) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::duplicate_field(name));
    }
    *slot = Some(value);
    Ok(())
}
