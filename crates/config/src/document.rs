//! The parsed file as a tree that remembers where each value came from.
//!
//! Both parsers (JSON with comments, TOML) produce the same [`Node`] tree, so
//! everything above this module is format-blind. Objects keep their keys in
//! file order and keep duplicates (JSON allows them; a duplicate server name
//! must be reported, not silently overwritten).

use jsonc_parser::ast;
use serde_json::{Map, Number, Value};
use toml::de::{DeTable, DeValue};

use crate::format::Format;
use crate::position::{LineIndex, Position};

/// One value of the document and where it starts.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) at: Position,
    pub(crate) kind: NodeKind,
}

#[derive(Debug, Clone)]
pub(crate) enum NodeKind {
    Null,
    Bool(bool),
    Number(Number),
    /// A TOML date or time, or a number JSON cannot hold, kept as its text.
    Text(String),
    String(String),
    Array(Vec<Node>),
    Object(Vec<Member>),
}

/// One key of an object: its name, where the key starts, and its value.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) key: String,
    pub(crate) at: Position,
    pub(crate) value: Node,
}

/// A syntax error: where the parser stopped, and its own error as the cause.
#[derive(Debug)]
pub(crate) struct SyntaxError {
    pub(crate) position: Option<Position>,
    pub(crate) source: Box<dyn std::error::Error + Send + Sync>,
}

impl Node {
    /// The JSON value this node holds (positions dropped); used for the
    /// fields kept verbatim in `extra`.
    pub(crate) fn to_value(&self) -> Value {
        match &self.kind {
            NodeKind::Null => Value::Null,
            NodeKind::Bool(b) => Value::Bool(*b),
            NodeKind::Number(n) => Value::Number(n.clone()),
            NodeKind::Text(s) | NodeKind::String(s) => Value::String(s.clone()),
            NodeKind::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            NodeKind::Object(members) => {
                let mut map = Map::new();
                for m in members {
                    map.insert(m.key.clone(), m.value.to_value());
                }
                Value::Object(map)
            }
        }
    }

    pub(crate) fn as_object(&self) -> Option<&[Member]> {
        match &self.kind {
            NodeKind::Object(members) => Some(members),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::String(s) => Some(s),
            _ => None,
        }
    }

    /// The name of this node's type, for "expected X, found Y" messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Null => "null",
            NodeKind::Bool(_) => "a boolean",
            NodeKind::Number(_) => "a number",
            NodeKind::Text(_) => "a date or time",
            NodeKind::String(_) => "a string",
            NodeKind::Array(_) => "an array",
            NodeKind::Object(_) => "an object",
        }
    }
}

/// Parses `text` in `format` into a tree. An empty document (whitespace and
/// comments only) is `Ok(None)`.
pub(crate) fn parse(text: &str, format: Format) -> Result<Option<Node>, SyntaxError> {
    let lines = LineIndex::new(text);
    match format {
        Format::Json => parse_json(text, &lines),
        Format::Toml => parse_toml(text, &lines).map(Some),
    }
}

fn json_options() -> jsonc_parser::ParseOptions {
    jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        ..Default::default()
    }
}

fn parse_json(text: &str, lines: &LineIndex<'_>) -> Result<Option<Node>, SyntaxError> {
    let collect = jsonc_parser::CollectOptions::default();
    let parsed =
        jsonc_parser::parse_to_ast(text, &collect, &json_options()).map_err(|e| SyntaxError {
            position: Some(lines.position(e.range().start)),
            source: Box::new(e),
        })?;
    Ok(parsed.value.map(|v| json_node(v, lines)))
}

fn json_node(value: ast::Value<'_>, lines: &LineIndex<'_>) -> Node {
    match value {
        ast::Value::StringLit(s) => node(lines, s.range.start, NodeKind::String(s.value.into())),
        ast::Value::NumberLit(n) => node(lines, n.range.start, json_number(n.value)),
        ast::Value::BooleanLit(b) => node(lines, b.range.start, NodeKind::Bool(b.value)),
        ast::Value::NullKeyword(n) => node(lines, n.range.start, NodeKind::Null),
        ast::Value::Array(a) => {
            let items = a
                .elements
                .into_iter()
                .map(|v| json_node(v, lines))
                .collect();
            node(lines, a.range.start, NodeKind::Array(items))
        }
        ast::Value::Object(o) => {
            let members = o
                .properties
                .into_iter()
                .map(|p| Member {
                    at: lines.position(p.range.start),
                    key: p.name.into_string(),
                    value: json_node(p.value, lines),
                })
                .collect();
            node(lines, o.range.start, NodeKind::Object(members))
        }
    }
}

/// A JSON number, exactly: integers as integers, others through the
/// standard library's correctly rounded `f64` parser (serde_json's own,
/// without its `float_roundtrip` feature, can be one unit off in the last
/// place). A number no `f64` holds is kept as text.
fn json_number(text: &str) -> NodeKind {
    if let Ok(n) = text.parse::<i64>() {
        return NodeKind::Number(n.into());
    }
    if let Ok(n) = text.parse::<u64>() {
        return NodeKind::Number(n.into());
    }
    match text.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(n) => NodeKind::Number(n),
        None => NodeKind::Text(text.to_owned()),
    }
}

fn node(lines: &LineIndex<'_>, offset: usize, kind: NodeKind) -> Node {
    Node {
        at: lines.position(offset),
        kind,
    }
}

fn parse_toml(text: &str, lines: &LineIndex<'_>) -> Result<Node, SyntaxError> {
    let root = DeTable::parse(text).map_err(|mut e| {
        // The error carries the whole document for its Display (which
        // quotes the line) and its Debug (which shows all of it): a file
        // with a typo may hold tokens, so it is dropped.
        e.set_input(None);
        SyntaxError {
            position: e.span().map(|s| lines.position(s.start)),
            source: Box::new(e),
        }
    })?;
    let at = lines.position(root.span().start);
    Ok(Node {
        at,
        kind: NodeKind::Object(toml_members(root.into_inner(), lines)),
    })
}

fn toml_members(table: DeTable<'_>, lines: &LineIndex<'_>) -> Vec<Member> {
    table
        .into_iter()
        .map(|(key, value)| Member {
            at: lines.position(key.span().start),
            key: key.into_inner().into_owned(),
            value: toml_node(value, lines),
        })
        .collect()
}

fn toml_node(value: toml::Spanned<DeValue<'_>>, lines: &LineIndex<'_>) -> Node {
    let at = lines.position(value.span().start);
    let kind = match value.into_inner() {
        DeValue::String(s) => NodeKind::String(s.into_owned()),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => NodeKind::Number(n.into()),
            Err(_) => NodeKind::Text(i.to_string()),
        },
        DeValue::Float(f) => match f.as_str().parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => NodeKind::Number(n),
            None => NodeKind::Text(f.as_str().to_owned()),
        },
        DeValue::Boolean(b) => NodeKind::Bool(b),
        DeValue::Datetime(d) => NodeKind::Text(d.to_string()),
        DeValue::Array(items) => {
            NodeKind::Array(items.into_iter().map(|v| toml_node(v, lines)).collect())
        }
        DeValue::Table(t) => NodeKind::Object(toml_members(t, lines)),
    };
    Node { at, kind }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(node: &Node) -> Vec<&str> {
        node.as_object()
            .unwrap()
            .iter()
            .map(|m| m.key.as_str())
            .collect()
    }

    #[test]
    fn json_keeps_file_order_duplicates_and_positions() {
        let text = "{\n  // c\n  \"b\": 1,\n  \"a\": [true, null,],\n  \"b\": \"x\",\n}";
        let root = parse(text, Format::Json).unwrap().unwrap();
        assert_eq!(keys(&root), ["b", "a", "b"]);
        let members = root.as_object().unwrap();
        assert_eq!(members[1].at, Position { line: 4, column: 3 });
        assert_eq!(members[2].value.as_str(), Some("x"));
        assert_eq!(
            root.to_value(),
            serde_json::json!({"b": "x", "a": [true, null]})
        );
    }

    #[test]
    fn json_numbers_are_read_exactly() {
        let text =
            "[-3.7728873959142645e+60, 18446744073709551615, -9223372036854775808, 1e400, 0.1]";
        let root = parse(text, Format::Json).unwrap().unwrap();
        assert_eq!(
            root.to_value(),
            serde_json::json!([-3.7728873959142645e60_f64, u64::MAX, i64::MIN, "1e400", 0.1])
        );
    }

    #[test]
    fn json_rejects_what_jsonc_does_not_allow() {
        for bad in ["{'a': 1}", "{a: 1}", "{\"a\": 0x10}", "{\"a\": 1 \"b\": 2}"] {
            let err = parse(bad, Format::Json).expect_err(bad);
            assert!(err.position.is_some());
        }
        assert!(parse("  // nothing\n", Format::Json).unwrap().is_none());
    }

    #[test]
    fn toml_keeps_file_order_and_converts_values() {
        let text = "z = 0x1F\n[t]\nb = 1.5\na = 1979-05-27\n";
        let root = parse(text, Format::Toml).unwrap().unwrap();
        assert_eq!(keys(&root), ["z", "t"]);
        assert_eq!(
            root.to_value(),
            serde_json::json!({"z": 31, "t": {"b": 1.5, "a": "1979-05-27"}})
        );
        let t = &root.as_object().unwrap()[1].value;
        assert_eq!(keys(t), ["b", "a"]);
        assert_eq!(
            t.as_object().unwrap()[1].at,
            Position { line: 4, column: 1 }
        );
    }

    #[test]
    fn syntax_errors_do_not_quote_the_document() {
        let text = "[mcp_servers.a]\nbearer_token = \"sk-secret-1\"\nurl = \n";
        let err = parse(text, Format::Toml).unwrap_err();
        let shown = format!("{} {:?}", err.source, err.source);
        assert!(!shown.contains("sk-secret-1"), "{shown}");
        let err = parse("{\"t\": \"sk-secret-2\", }}", Format::Json).unwrap_err();
        let shown = format!("{} {:?}", err.source, err.source);
        assert!(!shown.contains("sk-secret-2"), "{shown}");
    }

    #[test]
    fn syntax_errors_carry_a_position_and_a_cause() {
        let err = parse("a = 1\nb = \n", Format::Toml).err().unwrap();
        assert_eq!(err.position.map(|p| p.line), Some(2));
        assert!(!err.source.to_string().is_empty());
        let err = parse("{\n\"a\": }", Format::Json).err().unwrap();
        assert_eq!(err.position.map(|p| p.line), Some(2));
    }
}
