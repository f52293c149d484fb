//! [`BearerToken`]: a fixed token, given or read from the environment.

use futures_util::future::BoxFuture;
use http::{HeaderValue, Method, Uri};

use crate::authorizer::{AuthHeaders, AuthRound, Authorizer, Challenged};
use crate::error::AuthError;
use crate::secret::Secret;
use crate::www_authenticate::pick;

/// An [`Authorizer`] sending one fixed bearer token with every request. A
/// `401` or `403` fails the request (a fixed token cannot be renewed).
#[derive(Clone)]
pub struct BearerToken {
    value: HeaderValue,
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken([redacted])")
    }
}

impl BearerToken {
    /// A token. Fails if it cannot be a header value.
    pub fn new(token: impl Into<Secret>) -> Result<Self, AuthError> {
        let token = token.into();
        let mut value =
            HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| {
                AuthError::Config("the bearer token holds characters a header cannot carry".into())
            })?;
        value.set_sensitive(true);
        Ok(Self { value })
    }

    /// The token in environment variable `var`, read now.
    pub fn from_env(var: &str) -> Result<Self, AuthError> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Self::new(v.trim()),
            _ => Err(AuthError::MissingCredential {
                what: format!("environment variable {var}"),
            }),
        }
    }
}

impl Authorizer for BearerToken {
    fn headers<'a>(
        &'a self,
        _method: &'a Method,
        _uri: &'a Uri,
    ) -> BoxFuture<'a, Result<AuthHeaders, AuthError>> {
        let mut h = AuthHeaders::new(0);
        h.push(http::header::AUTHORIZATION, self.value.clone());
        Box::pin(async move { Ok(h) })
    }

    fn challenged<'a>(
        &'a self,
        answer: Challenged<'a>,
        _round: &'a mut AuthRound,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        let err = AuthError::Unauthorized {
            status: answer.status.as_u16(),
            challenge: pick(answer.challenges).cloned(),
        };
        Box::pin(async move { Err(err) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_fixed_token_is_sent_and_a_refusal_is_final() {
        let t = BearerToken::new("abc").unwrap();
        assert_eq!(format!("{t:?}"), "BearerToken([redacted])");
        let uri: Uri = "https://mcp/x".parse().unwrap();
        let h = t.headers(&Method::POST, &uri).await.unwrap();
        let (name, value) = h.iter().next().unwrap();
        assert_eq!(name, http::header::AUTHORIZATION);
        assert_eq!(value.to_str().unwrap(), "Bearer abc");
        assert!(value.is_sensitive());
        let mut round = AuthRound::default();
        let challenges = crate::Challenge::parse(r#"Bearer error="invalid_token""#);
        let err = t
            .challenged(
                Challenged::new(
                    http::StatusCode::UNAUTHORIZED,
                    &challenges,
                    None,
                    &Method::POST,
                    &uri,
                    &h,
                ),
                &mut round,
            )
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::Unauthorized { status: 401, .. }));
        assert!(err.to_string().contains("invalid_token"));
        assert!(BearerToken::new("a\nb").is_err());
        assert!(matches!(
            BearerToken::from_env("MCPWIRE_AUTH_TEST_SURELY_UNSET"),
            Err(AuthError::MissingCredential { .. })
        ));
    }
}
