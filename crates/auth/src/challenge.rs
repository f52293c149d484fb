//! [`Challenge`]: what a `WWW-Authenticate` challenge tells the client.
//!
//! This crate takes challenges already parsed (the HTTP transport owns the
//! header parser): only the scheme and the parameters authorization acts on.

/// One authentication challenge of a `401` or `403` answer (RFC 9110 §11.6.1,
/// RFC 6750 §3, RFC 9728 §5.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Challenge {
    /// The scheme: `Bearer`, `DPoP`, ... (compare case-insensitively).
    pub scheme: String,
    /// `resource_metadata`: where the Protected Resource Metadata is (RFC 9728).
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the current operation needs, space separated.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, `use_dpop_nonce`, ...
    pub error: Option<String>,
    /// `error_description`, for people.
    pub error_description: Option<String>,
}

impl Challenge {
    /// A challenge with `scheme` and no parameters.
    pub fn new(scheme: impl Into<String>) -> Self {
        Self {
            scheme: scheme.into(),
            ..Self::default()
        }
    }

    /// Sets `resource_metadata`.
    #[must_use]
    pub fn resource_metadata(mut self, url: impl Into<String>) -> Self {
        self.resource_metadata = Some(url.into());
        self
    }

    /// Sets `scope`.
    #[must_use]
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// Sets `error`.
    #[must_use]
    pub fn error(mut self, error: impl Into<String>) -> Self {
        self.error = Some(error.into());
        self
    }

    /// Sets `error_description`.
    #[must_use]
    pub fn error_description(mut self, text: impl Into<String>) -> Self {
        self.error_description = Some(text.into());
        self
    }

    /// Whether the scheme is `name`, ignoring ASCII case.
    pub fn is_scheme(&self, name: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(name)
    }

    /// Whether `error` is `code`.
    pub fn has_error(&self, code: &str) -> bool {
        self.error.as_deref() == Some(code)
    }

    /// The scopes of `scope`, split on spaces.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scope.as_deref().unwrap_or("").split_ascii_whitespace()
    }
}

/// The first of `challenges` that names a `resource_metadata` URL, else the
/// first `Bearer` or `DPoP` one, else the first.
pub(crate) fn pick(challenges: &[Challenge]) -> Option<&Challenge> {
    challenges
        .iter()
        .find(|c| c.resource_metadata.is_some())
        .or_else(|| {
            challenges
                .iter()
                .find(|c| c.is_scheme("bearer") || c.is_scheme("dpop"))
        })
        .or_else(|| challenges.first())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_naming_metadata_wins() {
        let list = [
            Challenge::new("Basic"),
            Challenge::new("Bearer").scope("a b"),
            Challenge::new("DPoP")
                .resource_metadata("https://x/.well-known/oauth-protected-resource"),
        ];
        assert!(pick(&list).unwrap().is_scheme("dpop"));
        assert_eq!(
            pick(&list[..2]).unwrap().scopes().collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert!(pick(&list[..1]).unwrap().is_scheme("BASIC"));
        assert!(pick(&[]).is_none());
    }
}
