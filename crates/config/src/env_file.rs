//! Reading a dotenv file (`envFile`): `KEY=VALUE` lines.
//!
//! Written here rather than taken from `dotenvy`: that crate expands
//! `$VAR` inside values from the process environment, which would bypass
//! [`Environment`](crate::Environment) (and make tests depend on the real
//! environment). The syntax read is the common subset that VS Code's own
//! reader accepts: `#` comments, an optional `export `, unquoted values
//! (trimmed, ` #` starts a comment), `'single'` quotes taken literally, and
//! `"double"` quotes with `\n`, `\t`, `\\` and `\"` escapes. Lines without
//! `=` are ignored, as VS Code ignores them. No variable is expanded.

/// The variables of a dotenv file, in file order (a later line wins).
pub(crate) fn parse(text: &str) -> Vec<(String, String)> {
    text.lines().filter_map(line).collect()
}

fn line(line: &str) -> Option<(String, String)> {
    let line = line.trim_start();
    if line.starts_with('#') {
        return None;
    }
    let line = line.strip_prefix("export ").unwrap_or(line);
    let (key, value) = line.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    let value = value.trim_start();
    let value = if let Some(quoted) = value.strip_prefix('"') {
        double_quoted(quoted)
    } else if let Some(quoted) = value.strip_prefix('\'') {
        quoted.split('\'').next().unwrap_or_default().to_owned()
    } else {
        let end = value.find(" #").unwrap_or(value.len());
        value[..end].trim_end().to_owned()
    };
    Some((key.to_owned(), value))
}

fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_common_syntax() {
        let text = "# comment\n\
                    A=1\n\
                    export B = two words  # note\n\
                    C=\"quoted \\\"x\\\"\\nnext\" trailing\n\
                    D='lit ${X} \\n'\n\
                    not a pair\n\
                    E=\n\
                    bad key=1\n\
                    A=again\n";
        assert_eq!(
            parse(text),
            [
                ("A", "1"),
                ("B", "two words"),
                ("C", "quoted \"x\"\nnext"),
                ("D", "lit ${X} \\n"),
                ("E", ""),
                ("A", "again"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
    }
}
