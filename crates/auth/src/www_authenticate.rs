//! The `WWW-Authenticate` header: a server's authentication challenges,
//! parsed by the grammar of RFC 9110 §11.6.1.
//!
//! ```text
//! WWW-Authenticate = #challenge
//! challenge        = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//! auth-param       = token BWS "=" BWS ( token / quoted-string )
//! token68          = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
//! ```
//!
//! Challenges and their parameters share the comma, so where a challenge
//! ends is decided element by element: `name=value` continues the current
//! challenge, a bare token (or a token, spaces and more) starts the next.
//! Scheme and parameter names compare without regard to case. The parser is
//! lenient and never panics: an element it cannot read is skipped up to the
//! next comma, and the challenges around it are kept.
//!
//! This module depends on nothing but `std`. It is the one parser of the
//! workspace: the HTTP transport re-exports [`Challenge`].

use std::fmt;

/// One authentication challenge: a scheme (`Bearer`, `Basic`...) with either
/// parameters or a `token68`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    scheme: String,
    token68: Option<String>,
    /// Names lowercased; values unquoted and unescaped.
    params: Vec<(String, String)>,
}

impl Challenge {
    /// Every challenge in one header value, in order.
    pub fn parse(header: &str) -> Vec<Challenge> {
        Self::parse_bytes(header.as_bytes())
    }

    /// Every challenge in one header value given as bytes (header values
    /// may hold bytes that are not UTF-8; they are read lossily).
    pub fn parse_bytes(header: &[u8]) -> Vec<Challenge> {
        Parser { s: header, at: 0 }.challenges()
    }

    /// Every challenge of several `WWW-Authenticate` headers, in order.
    pub fn parse_all<'a, I>(headers: I) -> Vec<Challenge>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        headers.into_iter().flat_map(Self::parse_bytes).collect()
    }

    /// The scheme as the server wrote it.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// True if the scheme is `scheme`, compared without regard to case.
    pub fn is(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The `token68` form's value (`Negotiate YIIB==`), if the challenge has
    /// one instead of parameters.
    pub fn token68(&self) -> Option<&str> {
        self.token68.as_deref()
    }

    /// The value of parameter `name` (any case), unquoted; the first if the
    /// server repeated it.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every parameter, names lowercased, in order.
    pub fn params(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// `realm`.
    pub fn realm(&self) -> Option<&str> {
        self.param("realm")
    }

    /// `resource_metadata`: where the protected resource's metadata is
    /// (RFC 9728), which names its authorization servers.
    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata")
    }

    /// `scope`: the scopes the resource asks for, space-separated.
    pub fn scope(&self) -> Option<&str> {
        self.param("scope")
    }

    /// `error`: why a token was refused (`invalid_token`,
    /// `insufficient_scope`; RFC 6750).
    pub fn error(&self) -> Option<&str> {
        self.param("error")
    }

    /// `error_description`: the server's words about the error.
    pub fn error_description(&self) -> Option<&str> {
        self.param("error_description")
    }

    /// The scopes of `scope`, split on spaces.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scope().unwrap_or("").split_ascii_whitespace()
    }
}

/// The challenge authorization acts on: the first that names a
/// `resource_metadata` URL, else the first `Bearer` or `DPoP` one, else the
/// first.
pub(crate) fn pick(challenges: &[Challenge]) -> Option<&Challenge> {
    challenges
        .iter()
        .find(|c| c.resource_metadata().is_some())
        .or_else(|| challenges.iter().find(|c| c.is("bearer") || c.is("dpop")))
        .or_else(|| challenges.first())
}

impl fmt::Display for Challenge {
    /// The challenge in header syntax, every value quoted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.scheme)?;
        if let Some(t) = &self.token68 {
            return write!(f, " {t}");
        }
        for (i, (name, value)) in self.params.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            write!(f, "{name}=\"")?;
            for c in value.chars() {
                if c == '"' || c == '\\' {
                    f.write_str("\\")?;
                }
                write!(f, "{c}")?;
            }
            f.write_str("\"")?;
        }
        Ok(())
    }
}

/// `tchar` of RFC 9110 §5.6.2.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
}

fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn skip_ows(&mut self) {
        while self.peek().is_some_and(is_ows) {
            self.at += 1;
        }
    }

    /// Skips OWS and commas: empty list elements are allowed.
    fn skip_separators(&mut self) {
        while self.peek().is_some_and(|b| is_ows(b) || b == b',') {
            self.at += 1;
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.at;
        while self.peek().is_some_and(is_tchar) {
            self.at += 1;
        }
        (self.at > start).then(|| String::from_utf8_lossy(&self.s[start..self.at]).into_owned())
    }

    /// A quoted string, the opening quote next; unescaped. An unterminated
    /// one runs to the end of the input.
    fn quoted(&mut self) -> String {
        self.at += 1;
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    if let Some(next) = self.peek() {
                        out.push(next);
                        self.at += 1;
                    }
                }
                _ => out.push(b),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// At the end of a list element: end of input or a comma, after OWS.
    fn at_element_end(&mut self) -> bool {
        self.skip_ows();
        matches!(self.peek(), None | Some(b','))
    }

    /// Skips what is left of an element it could not read.
    fn skip_element(&mut self) {
        while let Some(b) = self.peek() {
            if b == b',' {
                break;
            }
            if b == b'"' {
                self.quoted();
            } else {
                self.at += 1;
            }
        }
    }

    /// `token BWS "=" BWS ( token / quoted-string )`, or nothing (the
    /// position restored).
    fn param(&mut self) -> Option<(String, String)> {
        let start = self.at;
        let found = (|| {
            let name = self.token()?;
            self.skip_ows();
            if self.peek() != Some(b'=') {
                return None;
            }
            self.at += 1;
            self.skip_ows();
            let value = match self.peek()? {
                b'"' => self.quoted(),
                _ => self.token()?,
            };
            Some((name.to_ascii_lowercase(), value))
        })();
        if found.is_none() {
            self.at = start;
        }
        found
    }

    /// A token68 that fills the rest of its element, or nothing (the
    /// position restored).
    fn token68(&mut self) -> Option<String> {
        let start = self.at;
        while self.peek().is_some_and(is_token68_char) {
            self.at += 1;
        }
        if self.at == start {
            return None;
        }
        while self.peek() == Some(b'=') {
            self.at += 1;
        }
        let end = self.at;
        if self.at_element_end() {
            Some(String::from_utf8_lossy(&self.s[start..end]).into_owned())
        } else {
            self.at = start;
            None
        }
    }

    fn challenges(mut self) -> Vec<Challenge> {
        let mut out = Vec::new();
        loop {
            self.skip_separators();
            if self.peek().is_none() {
                return out;
            }
            let Some(scheme) = self.token() else {
                self.skip_element();
                continue;
            };
            let mut challenge = Challenge {
                scheme,
                token68: None,
                params: Vec::new(),
            };
            // `1*SP` before the token68 or the first parameter.
            let spaced = self.peek().is_some_and(is_ows);
            self.skip_ows();
            if spaced && !self.at_element_end() {
                if let Some(p) = self.param() {
                    challenge.params.push(p);
                    self.more_params(&mut challenge);
                } else if let Some(t) = self.token68() {
                    challenge.token68 = Some(t);
                } else {
                    self.skip_element();
                }
            } else if !self.at_element_end() {
                self.skip_element();
            }
            out.push(challenge);
        }
    }

    /// After a parameter: more of them, each after a comma, for as long as
    /// the next element reads as `name=value`.
    fn more_params(&mut self, challenge: &mut Challenge) {
        loop {
            if !self.at_element_end() {
                // Junk after a value: skip to the next element.
                self.skip_element();
            }
            let before = self.at;
            self.skip_separators();
            match self.param() {
                Some(p) => challenge.params.push(p),
                None => {
                    // The next challenge (or junk) starts here.
                    self.at = before;
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(header: &str) -> Challenge {
        let mut all = Challenge::parse(header);
        assert_eq!(all.len(), 1, "{header}: {all:?}");
        all.remove(0)
    }

    #[test]
    fn the_challenge_acted_on_names_metadata_else_is_bearer_or_dpop_else_comes_first() {
        let pick_in = |header: &str| {
            let all = Challenge::parse(header);
            pick(&all).map(|c| c.scheme().to_owned())
        };
        assert_eq!(
            pick_in(r#"Basic realm="x", DPoP algs="ES256", Bearer resource_metadata="https://m""#)
                .as_deref(),
            Some("Bearer")
        );
        assert_eq!(
            pick_in(r#"Basic realm="x", DPoP algs="ES256""#).as_deref(),
            Some("DPoP")
        );
        assert_eq!(
            pick_in(r#"Basic realm="x", bearer"#).as_deref(),
            Some("bearer")
        );
        assert_eq!(
            pick_in(r#"Basic realm="x", Negotiate"#).as_deref(),
            Some("Basic")
        );
        assert_eq!(pick_in(""), None);
        let basic = one(r#"Basic realm="x""#);
        assert!(basic.is("BASIC") && !basic.is("bearer"));
    }

    #[test]
    fn what_follows_a_scheme_without_a_space_is_junk() {
        // `1*SP` must come between the scheme and its token68: `/abc=` is
        // token68 text, but glued to the scheme it is skipped.
        let c = one("Basic/abc=");
        assert_eq!(c.scheme(), "Basic");
        assert_eq!((c.token68(), c.params().count()), (None, 0));
    }

    #[test]
    fn a_bearer_challenge_with_the_mcp_parameters() {
        let c = one(
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write", error="insufficient_scope", error_description="The request requires higher privileges""#,
        );
        assert!(c.is("bearer") && c.scheme() == "Bearer");
        assert_eq!(
            c.resource_metadata(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(c.scope(), Some("files:read files:write"));
        assert_eq!(
            c.scopes().collect::<Vec<_>>(),
            ["files:read", "files:write"]
        );
        assert_eq!(one("Bearer").scopes().count(), 0);
        assert_eq!(c.error(), Some("insufficient_scope"));
        assert_eq!(
            c.error_description(),
            Some("The request requires higher privileges")
        );
    }

    #[test]
    fn the_rfc_example_gives_two_challenges() {
        // RFC 9110 §11.6.1.
        let all = Challenge::parse(
            r#"Basic realm="simple", Newauth realm="apps", type=1, title="Login to \"apps\"""#,
        );
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all[0].is("basic"));
        assert_eq!(all[0].realm(), Some("simple"));
        assert_eq!(all[0].params().count(), 1);
        assert!(all[1].is("Newauth"));
        assert_eq!(all[1].realm(), Some("apps"));
        assert_eq!(all[1].param("TYPE"), Some("1"));
        assert_eq!(all[1].param("title"), Some(r#"Login to "apps""#));
    }

    #[test]
    fn token68_bare_schemes_and_empty_elements() {
        let all = Challenge::parse(" , Negotiate YIIB+/x==, Bearer,, Basic ,PrivateToken  abc ");
        let schemes: Vec<&str> = all.iter().map(Challenge::scheme).collect();
        assert_eq!(schemes, ["Negotiate", "Bearer", "Basic", "PrivateToken"]);
        assert_eq!(all[0].token68(), Some("YIIB+/x=="));
        assert_eq!(all[1].token68(), None);
        assert_eq!(all[1].params().count(), 0);
        assert_eq!(all[3].token68(), Some("abc"));
    }

    #[test]
    fn whitespace_around_equals_and_case_in_names() {
        let c = one("BEARER Realm = \"x\" ,\tSCOPE=a");
        assert!(c.is("Bearer"));
        assert_eq!(c.realm(), Some("x"));
        assert_eq!(c.scope(), Some("a"));
        assert_eq!(c.params().next(), Some(("realm", "x")));
    }

    #[test]
    fn several_headers_keep_their_order() {
        let all = Challenge::parse_all([
            &b"Basic realm=a"[..],
            &b"Bearer scope=\"s\", DPoP algs=\"ES256\""[..],
        ]);
        let schemes: Vec<&str> = all.iter().map(Challenge::scheme).collect();
        assert_eq!(schemes, ["Basic", "Bearer", "DPoP"]);
        assert_eq!(all[2].param("algs"), Some("ES256"));
    }

    #[test]
    fn junk_is_skipped_and_the_rest_kept() {
        let all = Challenge::parse(r#"=junk, Bearer realm="a" trailing, "quoted, thing", Basic"#);
        let schemes: Vec<&str> = all.iter().map(Challenge::scheme).collect();
        assert_eq!(schemes, ["Bearer", "Basic"]);
        assert_eq!(all[0].realm(), Some("a"));
        // An unterminated quoted string runs to the end.
        let c = one(r#"Bearer realm="open"#);
        assert_eq!(c.realm(), Some("open"));
        // Bytes that are not UTF-8 are read lossily.
        let all = Challenge::parse_bytes(b"Bearer realm=\"\xff\"");
        assert_eq!(all[0].realm(), Some("\u{fffd}"));
    }

    #[test]
    fn display_writes_the_header_syntax_back() {
        let c = one(r#"Bearer scope="a b", title="say \"hi\"""#);
        assert_eq!(c.to_string(), r#"Bearer scope="a b", title="say \"hi\"""#);
        assert_eq!(Challenge::parse(&c.to_string()), vec![c]);
        assert_eq!(one("Negotiate abc=").to_string(), "Negotiate abc=");
    }

    mod prop {
        use proptest::prelude::*;

        use super::super::Challenge;

        proptest! {
            #[test]
            fn never_panics_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
                let _ = Challenge::parse_bytes(&bytes);
            }

            #[test]
            fn never_panics_on_header_like_text(s in r#"[ \t,=";\\A-Za-z0-9+/._~-]{0,120}"#) {
                for c in Challenge::parse(&s) {
                    let _ = c.to_string();
                }
            }

            #[test]
            fn written_challenges_read_back(
                scheme in "[A-Za-z][A-Za-z0-9-]{0,10}",
                params in proptest::collection::vec(("[a-z_]{1,12}", r#"[ -~]{0,20}"#), 1..5),
            ) {
                let mut c = Challenge { scheme, token68: None, params };
                let text = c.to_string();
                c.params.iter_mut().for_each(|(n, _)| *n = n.to_ascii_lowercase());
                prop_assert_eq!(Challenge::parse(&text), vec![c]);
            }
        }
    }
}
