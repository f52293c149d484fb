//! [`Auth`]: the authorization setting of an HTTP client, made into an
//! [`Authorizer`] for each server URL.

use std::sync::Arc;

use crate::authorizer::Authorizer;
use crate::config::OAuthConfig;
use crate::error::AuthError;
use crate::fetch::HttpFetch;
use crate::oauth::OAuth;
use crate::secret::Secret;
use crate::static_token::BearerToken;

/// How the requests to a server are authorized.
///
/// The default is OAuth with the default [`OAuthConfig`]: nothing happens
/// until a server answers `401`, and then the user is asked to authorize in
/// a browser (where a terminal is attached). A server that needs no
/// authorization costs nothing more.
#[derive(Clone)]
#[non_exhaustive]
pub enum Auth {
    /// No credentials: a `401` is reported as an error.
    None,
    /// One fixed token.
    Bearer(BearerToken),
    /// OAuth tokens obtained and renewed as configured.
    OAuth(Box<OAuthConfig>),
    /// An authorizer of the caller's.
    Custom(Arc<dyn Authorizer>),
}

impl Default for Auth {
    fn default() -> Self {
        Auth::OAuth(Box::default())
    }
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => f.write_str("None"),
            Auth::Bearer(b) => b.fmt(f),
            Auth::OAuth(c) => f.debug_tuple("OAuth").field(c).finish(),
            Auth::Custom(_) => f.write_str("Custom"),
        }
    }
}

impl Auth {
    /// A fixed bearer token.
    pub fn bearer(token: impl Into<Secret>) -> Result<Self, AuthError> {
        Ok(Auth::Bearer(BearerToken::new(token)?))
    }

    /// A fixed bearer token read now from environment variable `var`.
    pub fn bearer_from_env(var: &str) -> Result<Self, AuthError> {
        Ok(Auth::Bearer(BearerToken::from_env(var)?))
    }

    /// Client credentials with a secret.
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<Secret>) -> Self {
        Auth::OAuth(Box::new(OAuthConfig::client_credentials(client_id, secret)))
    }

    /// OAuth as `config` says.
    pub fn oauth(config: OAuthConfig) -> Self {
        Auth::OAuth(Box::new(config))
    }

    /// The authorizer for the server at `server_url`, making its own requests
    /// through `fetch`; `None` for [`Auth::None`].
    pub fn authorizer(
        &self,
        server_url: &str,
        fetch: Arc<dyn HttpFetch>,
    ) -> Result<Option<Arc<dyn Authorizer>>, AuthError> {
        Ok(match self {
            Auth::None => None,
            Auth::Bearer(b) => Some(Arc::new(b.clone())),
            Auth::OAuth(c) => Some(Arc::new(OAuth::new(server_url, (**c).clone(), fetch)?)),
            Auth::Custom(a) => Some(a.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoFetch;
    impl HttpFetch for NoFetch {
        fn fetch(
            &self,
            _request: http::Request<bytes::Bytes>,
        ) -> futures_util::future::BoxFuture<
            '_,
            Result<http::Response<bytes::Bytes>, crate::FetchError>,
        > {
            Box::pin(async { Err(crate::FetchError::timeout()) })
        }
    }

    #[tokio::test]
    async fn each_setting_makes_its_authorizer() {
        let fetch: Arc<dyn HttpFetch> = Arc::new(NoFetch);
        let url = "https://mcp.example/mcp";
        assert!(Auth::None.authorizer(url, fetch.clone()).unwrap().is_none());
        let bearer = Auth::bearer("t0k")
            .unwrap()
            .authorizer(url, fetch.clone())
            .unwrap()
            .unwrap();
        let uri: http::Uri = url.parse().unwrap();
        let h = bearer.headers(&http::Method::GET, &uri).await.unwrap();
        assert_eq!(h.iter().next().unwrap().1.to_str().unwrap(), "Bearer t0k");
        // OAuth sends nothing until the server asks.
        let oauth = Auth::default()
            .authorizer(url, fetch.clone())
            .unwrap()
            .unwrap();
        assert!(
            oauth
                .headers(&http::Method::POST, &uri)
                .await
                .unwrap()
                .is_empty()
        );
        assert!(format!("{:?}", Auth::bearer("t0k").unwrap()).contains("redacted"));
        assert!(matches!(
            Auth::client_credentials("id", "s"),
            Auth::OAuth(_)
        ));
    }

    #[test]
    fn the_shorthands_make_the_oauth_setting_they_name() {
        let Auth::OAuth(c) = Auth::client_credentials("svc", "s3cret") else {
            panic!("not an OAuth setting");
        };
        assert!(matches!(c.grant, crate::Grant::ClientCredentials));
        assert_eq!(c.client_id.as_deref(), Some("svc"));
        let Auth::OAuth(c) = Auth::oauth(OAuthConfig::new().client_name("named")) else {
            panic!("not an OAuth setting");
        };
        assert_eq!(c.client_name, "named");
        assert_eq!(format!("{:?}", Auth::None), "None");
        assert!(format!("{:?}", Auth::default()).starts_with("OAuth(OAuthConfig {"));
    }
}
