//! The envelope parser's fast path: one pass over the frame that finds the
//! six envelope members and checks that everything is well-formed JSON.
//!
//! Why: reading the envelope through serde (a derived struct of borrowed
//! `RawValue`s) cost about 3,700 instructions for a 170-byte response, most
//! of it generic member dispatch and per-byte string scanning. This scanner
//! checks the same grammar, finding the end of each string with memchr, and returns the
//! members as slices of the input.
//!
//! It never decides an error. Whenever the input is not plainly well-formed
//! (a syntax error, a member name with escapes, a known member given twice,
//! nesting deeper than [`MAX_DEPTH`]), it answers `None` and the serde path
//! reads the frame instead, so every error stays exactly what it was. When it
//! answers, the members it found are the ones the serde path would have
//! found, byte for byte.

/// The envelope members, each the raw text of its value (no surrounding
/// whitespace), as slices of the scanned text.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Members<'a> {
    pub(super) jsonrpc: Option<&'a str>,
    pub(super) id: Option<&'a str>,
    pub(super) method: Option<&'a str>,
    pub(super) params: Option<&'a str>,
    pub(super) result: Option<&'a str>,
    pub(super) error: Option<&'a str>,
}

/// Deeper nesting is left to serde_json, whose limit (128) then applies.
const MAX_DEPTH: usize = 100;

/// Scans `text` (one JSON object, with optional surrounding whitespace).
/// `None`: let the serde path decide.
pub(super) fn scan(text: &str) -> Option<Members<'_>> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
    };
    let mut m = Members::default();
    s.ws();
    s.eat(b'{')?;
    s.ws();
    if s.peek()? == b'}' {
        s.i += 1;
    } else {
        loop {
            s.ws();
            let key = s.plain_key()?;
            s.ws();
            s.eat(b':')?;
            s.ws();
            let start = s.i;
            s.value(0)?;
            let value = text.get(start..s.i)?;
            let slot = match key {
                b"jsonrpc" => Some(&mut m.jsonrpc),
                b"id" => Some(&mut m.id),
                b"method" => Some(&mut m.method),
                b"params" => Some(&mut m.params),
                b"result" => Some(&mut m.result),
                b"error" => Some(&mut m.error),
                _ => None,
            };
            if let Some(slot) = slot {
                if slot.is_some() {
                    // serde reports a duplicate field: let it.
                    return None;
                }
                *slot = Some(value);
            }
            s.ws();
            match s.next()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
    }
    s.ws();
    (s.i == s.b.len()).then_some(m)
}

/// Parses a JSON integer that fits an `i64` without going through serde:
/// `None` for anything else (a fraction, an exponent, too many digits),
/// which the caller then reads the careful way.
pub(super) fn plain_i64(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty()
        || digits.len() > 18
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    text.parse().ok()
}

/// The contents of a JSON string literal without escapes, as written.
pub(super) fn plain_str(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.bytes().any(|b| b == b'\\' || b == b'"' || b < 0x20)).then_some(inner)
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// A member name with no escapes, as bytes.
    fn plain_key(&mut self) -> Option<&'a [u8]> {
        let start = self.i + 1;
        if !self.string()? {
            return None;
        }
        self.b.get(start..self.i - 1)
    }

    /// Skips a string literal; `Some(true)` if it had no escapes.
    fn string(&mut self) -> Option<bool> {
        self.eat(b'"')?;
        let mut plain = true;
        loop {
            // The run up to the next quote, backslash or control byte. Short
            // runs (member names, small values) are walked byte by byte;
            // past 16 bytes memchr (SIMD) finds the end and a minimum
            // (vectorized, no early exit) checks for control bytes.
            let rest = self.b.get(self.i..)?;
            let head = rest.len().min(16);
            let n = match rest[..head]
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
            {
                Some(n) => n,
                None => {
                    let tail = &rest[head..];
                    let m = memchr::memchr2(b'"', b'\\', tail)?;
                    if tail[..m].iter().copied().min().is_some_and(|c| c < 0x20) {
                        return None;
                    }
                    head + m
                }
            };
            if rest[n] < 0x20 {
                return None;
            }
            self.i += n + 1;
            if rest[n] == b'"' {
                return Some(plain);
            }
            plain = false;
            match self.next()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => {
                    let hex = self.b.get(self.i..self.i + 4)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.i += 4;
                }
                _ => return None,
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(b'{')?;
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            self.ws();
            if self.peek()? != b'"' {
                return None;
            }
            self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            self.value(depth)?;
            self.ws();
            match self.next()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(b'[')?;
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            self.ws();
            self.value(depth)?;
            self.ws();
            match self.next()? {
                b',' => {}
                b']' => return Some(()),
                _ => return None,
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.b.get(self.i..self.i + word.len())? != word {
            return None;
        }
        self.i += word.len();
        Some(())
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.i;
        self.digits();
        (self.i > start).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_members_as_written() {
        let text = r#" {"jsonrpc" : "2.0","x":[1,{"y":null}],"id":7, "result":{"content":[{"type":"text","text":"a\"b\u00e9"}]}} "#;
        let m = scan(text).unwrap();
        assert_eq!(m.jsonrpc, Some(r#""2.0""#));
        assert_eq!(m.id, Some("7"));
        assert_eq!(
            m.result,
            Some(r#"{"content":[{"type":"text","text":"a\"b\u00e9"}]}"#)
        );
        assert_eq!((m.method, m.params, m.error), (None, None, None));
    }

    #[test]
    fn anything_unusual_is_left_to_serde() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":1}"#,
            r#"{"jsonrpc":"2.0","\u0069d":1,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":01,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1,]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":"a	b"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":"\x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":tru}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1} x"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1"#,
            r#"{"jsonrpc":"2.0","id":1,}"#,
            r#"{"jsonrpc":"2.0","id":-,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1.,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1e,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":"\u12G4"}"#,
        ] {
            assert_eq!(scan(text), None, "{text}");
        }
        let long = format!(
            r#"{{"id":1,"result":"{}\u{{1}}{}"}}"#,
            "a".repeat(40),
            "b".repeat(40)
        );
        assert_eq!(
            scan(&long),
            None,
            "a control character inside a long string"
        );
        let deep = format!("{{\"result\":{}{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(scan(&deep), None);
    }

    #[test]
    fn numbers_and_strings_take_the_plain_path_only_when_plain() {
        assert_eq!(plain_i64("0"), Some(0));
        assert_eq!(plain_i64("-42"), Some(-42));
        assert_eq!(
            plain_i64("123456789012345678"),
            Some(123_456_789_012_345_678)
        );
        for n in ["", "-", "01", "1.0", "1e3", "+1", "1234567890123456789"] {
            assert_eq!(plain_i64(n), None, "{n}");
        }
        assert_eq!(plain_str(r#""tools/call""#), Some("tools/call"));
        assert_eq!(plain_str(r#""a\"b""#), None);
        assert_eq!(plain_str("\"x"), None);
    }
}
