//! Parsing a large payload whose frame nothing else holds, with its longest
//! string decoded in the frame's own allocation.
//!
//! Parsed the usual way, a 10 MiB text answer is in memory twice at the
//! peak: once in the frame and once as the `String` the caller gets. Here
//! the frame becomes that string instead: the rest of the payload (small:
//! the string replaced by `null`) is parsed into a value tree, the string's
//! bytes are unescaped to the start of the allocation, the allocation is
//! cut to their length and put back at the string's place in the tree, and
//! the type is read from the tree (which moves strings, never copies them).
//!
//! Only the shape of well-formed JSON is assumed: payloads are checked when
//! their frame is parsed. Anything unexpected (a path that does not lead to
//! the placeholder, as with a repeated member name) falls back to the usual
//! parse before the frame is changed.

use std::ops::Range;

use serde::de::{DeserializeOwned, Error as _};
use serde_json::Value;

/// A payload shorter than this is parsed the usual way: the copy is small.
pub(crate) const IN_PLACE_MIN: usize = 1 << 20;

/// A string shorter than this is not worth the second parse.
const STRING_MIN: usize = IN_PLACE_MIN / 2;

/// Parses `json` (one well-formed JSON value) as `T`, reusing its
/// allocation for its longest string when that string is large.
pub(crate) fn parse<T: DeserializeOwned>(mut json: Vec<u8>) -> Result<T, serde_json::Error> {
    let Some(longest) = longest_string(&json).filter(|l| l.span.len() >= STRING_MIN) else {
        return serde_json::from_slice(&json);
    };
    let path = longest.path(&json)?;
    let mut rest = Vec::with_capacity(json.len() - longest.span.len() + 4);
    rest.extend_from_slice(&json[..longest.span.start]);
    rest.extend_from_slice(b"null");
    rest.extend_from_slice(&json[longest.span.end..]);
    let mut tree: Value = serde_json::from_slice(&rest)?;
    drop(rest);
    let Some(slot) = lookup(&mut tree, &path).filter(|v| v.is_null()) else {
        return serde_json::from_slice(&json);
    };
    let body = longest.span.start + 1..longest.span.end - 1;
    let len = unescape_to_front(&mut json, body)?;
    json.truncate(len);
    json.shrink_to_fit();
    let text = String::from_utf8(json)
        .map_err(|_| serde_json::Error::custom("a string in the payload is not UTF-8"))?;
    *slot = Value::String(text);
    T::deserialize(tree)
}

/// The longest string value (not member name) and where it sits.
struct Longest {
    /// Its text, quotes included.
    span: Range<usize>,
    /// The containers from the root down to it.
    steps: Vec<Step>,
}

/// One step down into a container.
enum Step {
    /// The member whose name (quotes included) is at this span.
    Member(Range<usize>),
    /// The array element at this index.
    Element(usize),
}

/// One step of the path, decoded.
enum Seg {
    Member(String),
    Element(usize),
}

impl Longest {
    fn path(&self, json: &[u8]) -> Result<Vec<Seg>, serde_json::Error> {
        self.steps
            .iter()
            .map(|s| match s {
                Step::Member(name) => serde_json::from_slice(&json[name.clone()]).map(Seg::Member),
                Step::Element(i) => Ok(Seg::Element(*i)),
            })
            .collect()
    }
}

/// A container the scan is inside.
enum Open {
    /// An object: the name of the member being read, and whether the next
    /// string is a name.
    Object {
        name: Option<Range<usize>>,
        wants_name: bool,
    },
    Array {
        index: usize,
    },
}

/// Finds the longest string value in well-formed JSON.
fn longest_string(json: &[u8]) -> Option<Longest> {
    let mut open: Vec<Open> = Vec::new();
    let mut best: Option<Longest> = None;
    let mut i = 0;
    while let Some(&b) = json.get(i) {
        match b {
            b'"' => {
                let end = string_end(json, i)?;
                match open.last_mut() {
                    Some(Open::Object { name, wants_name }) if *wants_name => {
                        *name = Some(i..end);
                        *wants_name = false;
                    }
                    _ if best.as_ref().is_none_or(|l| end - i > l.span.len()) => {
                        best = Some(Longest {
                            span: i..end,
                            steps: steps(&open)?,
                        });
                    }
                    _ => {}
                }
                i = end;
            }
            b'{' => {
                open.push(Open::Object {
                    name: None,
                    wants_name: true,
                });
                i += 1;
            }
            b'[' => {
                open.push(Open::Array { index: 0 });
                i += 1;
            }
            b'}' | b']' => {
                open.pop();
                i += 1;
            }
            b',' => {
                match open.last_mut() {
                    Some(Open::Object { wants_name, .. }) => *wants_name = true,
                    Some(Open::Array { index }) => *index += 1,
                    None => {}
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    best
}

/// The path to the value being read inside `open`.
fn steps(open: &[Open]) -> Option<Vec<Step>> {
    open.iter()
        .map(|o| match o {
            Open::Object { name, .. } => name.clone().map(Step::Member),
            Open::Array { index } => Some(Step::Element(*index)),
        })
        .collect()
}

/// The index just past the closing quote of the string opening at `open`.
fn string_end(json: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', json.get(i..)?)?;
        if json[at] == b'"' {
            return Some(at + 1);
        }
        i = at + 2;
    }
}

/// The value at `path`, if the tree has one there.
fn lookup<'v>(tree: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
    path.iter().try_fold(tree, |v, seg| match seg {
        Seg::Member(name) => v.as_object_mut()?.get_mut(name),
        Seg::Element(i) => v.as_array_mut()?.get_mut(*i),
    })
}

fn bad_string() -> serde_json::Error {
    serde_json::Error::custom("invalid string in the payload")
}

/// Unescapes the string text at `body` (between its quotes) to the start of
/// `json`, returning its length. The text never grows when unescaped, so
/// what is written never overtakes what is still to be read.
fn unescape_to_front(json: &mut [u8], body: Range<usize>) -> Result<usize, serde_json::Error> {
    let end = body.end;
    let (mut r, mut w) = (body.start, 0);
    while r < end {
        let plain_end = memchr::memchr(b'\\', &json[r..end]).map_or(end, |n| r + n);
        // A minimum with no early exit is vectorized; `any` went byte by
        // byte, and a large text is one long run.
        if json[r..plain_end]
            .iter()
            .copied()
            .min()
            .is_some_and(|b| b < 0x20)
        {
            return Err(bad_string());
        }
        json.copy_within(r..plain_end, w);
        w += plain_end - r;
        r = plain_end;
        if r == end {
            break;
        }
        let escaped = *json.get(r + 1).ok_or_else(bad_string)?;
        r += 2;
        if r > end {
            return Err(bad_string());
        }
        let byte = match escaped {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let (c, used) = unicode_escape(&json[r..end])?;
                r += used;
                let mut utf8 = [0; 4];
                let bytes = c.encode_utf8(&mut utf8).as_bytes();
                json[w..w + bytes.len()].copy_from_slice(bytes);
                w += bytes.len();
                continue;
            }
            _ => return Err(bad_string()),
        };
        json[w] = byte;
        w += 1;
    }
    Ok(w)
}

/// The character of a `\u` escape whose four hex digits start `rest` (and,
/// for a surrogate pair, the `\uXXXX` after them); with the bytes used.
fn unicode_escape(rest: &[u8]) -> Result<(char, usize), serde_json::Error> {
    let first = hex4(rest)?;
    if !(0xD800..0xE000).contains(&first) {
        return char::from_u32(first.into())
            .map(|c| (c, 4))
            .ok_or_else(bad_string);
    }
    if first >= 0xDC00 || rest.get(4..6) != Some(b"\\u") {
        return Err(bad_string());
    }
    let second = hex4(rest.get(6..).ok_or_else(bad_string)?)?;
    if !(0xDC00..0xE000).contains(&second) {
        return Err(bad_string());
    }
    let c = 0x10000 + ((u32::from(first) - 0xD800) << 10) + (u32::from(second) - 0xDC00);
    char::from_u32(c).map(|c| (c, 10)).ok_or_else(bad_string)
}

fn hex4(digits: &[u8]) -> Result<u16, serde_json::Error> {
    let digits = digits.get(..4).ok_or_else(bad_string)?;
    let text = std::str::from_utf8(digits).map_err(|_| bad_string())?;
    if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad_string());
    }
    u16::from_str_radix(text, 16).map_err(|_| bad_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn big(n: usize) -> String {
        "ab\"c\\d\n e\u{e9}\u{1F600}/\t".repeat(n)
    }

    #[test]
    fn a_large_text_block_parses_as_the_usual_parse_does() {
        let doc = serde_json::json!({
            "content": [{"type": "text", "text": "small"}, {"type": "text", "text": big(80_000)}],
            "structuredContent": {"echo": "short", "n": [1, 2.5, null, true]},
            "isError": false,
            "unknown": {"kept": "yes"},
        });
        let json = serde_json::to_vec(&doc).unwrap();
        assert!(json.len() > IN_PLACE_MIN);
        let usual: Value = serde_json::from_slice(&json).unwrap();
        let taken: Value = parse(json).unwrap();
        assert_eq!(taken, usual);
    }

    #[test]
    fn the_longest_string_becomes_the_frame_allocation() {
        let text = big(60_000);
        let json = serde_json::to_vec(&serde_json::json!({"x": [0, {"t": text}]})).unwrap();
        let start = json.as_ptr();
        let taken: Value = parse(json).unwrap();
        let got = taken["x"][1]["t"].as_str().unwrap();
        assert_eq!(got, text);
        // Decoded where the frame was: no second allocation of its size.
        assert_eq!(got.as_ptr(), start);
    }

    #[test]
    fn a_repeated_member_name_falls_back_to_the_usual_parse() {
        let text = "z".repeat(STRING_MIN + 10);
        let json = format!(r#"{{"t": "{text}", "t": 5}}"#).into_bytes();
        let usual: Value = serde_json::from_slice(&json).unwrap();
        let taken: Value = parse(json).unwrap();
        assert_eq!(taken, usual);
        assert_eq!(taken["t"], 5);
    }

    #[test]
    fn a_lone_surrogate_is_an_error_as_in_the_usual_parse() {
        let text = "y".repeat(STRING_MIN);
        for bad in [r"\ud800", r"\udc00x", r"\ud800\u0041"] {
            let json = format!(r#"{{"t": "{text}{bad}"}}"#).into_bytes();
            assert!(serde_json::from_slice::<Value>(&json).is_err());
            assert!(parse::<Value>(json).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_raw_control_byte_in_a_large_string_is_an_error_as_in_the_usual_parse() {
        let text = "v ".repeat(STRING_MIN / 2);
        for bad in ['\u{1f}', '\n', '\u{0}'] {
            for json in [
                format!(r#"{{"t": "{bad}{text}"}}"#),
                format!(r#"{{"t": "{text}{bad}{text}"}}"#),
                format!(r#"{{"t": "{text}\n{text}{bad}"}}"#),
            ] {
                let json = json.into_bytes();
                assert!(serde_json::from_slice::<Value>(&json).is_err());
                assert!(parse::<Value>(json).is_err(), "{:?}", bad);
            }
        }
        // A space (0x20) is the first byte that needs no escape.
        let json = format!(r#"{{"t": "{text}"}}"#).into_bytes();
        assert_eq!(parse::<Value>(json).unwrap()["t"], text.as_str());
    }

    #[test]
    fn escapes_the_serializer_never_writes_are_decoded_too() {
        let text = "w".repeat(STRING_MIN);
        let json = format!(r#"["{text}\ud83d\ude00\u00e9\/\b\f\r"]"#).into_bytes();
        let usual: Value = serde_json::from_slice(&json).unwrap();
        let taken: Value = parse(json).unwrap();
        assert_eq!(taken, usual);
        assert!(
            taken[0]
                .as_str()
                .unwrap()
                .ends_with("\u{1F600}\u{e9}/\u{8}\u{c}\r")
        );
    }

    #[test]
    fn small_strings_are_parsed_the_usual_way() {
        let json = br#"{"a": "b", "c": [1, "d"]}"#.to_vec();
        let taken: Value = parse(json.clone()).unwrap();
        assert_eq!(taken, serde_json::from_slice::<Value>(&json).unwrap());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn any_string_unescapes_as_serde_json_reads_it(s in any::<String>(), pad in 0usize..3) {
            // Large enough to be decoded in place, with the string's
            // characters (escaped by the serializer) spread through it.
            let text = format!("{}{}{}", s, "q".repeat(STRING_MIN + pad), s);
            let json = serde_json::to_vec(&serde_json::json!([{"k\u{e9}y": text}, s])).unwrap();
            let taken: Value = parse(json).unwrap();
            prop_assert_eq!(taken[0]["k\u{e9}y"].as_str(), Some(text.as_str()));
            prop_assert_eq!(taken[1].as_str(), Some(s.as_str()));
        }
    }
}
