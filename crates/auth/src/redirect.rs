//! The user's part of the authorization code flow, as a pluggable step:
//! show the authorization URL, bring back the URL the authorization server
//! redirected to. [`LoopbackBrowser`](crate::LoopbackBrowser) does it with the
//! user's browser; [`CallbackRedirect`] hands it to the caller (servers,
//! tests, headless programs); [`FollowLocation`] reads the redirect from the
//! authorization endpoint's own `Location` header (authorization servers
//! that approve without a user: tests and demos).

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use url::Url;

use crate::error::{AuthError, BoxError};
use crate::fetch::{Fetcher, HttpFetch};

/// Starts the redirect part of an authorization: the returned
/// [`PendingRedirect`] knows the redirect URI to register and send.
pub trait RedirectStep: Send + Sync {
    /// Gets ready to receive one redirect (a loopback listener binds here).
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn PendingRedirect>, AuthError>>;
}

/// One redirect being waited for.
pub trait PendingRedirect: Send {
    /// The redirect URI (registered with the client, sent in the request).
    fn redirect_uri(&self) -> &str;
    /// Sends the user to `authorization_url` and returns the full URL the
    /// authorization server redirected to (with its query: `code`, `state`,
    /// `iss` or `error`). The caller bounds the wait.
    fn finish(
        self: Box<Self>,
        authorization_url: Url,
    ) -> BoxFuture<'static, Result<Url, AuthError>>;
}

type Callback = dyn Fn(Url) -> BoxFuture<'static, Result<String, BoxError>> + Send + Sync;

/// A [`RedirectStep`] that hands the authorization URL to a function of the
/// caller, which returns the URL the user's browser was redirected to (the
/// whole URL, so `state` and `iss` can be checked).
#[derive(Clone)]
pub struct CallbackRedirect {
    redirect_uri: String,
    callback: Arc<Callback>,
}

impl std::fmt::Debug for CallbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackRedirect")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl CallbackRedirect {
    /// A step that registers `redirect_uri` and calls `callback` with each
    /// authorization URL.
    pub fn new<F, Fut>(redirect_uri: impl Into<String>, callback: F) -> Self
    where
        F: Fn(Url) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, BoxError>> + Send + 'static,
    {
        Self {
            redirect_uri: redirect_uri.into(),
            callback: Arc::new(move |url| Box::pin(callback(url))),
        }
    }
}

struct CallbackPending {
    redirect_uri: String,
    callback: Arc<Callback>,
}

impl RedirectStep for CallbackRedirect {
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn PendingRedirect>, AuthError>> {
        let pending = CallbackPending {
            redirect_uri: self.redirect_uri.clone(),
            callback: self.callback.clone(),
        };
        Box::pin(async move { Ok(Box::new(pending) as Box<dyn PendingRedirect>) })
    }
}

impl PendingRedirect for CallbackPending {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn finish(
        self: Box<Self>,
        authorization_url: Url,
    ) -> BoxFuture<'static, Result<Url, AuthError>> {
        let fut = (self.callback)(authorization_url);
        Box::pin(async move {
            let raw = fut.await.map_err(AuthError::Redirect)?;
            Url::parse(&raw).map_err(|e| {
                AuthError::Redirect(format!("the callback returned no absolute URL ({e})").into())
            })
        })
    }
}

/// A [`RedirectStep`] that GETs the authorization URL itself (no browser,
/// no user) and takes the redirect from the answer's `Location` header.
///
/// Only for authorization servers that approve without a user: conformance
/// and test servers, demo providers. A real one answers with a login page,
/// which fails here with a clear error.
#[derive(Clone)]
pub struct FollowLocation {
    fetch: Arc<dyn HttpFetch>,
    redirect_uri: String,
}

impl std::fmt::Debug for FollowLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FollowLocation")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl FollowLocation {
    /// A step fetching through `fetch` and registering `redirect_uri` (which
    /// nothing needs to listen on).
    pub fn new(fetch: Arc<dyn HttpFetch>, redirect_uri: impl Into<String>) -> Self {
        Self {
            fetch,
            redirect_uri: redirect_uri.into(),
        }
    }
}

impl RedirectStep for FollowLocation {
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn PendingRedirect>, AuthError>> {
        let pending = self.clone();
        Box::pin(async move { Ok(Box::new(pending) as Box<dyn PendingRedirect>) })
    }
}

impl PendingRedirect for FollowLocation {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn finish(
        self: Box<Self>,
        authorization_url: Url,
    ) -> BoxFuture<'static, Result<Url, AuthError>> {
        Box::pin(async move {
            let fetcher = Fetcher::new(self.fetch.clone(), std::time::Duration::from_secs(30));
            let req = http::Request::get(authorization_url.as_str())
                .body(Bytes::new())
                .map_err(|e| AuthError::Redirect(Box::new(e)))?;
            let resp = fetcher.send(req).await?;
            if !resp.status().is_redirection() {
                return Err(AuthError::Redirect(
                    format!(
                        "the authorization endpoint answered HTTP {} instead of a redirect",
                        resp.status().as_u16()
                    )
                    .into(),
                ));
            }
            let location = resp
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| {
                    AuthError::Redirect(
                        "the authorization endpoint's redirect has no Location".into(),
                    )
                })?;
            authorization_url
                .join(location)
                .map_err(|e| AuthError::Redirect(Box::new(e)))
        })
    }
}

/// The parameters of an authorization response (RFC 6749 §4.1.2, RFC 9207).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct AuthorizationResponse {
    pub(crate) code: Option<String>,
    pub(crate) state: Option<String>,
    pub(crate) iss: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) error_description: Option<String>,
}

impl AuthorizationResponse {
    /// Reads the query of the redirect URL.
    pub(crate) fn parse(url: &Url) -> Self {
        let mut r = Self::default();
        for (k, v) in url.query_pairs() {
            let slot = match k.as_ref() {
                "code" => &mut r.code,
                "state" => &mut r.state,
                "iss" => &mut r.iss,
                "error" => &mut r.error,
                "error_description" => &mut r.error_description,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(v.into_owned());
            }
        }
        r
    }
}

impl std::fmt::Debug for dyn PendingRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRedirect")
            .field("redirect_uri", &self.redirect_uri())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_read_from_the_query() {
        let u =
            Url::parse("http://127.0.0.1:1/cb?code=c&state=s&iss=https%3A%2F%2Fas&x=1&code=again")
                .unwrap();
        let r = AuthorizationResponse::parse(&u);
        assert_eq!(r.code.as_deref(), Some("c"));
        assert_eq!(r.state.as_deref(), Some("s"));
        assert_eq!(r.iss.as_deref(), Some("https://as"));
        assert!(r.error.is_none());
    }

    #[tokio::test]
    async fn callbacks_get_the_authorization_url_and_return_the_redirect() {
        let step = CallbackRedirect::new("http://localhost:3000/cb", |url: Url| async move {
            Ok(format!(
                "http://localhost:3000/cb?code=x&state={}",
                url.query().unwrap_or("")
            ))
        });
        let pending = step.prepare().await.unwrap();
        assert_eq!(pending.redirect_uri(), "http://localhost:3000/cb");
        let back = pending
            .finish(Url::parse("https://as/authorize?s1").unwrap())
            .await
            .unwrap();
        assert_eq!(back.as_str(), "http://localhost:3000/cb?code=x&state=s1");
        let failing = CallbackRedirect::new("http://localhost/cb", |_url: Url| async move {
            Err::<String, BoxError>("user closed".into())
        });
        let err = failing
            .prepare()
            .await
            .unwrap()
            .finish(Url::parse("https://as/a").unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::Redirect(_)));
    }

    #[test]
    fn a_refusal_is_read_from_the_query_with_its_description() {
        let u = Url::parse(
            "http://127.0.0.1:1/cb?error=access_denied&error_description=the+user+said+no\
             &state=s&error=later&error_description=later",
        )
        .unwrap();
        assert_eq!(
            AuthorizationResponse::parse(&u),
            AuthorizationResponse {
                code: None,
                state: Some("s".into()),
                iss: None,
                error: Some("access_denied".into()),
                error_description: Some("the user said no".into()),
            }
        );
    }

    /// An `HttpFetch` that is never called.
    struct Unused;

    impl HttpFetch for Unused {
        fn fetch(
            &self,
            _: http::Request<Bytes>,
        ) -> BoxFuture<'_, Result<http::Response<Bytes>, crate::FetchError>> {
            unreachable!("not called")
        }
    }

    #[tokio::test]
    async fn a_redirect_step_shows_its_redirect_uri_and_nothing_else() {
        let step = CallbackRedirect::new("http://localhost:3000/cb", |_url: Url| async move {
            Ok(String::new())
        });
        assert_eq!(
            format!("{step:?}"),
            r#"CallbackRedirect { redirect_uri: "http://localhost:3000/cb", .. }"#
        );
        let pending = step.prepare().await.unwrap();
        assert_eq!(
            format!("{pending:?}"),
            r#"PendingRedirect { redirect_uri: "http://localhost:3000/cb" }"#
        );
        let follow = FollowLocation::new(Arc::new(Unused), "http://127.0.0.1:9/cb");
        assert_eq!(
            format!("{follow:?}"),
            r#"FollowLocation { redirect_uri: "http://127.0.0.1:9/cb", .. }"#
        );
        let pending = follow.prepare().await.unwrap();
        assert_eq!(pending.redirect_uri(), "http://127.0.0.1:9/cb");
    }
}
