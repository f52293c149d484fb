//! An elicitation form asked at a terminal, one field at a time: the
//! server's `requestedSchema` (a flat object of strings, numbers,
//! integers, booleans and enums) read in the order the server wrote it,
//! each answer checked against its field, then a last question that
//! accepts, declines or cancels. Pure over a reader and a writer, so the
//! same code serves the terminal and the tests.

use std::io::{self, BufRead, Read, Write};

use serde_json::{Map, Value};

use mcpwire::client::types::{ElicitAction, ElicitParams, ElicitResult};

/// The longest answer read (a line past it is cut): a person types less.
const MAX_LINE: u64 = 64 * 1024;
/// Wrong answers to one field before the form is cancelled.
const TRIES: usize = 5;

/// One line of input; `None` at end of input (Ctrl-D).
fn line(input: &mut dyn BufRead) -> io::Result<Option<String>> {
    let mut buf = String::new();
    let n = Read::take(&mut *input, MAX_LINE).read_line(&mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    Ok(Some(buf.trim_end_matches(['\n', '\r']).to_owned()))
}

/// The choices of an enum field: (value, label).
fn choices(field: &Value) -> Option<Vec<(Value, String)>> {
    if let Some(values) = field.get("enum").and_then(Value::as_array) {
        let names = field.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| plain(v));
                    (v.clone(), label)
                })
                .collect(),
        );
    }
    // The titled form: `oneOf: [{const, title}]`.
    let members = field.get("oneOf").and_then(Value::as_array)?;
    Some(
        members
            .iter()
            .filter_map(|m| {
                let v = m.get("const")?;
                let label = m.get("title").and_then(Value::as_str).map(str::to_owned);
                Some((v.clone(), label.unwrap_or_else(|| plain(v))))
            })
            .collect(),
    )
}

/// A value as a person types it: strings without quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What a field takes, in words, for its prompt.
fn kind(field: &Value) -> String {
    if let Some(choices) = choices(field) {
        let labels: Vec<String> = choices
            .iter()
            .enumerate()
            .map(|(i, (v, label))| {
                if *label == plain(v) {
                    format!("{}) {label}", i + 1)
                } else {
                    format!("{}) {label} [{}]", i + 1, plain(v))
                }
            })
            .collect();
        return format!("one of {}", labels.join(", "));
    }
    match field.get("type").and_then(Value::as_str) {
        Some("boolean") => "yes/no".into(),
        Some("integer") => "a whole number".into(),
        Some("number") => "a number".into(),
        _ => "text".into(),
    }
}

/// `answer` read as a value of `field`, or why not.
fn parse(field: &Value, answer: &str) -> Result<Value, String> {
    if let Some(choices) = choices(field) {
        if let Ok(n) = answer.parse::<usize>()
            && (1..=choices.len()).contains(&n)
        {
            return Ok(choices[n - 1].0.clone());
        }
        return choices
            .iter()
            .find(|(v, label)| plain(v) == answer || label == answer)
            .map(|(v, _)| v.clone())
            .ok_or_else(|| format!("not one of the choices (1 to {})", choices.len()));
    }
    match field.get("type").and_then(Value::as_str) {
        Some("boolean") => match answer.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer yes or no".into()),
        },
        Some("integer") => {
            let n: i64 = answer.parse().map_err(|_| "not a whole number")?;
            in_range(field, n as f64)?;
            Ok(Value::from(n))
        }
        Some("number") => {
            let n: f64 = answer
                .parse()
                .ok()
                .filter(|n: &f64| n.is_finite())
                .ok_or("not a number")?;
            in_range(field, n)?;
            Ok(Value::from(n))
        }
        _ => {
            let len = answer.chars().count() as u64;
            let min = field.get("minLength").and_then(Value::as_u64);
            let max = field.get("maxLength").and_then(Value::as_u64);
            if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
                return Err(format!(
                    "needs {} to {} characters",
                    min.unwrap_or(0),
                    max.map_or("any number of".into(), |m| m.to_string())
                ));
            }
            Ok(Value::String(answer.to_owned()))
        }
    }
}

fn in_range(field: &Value, n: f64) -> Result<(), String> {
    let min = field.get("minimum").and_then(Value::as_f64);
    let max = field.get("maximum").and_then(Value::as_f64);
    if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
        let show = |b: Option<f64>| b.map_or("…".to_owned(), |b| b.to_string());
        return Err(format!("must be from {} to {}", show(min), show(max)));
    }
    Ok(())
}

/// The last question: `accept`, `decline` or `cancel`; `None` at end of
/// input.
fn confirm(
    question: &str,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> io::Result<ElicitAction> {
    for _ in 0..TRIES {
        write!(
            out,
            "{question} [Y]es (accept) / [n]o (decline) / [c]ancel: "
        )?;
        out.flush()?;
        let Some(answer) = line(input)? else {
            writeln!(out)?;
            return Ok(ElicitAction::Cancel);
        };
        match answer.trim().to_ascii_lowercase().as_str() {
            "" | "y" | "yes" => return Ok(ElicitAction::Accept),
            "n" | "no" => return Ok(ElicitAction::Decline),
            "c" | "cancel" => return Ok(ElicitAction::Cancel),
            _ => writeln!(out, "  answer y, n or c")?,
        }
    }
    Ok(ElicitAction::Cancel)
}

/// Asks for the fields of `schema` under `message`; the user's answers
/// come back as an accepted form, or a decline or cancel without content.
pub(crate) fn ask(
    message: &str,
    schema: &Value,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> io::Result<ElicitResult> {
    let empty = Map::new();
    let fields = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    writeln!(out, "\nThe server asks: {}", message.trim())?;
    writeln!(
        out,
        "  (Enter keeps a default or skips an optional field; Ctrl-D cancels)"
    )?;
    let mut content = Map::new();
    for (name, field) in fields {
        let title = field.get("title").and_then(Value::as_str).unwrap_or(name);
        let needed = required.contains(&name.as_str());
        let default = field.get("default");
        if let Some(d) = field.get("description").and_then(Value::as_str) {
            writeln!(out, "  {}", d.trim())?;
        }
        let mut prompt = format!("  {title} ({}", kind(field));
        if needed {
            prompt.push_str(", required");
        }
        prompt.push(')');
        if let Some(d) = default {
            prompt.push_str(&format!(" [{}]", plain(d)));
        }
        let mut tries = 0;
        let value = loop {
            write!(out, "{prompt}: ")?;
            out.flush()?;
            let Some(answer) = line(input)? else {
                writeln!(out)?;
                return Ok(ElicitResult::new(ElicitAction::Cancel, None));
            };
            let answer = answer.trim();
            let outcome = match (answer.is_empty(), default, needed) {
                (true, Some(d), _) => Ok(Some(d.clone())),
                (true, None, false) => Ok(None),
                (true, None, true) => Err("required: type an answer, or Ctrl-D to cancel".into()),
                (false, ..) => parse(field, answer).map(Some),
            };
            match outcome {
                Ok(v) => break v,
                Err(why) => {
                    tries += 1;
                    if tries == TRIES {
                        writeln!(out, "  {why}; cancelled after {TRIES} tries")?;
                        return Ok(ElicitResult::new(ElicitAction::Cancel, None));
                    }
                    writeln!(out, "  {why}")?;
                }
            }
        };
        if let Some(v) = value {
            content.insert(name.clone(), v);
        }
    }
    let action = confirm("  Send this to the server?", input, out)?;
    let content = (action == ElicitAction::Accept).then_some(content);
    Ok(ElicitResult::new(action, content))
}

/// Answers `params`: a URL-mode request with [`ask_url`], a form (the
/// default mode) with [`ask`].
pub(crate) fn answer(
    params: &ElicitParams,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> io::Result<ElicitResult> {
    match (&params.url, params.is_url_mode()) {
        (Some(url), true) => ask_url(&params.message, url, input, out),
        _ => {
            let schema = params.requested_schema.clone().unwrap_or_default();
            ask(&params.message, &schema, input, out)
        }
    }
}

/// Shows a URL-mode elicitation's URL and asks whether to go on.
pub(crate) fn ask_url(
    message: &str,
    url: &str,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> io::Result<ElicitResult> {
    writeln!(out, "\nThe server asks: {}", message.trim())?;
    // The host is what a person checks before trusting a link.
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    writeln!(out, "  Open this URL in your browser (its site: {host}):")?;
    writeln!(out, "  {url}")?;
    let action = confirm("  Done, or going to?", input, out)?;
    Ok(ElicitResult::new(action, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, typed: &str) -> (ElicitResult, String) {
        let mut input = io::Cursor::new(typed.as_bytes().to_vec());
        let mut out = Vec::new();
        let r = ask("Tell us", &schema, &mut input, &mut out).unwrap();
        (r, String::from_utf8(out).unwrap())
    }

    fn survey() -> Value {
        serde_json::from_str(
            r#"{"type": "object", "properties": {
                "name": {"type": "string", "title": "Name"},
                "age": {"type": "integer", "minimum": 0, "default": 30},
                "height": {"type": "number"},
                "color": {"type": "string", "enum": ["red", "green"], "default": "green"},
                "subscribe": {"type": "boolean"}
            }, "required": ["name"]}"#,
        )
        .unwrap()
    }

    #[test]
    fn each_field_is_asked_in_the_servers_order_and_typed() {
        let (r, screen) = run(survey(), "Ada\n41\n1.7\n1\ny\n\n");
        assert_eq!(r.action, ElicitAction::Accept);
        let content = Value::Object(r.content.unwrap());
        assert_eq!(
            content,
            json!({"name": "Ada", "age": 41, "height": 1.7, "color": "red", "subscribe": true})
        );
        let at = |s: &str| screen.find(s).unwrap_or_else(|| panic!("{s}: {screen}"));
        assert!(at("Name (text, required)") < at("age (a whole number) [30]"));
        assert!(at("[30]") < at("height (a number)"));
        assert!(at("height") < at("color (one of 1) red, 2) green) [green]"));
        assert!(at("color") < at("subscribe (yes/no)"));
    }

    #[test]
    fn empty_answers_keep_defaults_and_skip_optional_fields() {
        let (r, _) = run(survey(), "Ada\n\n\n\n\ny\n");
        let content = Value::Object(r.content.unwrap());
        assert_eq!(content, json!({"name": "Ada", "age": 30, "color": "green"}));
    }

    #[test]
    fn a_wrong_answer_is_asked_again_saying_why() {
        let (r, screen) = run(survey(), "\nAda\n-3\nold\n5\n\n\n\n\n");
        assert!(screen.contains("required: type an answer"), "{screen}");
        assert!(screen.contains("must be from 0 to"), "{screen}");
        assert!(screen.contains("not a whole number"), "{screen}");
        assert_eq!(r.content.unwrap()["age"], 5);
    }

    #[test]
    fn the_user_can_decline_or_cancel() {
        let (r, _) = run(survey(), "Ada\n\n\n\n\nn\n");
        assert_eq!((r.action, r.content), (ElicitAction::Decline, None));
        // (What follows "c" would accept, were "c" not understood.)
        let (r, _) = run(survey(), "Ada\n\n\n\n\nc\ny\n");
        assert_eq!((r.action, r.content), (ElicitAction::Cancel, None));
        // Ctrl-D (end of input) at a field cancels.
        let (r, _) = run(survey(), "Ada\n");
        assert_eq!((r.action, r.content), (ElicitAction::Cancel, None));
    }

    #[test]
    fn endless_wrong_answers_cancel() {
        let (r, screen) = run(survey(), &"\n".repeat(20));
        assert_eq!(r.action, ElicitAction::Cancel);
        assert!(screen.contains("cancelled after 5 tries"), "{screen}");
    }

    #[test]
    fn titled_choices_take_a_number_a_value_or_a_title() {
        let schema = json!({"type": "object", "properties": {"size": {"type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}}});
        for typed in ["2\n\n", "l\n\n", "Large\n\n"] {
            let (r, screen) = run(schema.clone(), typed);
            assert_eq!(r.content.unwrap()["size"], "l", "{typed:?}");
            assert!(
                screen.contains("one of 1) Small [s], 2) Large [l]"),
                "{screen}"
            );
        }
    }

    #[test]
    fn a_url_is_shown_with_its_site_and_confirmed() {
        let mut out = Vec::new();
        let mut input = io::Cursor::new(b"y\n".to_vec());
        let r = ask_url(
            "Connect your account",
            "https://auth.example.com/connect?x=1",
            &mut input,
            &mut out,
        )
        .unwrap();
        assert_eq!((r.action, r.content), (ElicitAction::Accept, None));
        let screen = String::from_utf8(out).unwrap();
        assert!(screen.contains("its site: auth.example.com"), "{screen}");
        assert!(
            screen.contains("https://auth.example.com/connect?x=1"),
            "{screen}"
        );
        let mut input = io::Cursor::new(b"n\n".to_vec());
        let r = ask_url("x", "https://a.example", &mut input, &mut Vec::new()).unwrap();
        assert_eq!(r.action, ElicitAction::Decline);
    }

    #[test]
    fn a_request_is_answered_by_its_mode() {
        let url: ElicitParams = serde_json::from_value(json!({"mode": "url",
            "message": "Sign in", "url": "https://a.example/x", "elicitationId": "e"}))
        .unwrap();
        let mut out = Vec::new();
        let r = answer(&url, &mut io::Cursor::new(b"y\n".to_vec()), &mut out).unwrap();
        assert_eq!(r.action, ElicitAction::Accept);
        assert!(
            String::from_utf8(out)
                .unwrap()
                .contains("its site: a.example")
        );
        let form: ElicitParams = serde_json::from_value(json!({"message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}))
        .unwrap();
        let r = answer(
            &form,
            &mut io::Cursor::new(b"Ada\n\n".to_vec()),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(r.content.unwrap()["n"], "Ada");
    }

    #[test]
    fn bounds_are_inclusive_for_numbers_and_text() {
        let whole = json!({"type": "integer", "minimum": 0, "maximum": 10});
        assert_eq!(parse(&whole, "0"), Ok(json!(0)));
        assert_eq!(parse(&whole, "10"), Ok(json!(10)));
        assert_eq!(parse(&whole, "-1"), Err("must be from 0 to 10".into()));
        assert!(parse(&whole, "11").is_err() && parse(&whole, "1.5").is_err());
        let real = json!({"type": "number", "minimum": 0.5, "maximum": 1.5});
        assert_eq!(parse(&real, "0.5"), Ok(json!(0.5)));
        assert_eq!(parse(&real, "1.5"), Ok(json!(1.5)));
        for wrong in ["0.4", "1.6", "inf", "NaN", "x"] {
            assert!(parse(&real, wrong).is_err(), "{wrong}");
        }
        let text = json!({"type": "string", "minLength": 2, "maxLength": 3});
        assert_eq!(parse(&text, "ab"), Ok(json!("ab")));
        assert_eq!(parse(&text, "abc"), Ok(json!("abc")));
        assert_eq!(parse(&text, "a"), Err("needs 2 to 3 characters".into()));
        assert!(parse(&text, "abcd").is_err());
        let yes_no = json!({"type": "boolean"});
        assert_eq!(parse(&yes_no, "No"), Ok(json!(false)));
        assert!(parse(&yes_no, "maybe").is_err());
    }

    #[test]
    fn a_long_answer_is_read_whole_up_to_the_bound() {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let long = "x".repeat(5000);
        let (r, _) = run(schema, &format!("{long}\ny\n"));
        assert_eq!(r.content.unwrap()["text"], long.as_str());
    }
}
