//! What the transport reads of an outbound frame before posting it: whether
//! it is a request (and its id), a notification, or anything else.
//!
//! The client says so itself ([`Outgoing`]'s kind): the frame is then not
//! read at all. A frame handed over as bare bytes is peeked at.
//!
//! Why a peek rather than a full parse: every such frame is classified, and a full
//! envelope parse validates the whole `params` value, which is most of the
//! frame (what the peek saved is in `docs/benchmarks.md`, "Third round").
//! The peek reads the top-level members in order and stops as
//! soon as the answer is known: for a request as encoded by the client
//! (`jsonrpc`, `id`, `method`, then `params`) that is before `params`. The
//! frame is posted as it is either way; the server judges its validity.

use std::fmt;

use bytes::Bytes;
use std::sync::Arc;

use mcpwire_codec::jsonrpc::Id;
use mcpwire_transport::{FrameKind, FrameMeta, Outgoing};
use serde::Deserializer as _;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// What the transport may know about an outbound frame: its JSON-RPC
/// envelope, never its MCP meaning beyond the two lifecycle methods that
/// change the transport's own state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outbound {
    /// A request: an answer (JSON or SSE) is expected on its POST. `meta`
    /// is the header fields its sender gave.
    Request {
        id: Id,
        initialize: bool,
        meta: Option<Arc<FrameMeta>>,
    },
    /// A notification; `initialized` opens the GET stream.
    Notification { initialized: bool },
    /// A response (a result or an error) to a request of the server's.
    Response,
    /// A batch, or something we cannot read: posted as is.
    Other,
}

impl Outbound {
    /// What `out` is: as its sender says, or else by its top-level `id`,
    /// `method`, `result` and `error` members.
    pub(crate) fn of(out: &Outgoing) -> Outbound {
        match &out.kind {
            FrameKind::Request { id, method } => Outbound::Request {
                id: id.clone(),
                initialize: method == "initialize",
                meta: out.meta.clone(),
            },
            FrameKind::Notification { method } => Outbound::Notification {
                initialized: method == "notifications/initialized",
            },
            FrameKind::Response { .. } => Outbound::Response,
            // Not said, or a kind added later: read the frame.
            _ => match Self::classify(&out.frame) {
                Outbound::Request { id, initialize, .. } => Outbound::Request {
                    id,
                    initialize,
                    meta: out.meta.clone(),
                },
                other => other,
            },
        }
    }

    /// Classifies `frame` by its top-level `id`, `method`, `result` and
    /// `error` members.
    fn classify(frame: &Bytes) -> Outbound {
        if let Some((id, rest)) = common_prefix(frame)
            && let Some(method) = rest.strip_prefix(br#","method":""#).and_then(plain_string)
        {
            return Outbound::Request {
                id,
                initialize: method == b"initialize",
                meta: None,
            };
        }
        let Some(peek) = Peek::of(frame) else {
            return Outbound::Other;
        };
        if peek.answer {
            return match (peek.id, peek.method) {
                (Some(_), None) => Outbound::Response,
                _ => Outbound::Other,
            };
        }
        let Some(method) = peek.method.and_then(method_name) else {
            return Outbound::Other;
        };
        match peek.id {
            None => Outbound::Notification {
                initialized: method == "notifications/initialized",
            },
            Some(id) => match parse_id(id) {
                Some(id) => Outbound::Request {
                    id,
                    initialize: method == "initialize",
                    meta: None,
                },
                None => Outbound::Other,
            },
        }
    }

    /// An `initialize` request: its answer starts a new session.
    pub(crate) fn is_initialize(&self) -> bool {
        matches!(
            self,
            Outbound::Request {
                initialize: true,
                ..
            }
        )
    }
}

/// The top-level members read so far.
#[derive(Default)]
struct Peek<'a> {
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    /// A `result` or `error` member: a response.
    answer: bool,
    /// The members needed were read without error.
    done: bool,
}

impl<'a> Peek<'a> {
    /// Reads the top-level members of the object in `frame` up to the point
    /// where its kind is known; `None` if it is not an object or breaks
    /// before that point.
    fn of(frame: &'a [u8]) -> Option<Peek<'a>> {
        if frame.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        let mut peek = Peek::default();
        let mut de = serde_json::Deserializer::from_slice(frame);
        // Stopping early makes serde_json report the members left unread as
        // an error; what was read before that is in `peek`, and `done` says
        // whether it is complete.
        let _ = de.deserialize_map(PeekVisitor(&mut peek));
        peek.done.then_some(peek)
    }
}

/// True if `frame` is the response (a result or an error) to the request
/// with `id`. Only the envelope up to the id and the outcome is read.
pub(crate) fn answers(frame: &[u8], id: &Id) -> bool {
    if let Some((got, rest)) = common_prefix(frame)
        && (rest.starts_with(br#","result":"#) || rest.starts_with(br#","error":"#))
    {
        return got == *id;
    }
    Peek::of(frame).is_some_and(|p| {
        p.answer && p.method.is_none() && p.id.and_then(parse_id).as_ref() == Some(id)
    })
}

struct PeekVisitor<'p, 'a>(&'p mut Peek<'a>);

impl<'de> Visitor<'de> for PeekVisitor<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let peek = self.0;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Id => peek.id = Some(map.next_value()?),
                Key::Method => peek.method = Some(map.next_value()?),
                Key::Answer => {
                    peek.answer = true;
                    // The outcome itself is never needed: skip reading it
                    // when the id is already known.
                    if peek.id.is_some() {
                        break;
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            if peek.id.is_some() && (peek.method.is_some() || peek.answer) {
                break;
            }
        }
        peek.done = true;
        Ok(())
    }
}

/// The member names the peek cares about.
enum Key {
    Id,
    Method,
    Answer,
    Other,
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
                Ok(match name {
                    "id" => Key::Id,
                    "method" => Key::Method,
                    "result" | "error" => Key::Answer,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

/// The envelope as compact encoders (ours among them) write it:
/// `{"jsonrpc":"2.0","id":<integer>` then the rest. Read by hand, as it
/// decides most frames at a fraction of a parse's cost; anything else is
/// left to the peek.
fn common_prefix(frame: &[u8]) -> Option<(Id, &[u8])> {
    let rest = frame.strip_prefix(br#"{"jsonrpc":"2.0","id":"#)?;
    let len = rest
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b'-'))?;
    let digits = &rest[..len];
    // JSON has no leading zeros (and no `+`, which `parse` would take).
    if digits.len() > 1 && (digits[0] == b'0' || digits.starts_with(b"-0")) {
        return None;
    }
    let id = std::str::from_utf8(digits).ok()?.parse::<i64>().ok()?;
    Some((Id::Number(id), &rest[len..]))
}

/// The bytes of a string without escapes up to its closing quote (the
/// opening one already consumed).
fn plain_string(rest: &[u8]) -> Option<&[u8]> {
    let end = rest.iter().position(|b| *b == b'"' || *b == b'\\')?;
    (rest[end] == b'"').then(|| &rest[..end])
}

/// The method name, if it is a JSON string (escapes decoded only when there
/// are any).
fn method_name(raw: &RawValue) -> Option<std::borrow::Cow<'_, str>> {
    let text = raw.get();
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(inner.into());
    }
    serde_json::from_str::<String>(text).ok().map(Into::into)
}

/// A request id: an integer or a string; anything else (`null` included)
/// makes the frame something the transport does not read.
fn parse_id(raw: &RawValue) -> Option<Id> {
    let text = raw.get();
    if text.starts_with('"') {
        return serde_json::from_str::<String>(text).ok().map(Id::from);
    }
    text.parse::<i64>().ok().map(Id::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(s: &str) -> Outbound {
        Outbound::classify(&Bytes::copy_from_slice(s.as_bytes()))
    }

    #[test]
    fn what_the_sender_says_is_taken_without_reading_the_frame() {
        let meta = Arc::new(FrameMeta::new().header("Mcp-Method", "tools/call"));
        // Bytes nobody could read: only the sender's word classifies them.
        let unreadable = Bytes::from_static(b"not json");
        let request = Outgoing::request(unreadable.clone(), Id::Number(7), "initialize")
            .with_meta(Some(meta.clone()));
        assert_eq!(
            Outbound::of(&request),
            Outbound::Request {
                id: Id::Number(7),
                initialize: true,
                meta: Some(meta.clone()),
            }
        );
        let note = Outgoing::notification(unreadable.clone(), "notifications/initialized");
        assert_eq!(
            Outbound::of(&note),
            Outbound::Notification { initialized: true }
        );
        let other = Outgoing::notification(unreadable.clone(), "notifications/progress");
        assert_eq!(
            Outbound::of(&other),
            Outbound::Notification { initialized: false }
        );
        // A response is one as its sender says, even one that looks like a
        // request.
        let answer = Bytes::from_static(br#"{"jsonrpc":"2.0","id":3,"method":"x"}"#);
        assert_eq!(
            Outbound::of(&Outgoing::response(answer.clone(), Id::Number(3))),
            Outbound::Response
        );
        // Bare bytes are read, and keep the header fields they came with.
        let bare = Outgoing::from(answer).with_meta(Some(meta.clone()));
        assert_eq!(
            Outbound::of(&bare),
            Outbound::Request {
                id: Id::Number(3),
                initialize: false,
                meta: Some(meta),
            }
        );
        assert_eq!(Outbound::of(&Outgoing::from(unreadable)), Outbound::Other);
    }

    #[test]
    fn requests_are_read_before_their_params() {
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}"#),
            Outbound::Request {
                id: Id::Number(7),
                initialize: false,
                meta: None,
            }
        );
        // The params are not read once id and method are known.
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","id":"a\"b","method":"initialize","params":{"#),
            Outbound::Request {
                id: Id::from("a\"b"),
                initialize: true,
                meta: None,
            }
        );
        // Members in another order, and an escaped method name.
        assert_eq!(
            classify(r#" {"params":{"x":[1,{"y":null}]},"method":"init\u0069alize","id":0}"#),
            Outbound::Request {
                id: Id::Number(0),
                initialize: true,
                meta: None,
            }
        );
    }

    #[test]
    fn the_common_prefix_decides_as_the_peek_would() {
        for frame in [
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"#,
            r#"{"jsonrpc":"2.0","id":-3,"method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"a\"b"}"#,
            r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        ] {
            let fast = classify(frame);
            let slow = Peek::of(frame.as_bytes()).map(|p| (p.answer, p.id.and_then(parse_id)));
            match &fast {
                Outbound::Request { id, .. } => {
                    assert_eq!(slow, Some((false, Some(id.clone()))), "{frame}");
                }
                _ => assert!(
                    !matches!(slow, Some((false, Some(_)))) || frame.contains(r#"\""#),
                    "{frame}: {fast:?}"
                ),
            }
        }
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":-3,"method":"initialize"}"#),
            Outbound::Request {
                initialize: true,
                ..
            }
        ));
        assert!(answers(
            br#"{"jsonrpc":"2.0","id":7,"result":{"#,
            &Id::Number(7)
        ));
        assert!(!answers(
            br#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            &Id::Number(8)
        ));
        assert!(answers(
            br#"{"jsonrpc":"2.0","id":7,"error":{}}"#,
            &Id::Number(7)
        ));
    }

    #[test]
    fn notifications_need_the_whole_object() {
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Outbound::Notification { initialized: true }
        );
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#),
            Outbound::Notification { initialized: false }
        );
        // An id after the params still makes it a request.
        assert_eq!(
            classify(r#"{"method":"ping","params":{},"id":3}"#),
            Outbound::Request {
                id: Id::Number(3),
                initialize: false,
                meta: None,
            }
        );
        // Cut short before we know there is no id: not a notification.
        assert_eq!(
            classify(r#"{"method":"notifications/initialized","params":{"#),
            Outbound::Other
        );
    }

    #[test]
    fn answers_match_the_id_of_a_result_or_an_error() {
        let id = Id::Number(4);
        assert!(answers(br#"{"jsonrpc":"2.0","id":4,"result":{"x":"#, &id));
        assert!(answers(
            br#"{"error":{"code":1,"message":"m"},"id":4}"#,
            &id
        ));
        assert!(!answers(br#"{"jsonrpc":"2.0","id":5,"result":{}}"#, &id));
        assert!(!answers(br#"{"jsonrpc":"2.0","id":"4","result":{}}"#, &id));
        assert!(!answers(
            br#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
            &id
        ));
        assert!(!answers(br#"{"jsonrpc":"2.0","id":4}"#, &id));
        assert!(!answers(b"[]", &id));
    }

    #[test]
    fn a_result_or_an_error_with_an_id_is_a_response() {
        for frame in [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"s1","error":{"code":1,"message":"x"}}"#,
            r#"{"result":{"x":[1,2]},"jsonrpc":"2.0","id":7}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"},"id":null}"#,
        ] {
            assert_eq!(classify(frame), Outbound::Response, "{frame}");
        }
    }

    #[test]
    fn batches_garbage_and_mixed_envelopes_are_other() {
        for frame in [
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{},"method":"x","id":1}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1"#,
            "not json",
            "",
        ] {
            assert_eq!(classify(frame), Outbound::Other, "{frame}");
        }
    }
}
