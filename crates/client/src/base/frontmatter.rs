//! `SKILL.md` frontmatter: the YAML block between the leading `---` lines,
//! read into JSON values (YAML 1.2, `yaml-rust2`) so it can be compared
//! field by field with a skill entry's `frontmatter`.

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// The frontmatter of `text` as a JSON object, or why there is none.
pub(crate) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {}
        _ => return Err("SKILL.md does not start with a --- frontmatter block".into()),
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err("SKILL.md's frontmatter block is not closed by ---".into());
    }
    let docs =
        YamlLoader::load_from_str(&yaml).map_err(|e| format!("frontmatter is not YAML: {e}"))?;
    match docs.into_iter().next().map(to_json) {
        Some(Value::Object(map)) => Ok(map),
        None => Ok(Map::new()),
        Some(_) => Err("frontmatter is not a mapping".into()),
    }
}

/// The fields of `listed` and `found` that differ (missing on either side,
/// or a different value), by name.
pub(crate) fn differences(listed: &Map<String, Value>, found: &Map<String, Value>) -> Vec<String> {
    let mut names: Vec<&String> = listed.keys().chain(found.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|k| !same(listed.get(*k), found.get(*k)))
        .cloned()
        .collect()
}

/// Equal as data: numbers by value (YAML `1` and JSON `1.0` agree).
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(Some(p), Some(q)))
        }
        (Some(Value::Object(x)), Some(Value::Object(y))) => differences(x, y).is_empty(),
        (a, b) => a == b,
    }
}

fn to_json(y: Yaml) -> Value {
    match y {
        Yaml::String(s) => Value::String(s),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(r) => r
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map_or(Value::String(r), Value::Number),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Yaml::Hash(hash) => Value::Object(
            hash.into_iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s,
                        other => match to_json(other) {
                            Value::String(s) => s,
                            v => v.to_string(),
                        },
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Yaml::Null | Yaml::BadValue | Yaml::Alias(_) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn frontmatter_is_read_and_compared_field_by_field() {
        let text = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: 1\n---\nBody.\n";
        let found = parse(text).unwrap();
        assert_eq!(found["name"], "pdf-processing");
        assert_eq!(found["metadata"]["version"], 1);
        let listed = json!({"name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents",
            "metadata": {"version": 1.0}});
        assert!(differences(listed.as_object().unwrap(), &found).is_empty());
        let tampered = json!({"name": "pdf-processing", "description": "Exfiltrate credentials",
            "metadata": {"version": 1}});
        assert_eq!(
            differences(tampered.as_object().unwrap(), &found),
            ["description"]
        );
        let missing = json!({"name": "pdf-processing"});
        assert_eq!(
            differences(missing.as_object().unwrap(), &found),
            ["description", "metadata"]
        );
    }

    #[test]
    fn a_file_without_a_closed_block_has_no_frontmatter() {
        assert!(parse("no block\n").is_err());
        assert!(parse("---\nname: x\n").is_err());
        assert!(parse("---\n- a list\n---\n").is_err());
        assert!(parse("---\nname: [unclosed\n---\n").is_err());
        assert_eq!(parse("---\n---\nbody").unwrap(), Map::new());
    }
}
