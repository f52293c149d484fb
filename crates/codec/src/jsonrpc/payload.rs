use std::fmt;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::in_place;

/// The raw JSON text of one value (`params`, `result`, `error.data`).
///
/// A `Payload` taken from a parsed frame is a zero-copy slice of that frame,
/// already checked to be well-formed JSON. It is parsed into a type only when
/// the layer that knows the type asks, with [`deserialize`](Self::deserialize),
/// so nothing is parsed twice and unknown fields are never dropped by this
/// layer.
#[derive(Clone, PartialEq, Eq)]
pub struct Payload(Bytes);

impl Payload {
    /// Wraps bytes the envelope parser has already checked.
    pub(crate) fn from_checked(bytes: Bytes) -> Self {
        Payload(bytes)
    }

    /// Checks that `bytes` hold exactly one well-formed JSON value.
    pub fn from_json(bytes: Bytes) -> Result<Self, serde_json::Error> {
        serde_json::from_slice::<&RawValue>(&bytes)?;
        Ok(Payload(bytes))
    }

    /// Serializes `value` into a new payload.
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::to_vec(value).map(|v| Payload(Bytes::from(v)))
    }

    /// The JSON text as bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The JSON text. Payloads are valid UTF-8; this checks it again (cheaply)
    /// because the crate does not use `unsafe`.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("")
    }

    /// The JSON text, as shared bytes.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }

    /// True if the payload is the JSON literal `null`.
    pub fn is_null(&self) -> bool {
        self.0.as_ref() == b"null"
    }

    /// Parses the payload as `T`.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.0)
    }

    /// Parses the payload as `T`, consuming it.
    ///
    /// The same as [`deserialize`](Self::deserialize), with less memory for
    /// a large payload: when it holds at least 1 MiB and nothing else holds
    /// its frame (the other payloads of the frame are dropped), its longest
    /// string is decoded in the frame's own allocation, so a large text
    /// answer is never in memory twice. `T` is then read from a
    /// [`serde_json::Value`] tree, which moves its strings into it.
    pub fn take<T: DeserializeOwned>(self) -> Result<T, serde_json::Error> {
        if self.0.len() < in_place::IN_PLACE_MIN {
            return self.deserialize();
        }
        match self.0.try_into_mut() {
            Ok(unique) => in_place::parse(unique.into()),
            Err(shared) => serde_json::from_slice(&shared),
        }
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 256;
        let text = String::from_utf8_lossy(&self.0[..self.0.len().min(SHOWN)]);
        if self.0.len() > SHOWN {
            write!(f, "Payload({text}… {} bytes)", self.0.len())
        } else {
            write!(f, "Payload({text})")
        }
    }
}

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_slice(&self.0).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use serde_json::Value;

    use crate::jsonrpc::{Message, Response};

    fn answer(text: &str) -> Bytes {
        let frame = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}});
        Bytes::from(serde_json::to_vec(&frame).unwrap())
    }

    fn result(frame: Bytes) -> super::Payload {
        match Message::parse(frame).unwrap() {
            Message::Response(Response { outcome: Ok(p), .. }) => p,
            other => panic!("not a result: {other:?}"),
        }
    }

    #[test]
    fn taking_a_large_payload_alone_reuses_its_frame() {
        let text = "line\n".repeat(300_000);
        let frame = answer(&text);
        let range = frame.as_ptr() as usize..frame.as_ptr() as usize + frame.len();
        let payload = result(frame);
        let usual: Value = payload.deserialize().unwrap();
        let taken: Value = payload.take().unwrap();
        assert_eq!(taken, usual);
        let got = taken["content"][0]["text"].as_str().unwrap();
        assert!(range.contains(&(got.as_ptr() as usize)));
    }

    #[test]
    fn a_payload_whose_frame_is_still_held_is_copied() {
        let text = "x".repeat(2 << 20);
        let frame = answer(&text);
        let payload = result(frame.clone());
        let taken: Value = payload.take().unwrap();
        let got = taken["content"][0]["text"].as_str().unwrap();
        assert_eq!(got, text);
        let range = frame.as_ptr() as usize..frame.as_ptr() as usize + frame.len();
        assert!(!range.contains(&(got.as_ptr() as usize)));
    }
}
