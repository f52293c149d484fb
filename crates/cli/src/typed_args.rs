//! Tool arguments from the command line: `k=v` converted by the tool's
//! input schema (numbers, booleans, arrays, enums), `k:=json` taken as raw
//! JSON, on top of an optional `--args` object. A value that does not fit
//! the schema is an error naming the field and the type it expects, before
//! anything is sent.

use serde_json::{Map, Value};

/// Why the arguments do not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArgError(pub(crate) String);

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgError {}

fn err(message: String) -> ArgError {
    ArgError(message)
}

/// Builds the arguments object: `base` (from `--args`), then each of
/// `pairs` in order, typed by `schema` (a tool's `inputSchema`; `None`
/// takes every `k=v` as a string). Checks required fields are present.
pub(crate) fn build(
    base: Option<Map<String, Value>>,
    pairs: &[String],
    schema: Option<&Value>,
    names: Names,
) -> Result<Map<String, Value>, ArgError> {
    let mut out = base.unwrap_or_default();
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    // A schema that lists its parameters takes no others, unless it says
    // so (`additionalProperties` true or a schema): a misspelt name would
    // otherwise be sent and silently ignored by the server.
    let open = schema
        .and_then(|s| s.get("additionalProperties"))
        .is_some_and(|a| a != &Value::Bool(false));
    let closed = names == Names::Checked && properties.is_some() && !open;
    for pair in pairs {
        let (key, value) = split_pair(pair)?;
        let field = properties.and_then(|p| p.get(key));
        if field.is_none() && closed {
            let known: Vec<&str> = properties
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(unknown("tool", key, &known));
        }
        let value = match value {
            Raw::Json(text) => serde_json::from_str(text).map_err(|e| {
                err(format!(
                    "argument {key:?}: {text:?} is not valid JSON ({e})"
                ))
            })?,
            Raw::Text(text) => match field {
                Some(field) => convert(key, text, field)?,
                None => Value::String(text.to_owned()),
            },
        };
        out.insert(key.to_owned(), value);
    }
    if let Some(required) = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
    {
        let missing: Vec<&str> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| !out.contains_key(*k))
            .collect();
        if !missing.is_empty() {
            return Err(missing_arguments(&missing));
        }
    }
    Ok(out)
}

/// Whether argument names are checked against what the tool or prompt
/// declares (`--no-check` turns it off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Names {
    Checked,
    Unchecked,
}

/// An unknown argument `key` of a `what` (tool, prompt) that takes
/// `known`: the closest known name suggested, if one is close.
fn unknown(what: &str, key: &str, known: &[&str]) -> ArgError {
    let closest = known
        .iter()
        .map(|k| (strsim::jaro_winkler(key, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k);
    let hint = match closest {
        Some(k) => format!("did you mean {k:?}? "),
        None => String::new(),
    };
    let takes = if known.is_empty() {
        format!("this {what} takes no arguments")
    } else {
        format!("this {what} takes: {}", known.join(", "))
    };
    err(format!(
        "unknown argument {key:?}: {hint}({takes}; --no-check sends it anyway)"
    ))
}

/// Checks prompt arguments against the prompt's declared ones (name,
/// required): an unknown name, or a required one missing, is an error.
/// A prompt that declares none is not checked (the server judges).
pub(crate) fn check_prompt(
    args: &Map<String, Value>,
    declared: &[(String, bool)],
) -> Result<(), ArgError> {
    if declared.is_empty() {
        return Ok(());
    }
    let known: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
    if let Some(key) = args.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(unknown("prompt", key, &known));
    }
    let missing: Vec<&str> = declared
        .iter()
        .filter(|(n, required)| *required && !args.contains_key(n))
        .map(|(n, _)| n.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(missing_arguments(&missing));
    }
    Ok(())
}

/// The error for required arguments not given, with how to give them.
fn missing_arguments(missing: &[&str]) -> ArgError {
    err(format!(
        "missing required argument{} {} (give {})",
        if missing.len() > 1 { "s" } else { "" },
        missing.join(", "),
        missing
            .iter()
            .map(|k| format!("{k}=..."))
            .collect::<Vec<_>>()
            .join(" ")
    ))
}

/// Prompt and completion arguments: `k=v`, every value a string.
pub(crate) fn strings(pairs: &[String]) -> Result<Map<String, Value>, ArgError> {
    let mut out = Map::new();
    for pair in pairs {
        match split_pair(pair)? {
            (key, Raw::Text(v)) => out.insert(key.to_owned(), Value::String(v.to_owned())),
            (key, Raw::Json(_)) => {
                return Err(err(format!(
                    "argument {key:?}: prompt arguments are strings; use {key}=value"
                )));
            }
        };
    }
    Ok(out)
}

enum Raw<'a> {
    Text(&'a str),
    Json(&'a str),
}

fn split_pair(pair: &str) -> Result<(&str, Raw<'_>), ArgError> {
    let Some(eq) = pair.find('=') else {
        return Err(err(format!("argument {pair:?} is not k=v or k:=json")));
    };
    let (key, value) = (&pair[..eq], &pair[eq + 1..]);
    let (key, raw) = match key.strip_suffix(':') {
        Some(key) => (key, Raw::Json(value)),
        None => (key, Raw::Text(value)),
    };
    if key.is_empty() {
        return Err(err(format!("argument {pair:?} has no name before '='")));
    }
    Ok((key, raw))
}

/// The schema's type, the first non-null one of a list.
fn type_of(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    }
}

/// Converts `text` for `field` by its schema.
fn convert(key: &str, text: &str, field: &Value) -> Result<Value, ArgError> {
    let value = match type_of(field) {
        Some("integer") => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| expected(key, "an integer", text))?,
        Some("number") => {
            let n: f64 = text.parse().map_err(|_| expected(key, "a number", text))?;
            // Whole numbers stay integers on the wire (`2`, not `2.0`).
            match text.parse::<i64>() {
                Ok(i) => Value::from(i),
                Err(_) => serde_json::Number::from_f64(n)
                    .map(Value::Number)
                    .ok_or_else(|| expected(key, "a finite number", text))?,
            }
        }
        Some("boolean") => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "on" => Value::Bool(true),
            "false" | "no" | "0" | "off" => Value::Bool(false),
            _ => return Err(expected(key, "a boolean (true or false)", text)),
        },
        Some("array") => {
            if text.trim_start().starts_with('[') {
                serde_json::from_str(text).map_err(|_| expected(key, "a JSON array", text))?
            } else {
                let items = field.get("items").unwrap_or(&Value::Null);
                let mut out = Vec::new();
                for (i, part) in text.split(',').filter(|p| !p.is_empty()).enumerate() {
                    let name = format!("{key}[{i}]");
                    out.push(if items.is_object() {
                        convert(&name, part.trim(), items)?
                    } else {
                        Value::String(part.to_owned())
                    });
                }
                Value::Array(out)
            }
        }
        Some("object") => {
            let v: Value =
                serde_json::from_str(text).map_err(|_| expected(key, "a JSON object", text))?;
            if !v.is_object() {
                return Err(expected(key, "a JSON object", text));
            }
            v
        }
        Some("null") => Value::Null,
        _ => Value::String(text.to_owned()),
    };
    if let Some(choices) = field.get("enum").and_then(Value::as_array)
        && !choices.contains(&value)
    {
        let shown: Vec<String> = choices.iter().map(Value::to_string).collect();
        return Err(err(format!(
            "argument {key:?} expects one of {}, got {text:?}",
            shown.join(", ")
        )));
    }
    Ok(value)
}

fn expected(key: &str, what: &str, text: &str) -> ArgError {
    err(format!("argument {key:?} expects {what}, got {text:?}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "b": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "integer"}},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "opt": {"type": ["string", "null"]},
            "obj": {"type": "object"}
        }, "required": ["n"]})
    }

    fn pairs(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn values_are_typed_by_the_schema() {
        // `raw` is not in the schema: sent as given with --no-check.
        let out = build(
            None,
            &pairs(&[
                "n=3",
                "x=1.5",
                "b=yes",
                "tags=1,2",
                "mode=fast",
                "opt=hi",
                "obj={\"a\":1}",
                "raw:=[true]",
            ]),
            Some(&schema()),
            Names::Unchecked,
        )
        .expect("fits");
        assert_eq!(
            Value::Object(out),
            json!({"n": 3, "x": 1.5, "b": true, "tags": [1, 2], "mode": "fast", "opt": "hi", "obj": {"a": 1}, "raw": [true]})
        );
    }

    #[test]
    fn a_mismatch_names_the_field_and_the_type() {
        let e = build_checked(None, &pairs(&["n=three"]), Some(&schema())).unwrap_err();
        assert_eq!(e.0, "argument \"n\" expects an integer, got \"three\"");
        let e = build_checked(None, &pairs(&["n=1", "mode=medium"]), Some(&schema())).unwrap_err();
        assert!(e.0.contains("\"fast\", \"slow\""), "{}", e.0);
        let e = build_checked(None, &pairs(&["n=1", "tags=1,x"]), Some(&schema())).unwrap_err();
        assert!(e.0.contains("tags[1]"), "{}", e.0);
        let e = build_checked(None, &pairs(&["x=1"]), Some(&schema())).unwrap_err();
        assert!(e.0.contains("missing required argument n"), "{}", e.0);
        let e = build_checked(None, &pairs(&["bad"]), None).unwrap_err();
        assert!(e.0.contains("k=v"), "{}", e.0);
    }

    #[test]
    fn base_arguments_are_overridden_by_pairs() {
        let base = json!({"n": 1, "keep": "me"}).as_object().cloned();
        let out = build_checked(base, &pairs(&["n=2"]), Some(&schema())).expect("fits");
        assert_eq!(Value::Object(out), json!({"n": 2, "keep": "me"}));
    }

    fn build_checked(
        base: Option<Map<String, Value>>,
        pairs: &[String],
        schema: Option<&Value>,
    ) -> Result<Map<String, Value>, ArgError> {
        build(base, pairs, schema, Names::Checked)
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_closest_known_one() {
        let s =
            json!({"type": "object", "properties": {"max_count": {"type": "integer"}, "path": {}}});
        let e = build_checked(None, &pairs(&["max_cout=1"]), Some(&s)).unwrap_err();
        assert!(e.0.contains("unknown argument \"max_cout\""), "{}", e.0);
        assert!(e.0.contains("did you mean \"max_count\"?"), "{}", e.0);
        assert!(e.0.contains("--no-check"), "{}", e.0);
        // Nothing close: no guess.
        let e = build_checked(None, &pairs(&["zzz=1"]), Some(&s)).unwrap_err();
        assert!(!e.0.contains("did you mean"), "{}", e.0);
        // --no-check sends it, typed as text.
        let out = build(None, &pairs(&["max_cout=1"]), Some(&s), Names::Unchecked).unwrap();
        assert_eq!(Value::Object(out), json!({"max_cout": "1"}));
        // A schema open to other names takes it.
        let open = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": true});
        assert!(build_checked(None, &pairs(&["b=1"]), Some(&open)).is_ok());
    }

    #[test]
    fn prompt_arguments_are_checked_against_the_declared_ones() {
        let declared = vec![("topic".to_owned(), true), ("tone".to_owned(), false)];
        let args = |pairs: &[&str]| {
            strings(&pairs.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
        };
        assert!(check_prompt(&args(&["topic=x"]), &declared).is_ok());
        let e = check_prompt(&args(&["tone=dry"]), &declared).unwrap_err();
        assert!(e.0.contains("missing required argument topic"), "{}", e.0);
        let e = check_prompt(&args(&["topic=x", "tonne=dry"]), &declared).unwrap_err();
        assert!(e.0.contains("did you mean \"tone\"?"), "{}", e.0);
        // A prompt that declares nothing is the server's to judge.
        assert!(check_prompt(&args(&["any=1"]), &[]).is_ok());
    }

    /// Each spelling of a boolean keeps its meaning, in any case: a `false`
    /// typed as `true` would run a tool with the opposite of what was asked.
    #[test]
    fn booleans_keep_their_meaning_in_every_spelling() {
        let typed = |text: &str| {
            let out = build_checked(
                None,
                &pairs(&["n=1", &format!("b={text}")]),
                Some(&schema()),
            );
            out.map(|o| o["b"].clone())
        };
        for text in ["true", "yes", "1", "on", "TRUE", "Yes", "On"] {
            assert_eq!(typed(text), Ok(Value::Bool(true)), "b={text}");
        }
        for text in ["false", "no", "0", "off", "FALSE", "No", "Off"] {
            assert_eq!(typed(text), Ok(Value::Bool(false)), "b={text}");
        }
        for text in ["", "2", "y", "nope", "truth"] {
            let e = typed(text).unwrap_err();
            assert_eq!(
                e.0,
                format!("argument \"b\" expects a boolean (true or false), got {text:?}")
            );
        }
    }

    /// The less common shapes: a whole number for a `number` stays an
    /// integer, non-finite numbers are refused, an array may be written as
    /// JSON, `null` is null, an object must be one, and a type list skips
    /// `null`.
    #[test]
    fn edge_values_are_typed_or_refused() {
        let typed = |pair: &str| {
            build_checked(None, &pairs(&["n=1", pair]), Some(&schema())).map(Value::Object)
        };
        assert_eq!(typed("x=2").unwrap()["x"], json!(2));
        assert!(typed("x=2").unwrap()["x"].is_i64());
        assert_eq!(typed("x=-0.25").unwrap()["x"], json!(-0.25));
        for bad in ["x=NaN", "x=inf", "x=1e999"] {
            let e = typed(bad).unwrap_err();
            assert!(e.0.contains("expects a finite number"), "{bad}: {}", e.0);
        }
        assert_eq!(typed("tags=[3, 4]").unwrap()["tags"], json!([3, 4]));
        assert_eq!(typed("tags=").unwrap()["tags"], json!([]));
        let e = typed("tags=[3,").unwrap_err();
        assert!(e.0.contains("expects a JSON array"), "{}", e.0);
        let e = typed("obj=[1]").unwrap_err();
        assert!(e.0.contains("expects a JSON object"), "{}", e.0);
        let e = typed("obj={").unwrap_err();
        assert!(e.0.contains("expects a JSON object"), "{}", e.0);
        let s = json!({"properties": {"z": {"type": "null"}, "u": {"type": ["null", "integer"]}}});
        let out = build_checked(None, &pairs(&["z=anything", "u=7"]), Some(&s)).unwrap();
        assert_eq!(Value::Object(out), json!({"z": null, "u": 7}));
        let e = build_checked(None, &pairs(&["raw:={"]), None).unwrap_err();
        assert!(e.0.contains("is not valid JSON"), "{}", e.0);
        let e = build_checked(None, &pairs(&["=v"]), None).unwrap_err();
        assert!(e.0.contains("has no name"), "{}", e.0);
    }

    /// What the user reads is the message itself, nothing around it.
    #[test]
    fn an_argument_error_displays_its_message() {
        let e = build_checked(None, &pairs(&["n=three"]), Some(&schema())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "argument \"n\" expects an integer, got \"three\""
        );
    }

    #[test]
    fn missing_required_arguments_are_all_named() {
        let s = json!({"properties": {}, "required": ["a", "b"]});
        let e = build_checked(None, &[], Some(&s)).unwrap_err();
        assert_eq!(e.0, "missing required arguments a, b (give a=... b=...)");
        let s = json!({"properties": {}, "required": ["a"]});
        let e = build_checked(None, &[], Some(&s)).unwrap_err();
        assert_eq!(e.0, "missing required argument a (give a=...)");
    }

    #[test]
    fn prompt_arguments_are_strings() {
        let out = strings(&pairs(&["a=1", "b=x=y"])).unwrap();
        assert_eq!(Value::Object(out), json!({"a": "1", "b": "x=y"}));
        let e = strings(&pairs(&["a:=1"])).unwrap_err();
        assert!(e.0.contains("prompt arguments are strings"), "{}", e.0);
    }

    #[test]
    fn a_closed_schema_refuses_unknown_names() {
        let s = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        let e = build_checked(None, &pairs(&["b=1"]), Some(&s)).unwrap_err();
        assert!(e.0.contains("unknown argument \"b\""), "{}", e.0);
    }
}
