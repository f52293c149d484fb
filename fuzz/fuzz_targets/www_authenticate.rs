#![no_main]

//! The `WWW-Authenticate` parser, on any header value a server sends.
//!
//! It must never panic; every challenge it returns has a scheme that is a
//! token and parameter names in lower case; the accessors agree with the
//! parameters; and each challenge, written back in header syntax
//! (`Display`, every value quoted), parses to itself.

use libfuzzer_sys::fuzz_target;
use mcpwire_http::Challenge;

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
        })
}

fuzz_target!(|raw: &[u8]| {
    let challenges = Challenge::parse_bytes(raw);
    if let Ok(text) = std::str::from_utf8(raw) {
        assert_eq!(Challenge::parse(text), challenges, "str and bytes disagree");
    }
    // Two header lines read as one list, in order.
    let twice = Challenge::parse_all([raw, raw]);
    assert_eq!(twice.len(), 2 * challenges.len());
    for c in &challenges {
        assert!(is_token(c.scheme()), "scheme {:?} is not a token", c.scheme());
        assert!(c.is(&c.scheme().to_ascii_uppercase()));
        for (name, value) in c.params() {
            assert!(is_token(name), "parameter name {name:?}");
            assert_eq!(name, name.to_ascii_lowercase());
            // The first of a repeated name is the one `param` gives.
            let first = c.params().find(|(n, _)| *n == name).map(|(_, v)| v);
            assert_eq!(c.param(name), first);
            let _ = value;
        }
        assert_eq!(c.scope(), c.param("scope"));
        assert_eq!(c.resource_metadata(), c.param("resource_metadata"));
        let written = c.to_string();
        assert_eq!(
            Challenge::parse(&written),
            vec![c.clone()],
            "{written:?} does not parse back"
        );
    }
});
