//! Text output for people: aligned tables, tool signatures, content blocks
//! rendered (text as text, images and audio summarized by type and size,
//! resources by URI), structured content pretty-printed.
//!
//! Tables are padded by hand (a dozen lines) rather than with a table
//! crate: columns of short names, no borders. The tools table fits the
//! terminal's width: descriptions wrap in their column, and signatures
//! too long for a column are laid out one tool after another, broken
//! only between parameters.

use std::fmt::Write as _;

use mcpwire::ContentBlock;
use mcpwire::client::types::{
    GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
};
use mcpwire::{CallToolResult, Tool};
use serde_json::Value;

/// Rows padded into columns separated by two spaces, fitting the
/// terminal's [`width`]; the last column is not padded.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    table_within(header, rows, width())
}

/// [`table`] within `width` columns: the last column's cells wrap at
/// spaces under their column when the others leave it room enough
/// ([`MIN_DESCRIPTION`]); otherwise they run on.
fn table_within(header: &[&str], rows: &[Vec<String>], width: usize) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let left: usize = widths[..columns.saturating_sub(1)]
        .iter()
        .map(|w| w + 2)
        .sum();
    let last_width = (left + MIN_DESCRIPTION <= width).then(|| width - left);
    let mut out = String::new();
    let head: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&head).chain(rows) {
        let mut line = String::new();
        let mut last = "";
        for (i, cell) in row.iter().enumerate().take(columns) {
            if i + 1 == columns {
                last = cell;
            } else {
                let pad = widths[i] - cell.chars().count();
                let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
            }
        }
        let pieces = match last_width {
            Some(w) => wrap(last, w),
            None => vec![last.to_owned()],
        };
        for (i, piece) in pieces.iter().enumerate() {
            let start = if i == 0 {
                line.clone()
            } else {
                " ".repeat(left)
            };
            out.push_str(format!("{start}{piece}").trim_end());
            out.push('\n');
        }
    }
    out
}

/// The first line of a description, shortened for a table cell.
fn short(text: Option<&str>) -> String {
    let line = text
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .trim();
    if line.chars().count() > 72 {
        let cut: String = line.chars().take(71).collect();
        format!("{cut}…")
    } else {
        line.to_owned()
    }
}

/// A JSON Schema's type, briefly: `string`, `integer[]`, `"a"|"b"`.
fn type_name(schema: &Value) -> String {
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        return choices
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("|");
    }
    // `T | null` and other unions, as Pydantic writes optional fields.
    if let Some(members) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        return members
            .iter()
            .map(type_name)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    match schema.get("type") {
        Some(Value::String(t)) if t == "array" => {
            let items = schema
                .get("items")
                .map(type_name)
                .unwrap_or_else(|| "any".into());
            format!("{items}[]")
        }
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".into(),
    }
}

/// The parameters of an input schema: (name, type, required, description).
pub(crate) fn parameters(schema: &Value) -> Vec<(String, String, bool, String)> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, p)| {
                    let description = p.get("description").and_then(Value::as_str);
                    (
                        name.clone(),
                        type_name(p),
                        required.contains(&name.as_str()),
                        short(description),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `add(a: number, b: number) -> {sum}`; optional parameters end in `?`.
pub(crate) fn signature(tool: &Tool) -> String {
    let params: Vec<String> = parameters(&tool.input_schema)
        .into_iter()
        .map(|(name, ty, required, _)| format!("{name}{}: {ty}", if required { "" } else { "?" }))
        .collect();
    let mut out = format!("{}({})", tool.name, params.join(", "));
    if let Some(props) = tool
        .output_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    {
        let names: Vec<&str> = props.keys().map(String::as_str).collect();
        let _ = write!(out, " -> {{{}}}", names.join(", "));
    }
    out
}

fn hints(tool: &Tool) -> String {
    let Some(a) = &tool.annotations else {
        return String::new();
    };
    let mut out = Vec::new();
    if a.read_only_hint == Some(true) {
        out.push("read-only");
    }
    if a.destructive_hint == Some(true) {
        out.push("destructive");
    }
    if a.idempotent_hint == Some(true) {
        out.push("idempotent");
    }
    if a.open_world_hint == Some(true) {
        out.push("open-world");
    }
    out.join(", ")
}

/// The width tables should fit: `COLUMNS`, else the terminal's, else
/// [`DEFAULT_WIDTH`] (output to a file or a pipe).
pub(crate) fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|w| *w >= MIN_WIDTH)
        .or_else(|| terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)))
        .unwrap_or(DEFAULT_WIDTH)
        .max(MIN_WIDTH)
}

/// The width when there is no terminal to measure.
const DEFAULT_WIDTH: usize = 100;
/// Narrower than this, nothing is laid out for the width.
const MIN_WIDTH: usize = 40;
/// The narrowest description column worth keeping beside the signatures.
const MIN_DESCRIPTION: usize = 30;
/// The indent of a stacked tool's continuation lines and description.
const INDENT: &str = "    ";

/// `text` broken at spaces into lines of at most `width` characters (a
/// word longer than that stays whole on its own line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let needed = if line.is_empty() { 0 } else { 1 } + word.chars().count();
        if !line.is_empty() && line.chars().count() + needed > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// A signature broken between parameters (after a `, `) into lines of at
/// most `width`, the later ones indented; never inside a parameter.
fn wrap_signature(sig: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for (i, piece) in sig.split_inclusive(", ").enumerate() {
        let limit = if lines.is_empty() {
            width
        } else {
            width - INDENT.len()
        };
        if i > 0 && line.chars().count() + piece.trim_end().chars().count() > limit {
            lines.push(line.trim_end().to_owned());
            line = String::new();
        }
        line.push_str(piece);
    }
    lines.push(line.trim_end().to_owned());
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| if i == 0 { l } else { format!("{INDENT}{l}") })
        .collect()
}

/// The tools table, fitting `width` columns.
pub(crate) fn tools(tools: &[Tool], schemas: bool, width: usize) -> String {
    if tools.is_empty() {
        return "no tools\n".into();
    }
    let rows: Vec<(String, String)> = tools
        .iter()
        .map(|t| (signature(t), short(t.description.as_deref())))
        .collect();
    let sig_width = rows
        .iter()
        .map(|(s, _)| s.chars().count())
        .max()
        .unwrap_or(0)
        .max("TOOL".len());
    let mut out = String::new();
    if sig_width + 2 + MIN_DESCRIPTION <= width {
        // Two columns, descriptions wrapped in theirs.
        let desc_width = width - sig_width - 2;
        let _ = writeln!(out, "{:sig_width$}  DESCRIPTION", "TOOL");
        for (sig, desc) in &rows {
            for (i, line) in wrap(desc, desc_width).into_iter().enumerate() {
                let left = if i == 0 { sig.as_str() } else { "" };
                let _ = writeln!(out, "{}", format!("{left:sig_width$}  {line}").trim_end());
            }
        }
    } else {
        // One tool after another: its signature, then its description.
        for (sig, desc) in &rows {
            for line in wrap_signature(sig, width) {
                let _ = writeln!(out, "{line}");
            }
            if !desc.is_empty() {
                for line in wrap(desc, width - INDENT.len()) {
                    let _ = writeln!(out, "{INDENT}{line}");
                }
            }
        }
    }
    if schemas {
        for t in tools {
            let _ = write!(
                out,
                "\n{} input schema:\n{}\n",
                t.name,
                pretty(&t.input_schema)
            );
            if let Some(output) = &t.output_schema {
                let _ = write!(out, "{} output schema:\n{}\n", t.name, pretty(output));
            }
        }
    }
    out
}

/// One tool in detail.
pub(crate) fn tool(tool: &Tool) -> String {
    let mut out = format!("{}\n", signature(tool));
    if let Some(title) = &tool.title {
        let _ = writeln!(out, "  title: {title}");
    }
    if let Some(d) = &tool.description {
        let _ = writeln!(out, "  {}", d.trim());
    }
    let hints = hints(tool);
    if !hints.is_empty() {
        let _ = writeln!(out, "  hints: {hints}");
    }
    let params = parameters(&tool.input_schema);
    if !params.is_empty() {
        let rows: Vec<Vec<String>> = params
            .into_iter()
            .map(|(n, t, r, d)| vec![n, t, if r { "yes".into() } else { "no".into() }, d])
            .collect();
        out.push('\n');
        out.push_str(&table(
            &["PARAMETER", "TYPE", "REQUIRED", "DESCRIPTION"],
            &rows,
        ));
    }
    let _ = write!(out, "\ninput schema:\n{}\n", pretty(&tool.input_schema));
    if let Some(output) = &tool.output_schema {
        let _ = write!(out, "output schema:\n{}\n", pretty(output));
    }
    out
}

/// Pretty JSON.
pub(crate) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// The size of base64 data, decoded, in bytes.
fn decoded_len(b64: &str) -> usize {
    let trimmed = b64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

fn resource_contents(out: &mut String, c: &ResourceContents) {
    let mime = c.mime_type.as_deref().unwrap_or("unknown type");
    match (&c.text, &c.blob) {
        (Some(text), _) => {
            let _ = writeln!(out, "[resource {} ({mime})]", c.uri);
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
        (None, Some(blob)) => {
            let _ = writeln!(
                out,
                "[resource {} ({mime}, {} bytes)]",
                c.uri,
                decoded_len(blob)
            );
        }
        (None, None) => {
            let _ = writeln!(out, "[resource {} ({mime}, empty)]", c.uri);
        }
    }
}

/// One content block.
pub(crate) fn block(out: &mut String, b: &ContentBlock) {
    match b {
        ContentBlock::Text(t) => {
            out.push_str(&t.text);
            if !t.text.ends_with('\n') {
                out.push('\n');
            }
        }
        ContentBlock::Image(m) => {
            let _ = writeln!(
                out,
                "[image {}, {} bytes]",
                m.mime_type,
                decoded_len(&m.data)
            );
        }
        ContentBlock::Audio(m) => {
            let _ = writeln!(
                out,
                "[audio {}, {} bytes]",
                m.mime_type,
                decoded_len(&m.data)
            );
        }
        ContentBlock::ResourceLink(l) => {
            let mime = l
                .mime_type
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            let _ = writeln!(out, "[resource link {}{mime}: {}]", l.uri, l.name);
        }
        ContentBlock::Resource(r) => resource_contents(out, &r.resource),
        ContentBlock::Unknown(v) => {
            let kind = v.get("type").and_then(Value::as_str).unwrap_or("unknown");
            let _ = writeln!(out, "[{kind} content]\n{}", pretty(v));
        }
        _ => out.push_str("[content of a kind this version cannot show]\n"),
    }
}

/// When a tool result's structured content is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Structured {
    /// Unless a text block already holds the same JSON (many servers
    /// mirror one in the other, as the specification suggests for older
    /// clients).
    WhenItAdds,
    /// Always (`call --structured`).
    Always,
}

/// A tool's result: its content blocks, then structured content (see
/// [`Structured`]).
pub(crate) fn call_result(result: &CallToolResult, when: Structured) -> String {
    let mut out = String::new();
    for b in &result.content {
        block(&mut out, b);
    }
    if let Some(structured) = &result.structured_content {
        let mirrored = result.content.iter().any(|b| match b {
            ContentBlock::Text(t) => {
                serde_json::from_str::<Value>(&t.text).is_ok_and(|v| &v == structured)
            }
            _ => false,
        });
        if when == Structured::Always || !mirrored {
            let _ = write!(out, "structured content:\n{}\n", pretty(structured));
        }
    }
    out
}

/// The resources table.
pub(crate) fn resources(resources: &[Resource]) -> String {
    if resources.is_empty() {
        return "no resources\n".into();
    }
    let rows: Vec<Vec<String>> = resources
        .iter()
        .map(|r| {
            vec![
                r.uri.clone(),
                r.name.clone(),
                r.mime_type.clone().unwrap_or_default(),
                r.size.map(|s| s.to_string()).unwrap_or_default(),
                short(r.description.as_deref().or(r.title.as_deref())),
            ]
        })
        .collect();
    table(&["URI", "NAME", "TYPE", "SIZE", "DESCRIPTION"], &rows)
}

/// The resource templates table.
pub(crate) fn templates(templates: &[ResourceTemplate]) -> String {
    if templates.is_empty() {
        return "no resource templates\n".into();
    }
    let rows: Vec<Vec<String>> = templates
        .iter()
        .map(|t| {
            vec![
                t.uri_template.clone(),
                t.name.clone(),
                t.mime_type.clone().unwrap_or_default(),
                short(t.description.as_deref().or(t.title.as_deref())),
            ]
        })
        .collect();
    table(&["URI TEMPLATE", "NAME", "TYPE", "DESCRIPTION"], &rows)
}

/// A resource's contents.
pub(crate) fn read(result: &ReadResourceResult) -> String {
    let mut out = String::new();
    for c in &result.contents {
        resource_contents(&mut out, c);
    }
    out
}

/// The prompts table.
pub(crate) fn prompts(prompts: &[Prompt]) -> String {
    if prompts.is_empty() {
        return "no prompts\n".into();
    }
    let rows: Vec<Vec<String>> = prompts
        .iter()
        .map(|p| {
            let args: Vec<String> = p
                .arguments
                .iter()
                .flatten()
                .map(|a| {
                    format!(
                        "{}{}",
                        a.name,
                        if a.required == Some(true) { "" } else { "?" }
                    )
                })
                .collect();
            vec![
                p.name.clone(),
                args.join(", "),
                short(p.description.as_deref()),
            ]
        })
        .collect();
    table(&["PROMPT", "ARGUMENTS", "DESCRIPTION"], &rows)
}

/// A prompt's messages.
pub(crate) fn prompt(result: &GetPromptResult) -> String {
    let mut out = String::new();
    if let Some(d) = &result.description {
        let _ = writeln!(out, "# {d}");
    }
    for m in &result.messages {
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let _ = write!(out, "[{role}] ");
        block(&mut out, &m.content);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tables_align_columns() {
        let t = table(
            &["A", "B", "C"],
            &[
                vec!["long-name".into(), "x".into(), "end".into()],
                vec!["s".into(), "yy".into(), "".into()],
            ],
        );
        assert_eq!(t, "A          B   C\nlong-name  x   end\ns          yy\n");
    }

    #[test]
    fn signatures_show_types_and_optional_parameters() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "t",
            "inputSchema": {"type": "object", "properties": {
                "a": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}},
                "mode": {"enum": ["x", "y"]}
            }, "required": ["a"]},
            "outputSchema": {"type": "object", "properties": {"sum": {}}}
        }))
        .unwrap();
        assert_eq!(
            signature(&tool),
            "t(a: integer, tags?: string[], mode?: \"x\"|\"y\") -> {sum}"
        );
    }

    fn long_tool(n: usize) -> Tool {
        let props: serde_json::Map<String, Value> = (0..n)
            .map(|i| (format!("parameter_{i:02}"), json!({"type": "string"})))
            .collect();
        serde_json::from_value(json!({"name": "create_pull_request_review",
            "description": "Create a review on a pull request, with comments on lines of its diff, and submit it at once or keep it pending.",
            "inputSchema": {"type": "object", "properties": props, "required": ["parameter_00"]}}))
        .unwrap()
    }

    #[test]
    fn a_tools_table_with_long_signatures_fits_the_width_without_cutting_a_parameter() {
        let short_tool: Tool = serde_json::from_value(json!({"name": "echo",
            "description": "Returns its message.",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}))
        .unwrap();
        let text = tools(&[long_tool(12), short_tool], false, 100);
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "{line:?} in\n{text}");
        }
        // Every parameter whole on one line.
        for i in 0..12 {
            let p = format!("parameter_{i:02}");
            assert!(
                text.lines()
                    .any(|l| l.contains(&format!("{p}?: string"))
                        || l.contains(&format!("{p}: string"))),
                "{p} in\n{text}"
            );
        }
        assert!(text.contains("echo(message?: string)"), "{text}");
    }

    #[test]
    fn a_table_that_fits_wraps_descriptions_in_their_column() {
        let text = tools(&[long_tool(1)], false, 90);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() > 2, "{text}");
        assert!(lines.iter().all(|l| l.chars().count() <= 90), "{text}");
        let column = lines[0].find("DESCRIPTION").unwrap();
        assert!(lines[2].starts_with(&" ".repeat(column)), "{text}");
    }

    #[test]
    fn a_signature_breaks_only_between_parameters_with_later_lines_indented() {
        assert_eq!(
            wrap_signature("f(aaa: x, bbb: y, ccc: z)", 12),
            ["f(aaa: x,", "    bbb: y,", "    ccc: z)"]
        );
        // Up to the width exactly, on the first line and on later ones.
        assert_eq!(wrap_signature("f(aa, bb)", 9), ["f(aa, bb)"]);
        assert_eq!(wrap_signature("f(aa, bb)", 8), ["f(aa,", "    bb)"]);
        assert_eq!(
            wrap_signature("f(aa, bb, cc)", 10),
            ["f(aa, bb,", "    cc)"]
        );
        assert_eq!(
            wrap_signature("f(aa, bbb, cc)", 10),
            ["f(aa, bbb,", "    cc)"]
        );
        assert_eq!(
            wrap_signature("f(aa, bbbb, cc)", 10),
            ["f(aa,", "    bbbb,", "    cc)"]
        );
        assert_eq!(wrap_signature("g()", 20), ["g()"]);
    }

    fn tool_with(name: &str, params: &[&str], description: &str) -> Tool {
        let props: serde_json::Map<String, Value> = params
            .iter()
            .map(|p| ((*p).to_owned(), json!({"type": "string"})))
            .collect();
        serde_json::from_value(json!({"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": props, "required": params}}))
        .unwrap()
    }

    #[test]
    fn a_table_too_narrow_for_two_columns_lists_tools_one_after_another() {
        let t = tool_with(
            "fetch",
            &["url", "method"],
            "Fetches a page over the network.",
        );
        let bare = tool_with("bare", &[], "");
        // "fetch(url: string, method: string)" is 34 wide: 34 + 2 + 30 > 50.
        let text = tools(&[t, bare], false, 50);
        assert_eq!(
            text,
            "fetch(url: string, method: string)\n    Fetches a page over the network.\nbare()\n"
        );
        // At exactly the width a table needs, two columns.
        let t = tool_with(
            "fetch",
            &["url", "method"],
            "Fetches a page over the network.",
        );
        let text = tools(&[t], false, 66);
        assert_eq!(
            text,
            "TOOL                                DESCRIPTION\n\
             fetch(url: string, method: string)  Fetches a page over the\n\
             \x20                                   network.\n"
        );
        let t = tool_with(
            "fetch",
            &["url", "method"],
            "Fetches a page over the network.",
        );
        let text = tools(&[t], false, 65);
        assert!(!text.starts_with("TOOL"), "{text}");
        // A stacked description wraps within the width, indented.
        let t = tool_with(
            "fetch",
            &["url", "method"],
            "Fetches a page over the network.",
        );
        let text = tools(&[t], false, 40);
        assert_eq!(
            text,
            "fetch(url: string, method: string)\n    Fetches a page over the network.\n"
        );
        let t = tool_with(
            "fetch",
            &["url", "method"],
            "Fetches a page over the network.",
        );
        let text = tools(&[t], false, 30);
        assert_eq!(
            text,
            "fetch(url: string,\n    method: string)\n    Fetches a page over the\n    network.\n"
        );
    }

    #[test]
    fn wrapping_fills_each_line_up_to_the_width_exactly() {
        assert_eq!(wrap("aaa bbb", 7), ["aaa bbb"]);
        assert_eq!(wrap("aaa bbbb", 7), ["aaa", "bbbb"]);
        assert_eq!(wrap("aaa bbb ccc", 7), ["aaa bbb", "ccc"]);
        // A word longer than the width stays whole.
        assert_eq!(wrap("abcdefghij x", 4), ["abcdefghij", "x"]);
        assert_eq!(wrap("", 4), [""]);
    }

    #[test]
    fn a_tables_last_column_wraps_under_itself_within_the_width() {
        let rows = vec![vec![
            "greet".to_owned(),
            "name".to_owned(),
            "Greets someone by name, warmly, in a sentence or two of plain words.".to_owned(),
        ]];
        let text = table_within(&["PROMPT", "ARGUMENTS", "DESCRIPTION"], &rows, 50);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.iter().all(|l| l.chars().count() <= 50), "{text}");
        assert!(lines.len() > 2, "{text}");
        let column = lines[0].find("DESCRIPTION").unwrap();
        assert!(lines[2].starts_with(&" ".repeat(column)), "{text}");
        assert!(!lines[2][column..].starts_with(' '), "{text}");
        // Too narrow for a useful column: the cells run on, not cut.
        let text = table_within(&["PROMPT", "ARGUMENTS", "DESCRIPTION"], &rows, 40);
        assert_eq!(text.lines().count(), 2, "{text}");
    }

    #[test]
    fn optional_and_union_types_are_named() {
        assert_eq!(
            type_name(&json!({"anyOf": [{"type": "string"}, {"type": "null"}]})),
            "string | null"
        );
        assert_eq!(
            type_name(&json!({"type": ["integer", "null"]})),
            "integer | null"
        );
    }

    #[test]
    fn structured_content_is_shown_once_unless_asked_for() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "{\n  \"time\": \"12:00\"\n}"}],
            "structuredContent": {"time": "12:00"}
        }))
        .unwrap();
        let text = call_result(&result, Structured::WhenItAdds);
        assert_eq!(text.matches("12:00").count(), 1, "{text}");
        assert!(!text.contains("structured content"), "{text}");
        let text = call_result(&result, Structured::Always);
        assert!(text.contains("structured content:"), "{text}");
        // Different content: both shown.
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "it is noon"}],
            "structuredContent": {"time": "12:00"}
        }))
        .unwrap();
        let text = call_result(&result, Structured::WhenItAdds);
        assert!(text.contains("structured content:"), "{text}");
    }

    #[test]
    fn media_is_summarized_by_type_and_size() {
        let result: CallToolResult = serde_json::from_value(json!({"content": [
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAAAA==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a", "name": "a"},
            {"type": "text", "text": "hi"}
        ], "structuredContent": {"k": 1}}))
        .unwrap();
        assert_eq!(
            call_result(&result, Structured::WhenItAdds),
            "[image image/png, 3 bytes]\n[audio audio/wav, 4 bytes]\n[resource link file:///a: a]\nhi\nstructured content:\n{\n  \"k\": 1\n}\n"
        );
    }
}
