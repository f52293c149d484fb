//! [`Secret`]: a token, client secret or private key that never prints.

use std::fmt;

/// A secret string: an access or refresh token, a client secret, a private
/// key, an assertion.
///
/// `Debug` prints `Secret([redacted])` and there is no `Display`, so a secret
/// cannot reach a log, an error message or a panic by accident; the value is
/// read only through [`Secret::expose`], which makes every use easy to find.
/// It serializes as the plain string, for token stores (see
/// [`TokenStore`](crate::TokenStore)), so never serialize a value holding one
/// into a log.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret value itself.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = Secret::new("tok-123");
        assert_eq!(format!("{s:?}"), "Secret([redacted])");
        assert_eq!(format!("{:?}", Some(&s)), "Some(Secret([redacted]))");
        assert_eq!(s.expose(), "tok-123");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"tok-123\"");
    }
}
