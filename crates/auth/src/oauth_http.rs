//! The token endpoint conversation: the `oauth2` crate's HTTP client trait
//! over our [`Fetcher`], DPoP proofs and the `use_dpop_nonce` retry (RFC 9449
//! §8) on every token request, and the grants `oauth2` lacks (JWT bearer,
//! token exchange) posted by hand with the same plumbing.

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderValue, Method, Request, Response, Uri};
use oauth2::TokenResponse as _;
use serde::Deserialize;

use crate::dpop::{DpopKey, Nonces, origin_of};
use crate::error::{AuthError, FetchError, FetchErrorKind};
use crate::fetch::{Fetcher, without_query};
use crate::secret::Secret;
use crate::token::{RefreshTiming, TokenSet, TokenType};
use crate::url_rules::htu;

/// The HTTP client handed to `oauth2` request builders.
pub(crate) struct OAuthHttp<'a> {
    fetcher: &'a Fetcher,
    dpop: Option<(&'a DpopKey, &'a Nonces)>,
}

impl<'a> OAuthHttp<'a> {
    pub(crate) fn new(fetcher: &'a Fetcher, dpop: Option<(&'a DpopKey, &'a Nonces)>) -> Self {
        Self { fetcher, dpop }
    }

    /// Sends a token request, with a DPoP proof when DPoP is in use, and
    /// once more with the server's nonce if it answers `use_dpop_nonce`.
    pub(crate) async fn send(
        &self,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response<Bytes>, FetchError> {
        let origin = origin_of(&uri);
        let mut nonce_retried = false;
        loop {
            let mut req = Request::new(body.clone());
            *req.method_mut() = method.clone();
            *req.uri_mut() = uri.clone();
            *req.headers_mut() = headers.clone();
            if let Some((key, nonces)) = self.dpop {
                let proof = key
                    .proof(&method, &htu(&uri), None, nonces.get(&origin).as_deref())
                    .map_err(|e| FetchError::new(FetchErrorKind::Other, e))?;
                let value = HeaderValue::from_str(&proof)
                    .map_err(|e| FetchError::new(FetchErrorKind::Other, e))?;
                req.headers_mut().insert("dpop", value);
            }
            let resp = self.fetcher.send_raw(req).await?;
            if resp.status().is_redirection() {
                // Never followed: the form may carry a secret or a code.
                return Err(FetchError::new(
                    FetchErrorKind::Other,
                    format!(
                        "the token endpoint answered with a redirect (HTTP {}), which is not followed",
                        resp.status().as_u16()
                    ),
                ));
            }
            if let Some((_, nonces)) = self.dpop {
                let nonce = resp
                    .headers()
                    .get("dpop-nonce")
                    .and_then(|v| v.to_str().ok());
                if let Some(nonce) = nonce {
                    nonces.set(&origin, nonce);
                    if resp.status() == http::StatusCode::BAD_REQUEST
                        && !nonce_retried
                        && oauth_error(resp.body()).is_some_and(|e| e.error == "use_dpop_nonce")
                    {
                        tracing::debug!(url = %without_query(&uri), "token endpoint asked for a DPoP nonce; retrying");
                        nonce_retried = true;
                        continue;
                    }
                }
            }
            return Ok(resp);
        }
    }

    /// POSTs a form to a token endpoint and reads the token response. For
    /// the grants `oauth2` does not build (JWT bearer, token exchange).
    pub(crate) async fn post_token_form(
        &self,
        endpoint: &str,
        params: &[(&str, &str)],
        basic: Option<(&str, &Secret)>,
    ) -> Result<RawTokenResponse, AuthError> {
        let uri: Uri = endpoint
            .parse()
            .map_err(|_| AuthError::Config(format!("unusable token endpoint {endpoint:?}")))?;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params)
            .finish();
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        if let Some((id, secret)) = basic {
            headers.insert(http::header::AUTHORIZATION, basic_credentials(id, secret));
        }
        let resp = self
            .send(Method::POST, uri, headers, Bytes::from(body))
            .await
            .map_err(|e| AuthError::fetch(endpoint, e))?;
        read_token_response(&resp)
    }
}

impl<'c> oauth2::AsyncHttpClient<'c> for OAuthHttp<'_> {
    type Error = FetchError;
    type Future = BoxFuture<'c, Result<oauth2::HttpResponse, FetchError>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let resp = self
                .send(parts.method, parts.uri, parts.headers, Bytes::from(body))
                .await?;
            let (parts, body) = resp.into_parts();
            Ok(Response::from_parts(parts, body.to_vec()))
        })
    }
}

/// `Authorization: Basic` for a client (RFC 6749 §2.3.1: each part
/// form-urlencoded first), marked sensitive.
pub(crate) fn basic_credentials(client_id: &str, secret: &Secret) -> HeaderValue {
    use base64::Engine;
    let id: String = url::form_urlencoded::byte_serialize(client_id.as_bytes()).collect();
    let pw: String = url::form_urlencoded::byte_serialize(secret.expose().as_bytes()).collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{id}:{pw}"));
    let mut v = HeaderValue::from_str(&format!("Basic {encoded}"))
        .unwrap_or_else(|_| HeaderValue::from_static("Basic"));
    v.set_sensitive(true);
    v
}

/// An OAuth error response body (RFC 6749 §5.2).
#[derive(Debug, Deserialize)]
pub(crate) struct OAuthErrorBody {
    pub(crate) error: String,
    #[serde(default)]
    pub(crate) error_description: Option<String>,
}

pub(crate) fn oauth_error(body: &[u8]) -> Option<OAuthErrorBody> {
    serde_json::from_slice(body).ok()
}

/// A token response (RFC 6749 §5.1, RFC 8693 §2.2.1) as received.
#[derive(Deserialize)]
pub(crate) struct RawTokenResponse {
    access_token: Secret,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default, deserialize_with = "lenient_seconds")]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<Secret>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    pub(crate) issued_token_type: Option<String>,
}

impl RawTokenResponse {
    /// The token set; `asked` are the scopes requested, kept if the server
    /// did not say which it granted.
    pub(crate) fn into_token_set(self, asked: &[String], timing: &RefreshTiming) -> TokenSet {
        let scopes = match self.scope {
            Some(s) => s.split_ascii_whitespace().map(str::to_owned).collect(),
            None => asked.to_vec(),
        };
        TokenSet::new(
            self.access_token,
            TokenType::parse(self.token_type.as_deref().unwrap_or("Bearer")),
            self.refresh_token,
            self.expires_in.map(std::time::Duration::from_secs),
            scopes,
            timing,
        )
    }

    /// The token itself (an ID-JAG from a token exchange).
    pub(crate) fn access_token(&self) -> &Secret {
        &self.access_token
    }
}

/// Some servers send `expires_in` as a string.
fn lenient_seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum N {
        U(u64),
        F(f64),
        S(String),
    }
    Ok(match Option::<N>::deserialize(d)? {
        Some(N::U(n)) => Some(n),
        Some(N::F(f)) if f >= 0.0 => Some(f as u64),
        Some(N::S(s)) => s.trim().parse().ok(),
        _ => None,
    })
}

/// Reads a token endpoint answer: a token response on success, the OAuth
/// error otherwise.
pub(crate) fn read_token_response(resp: &Response<Bytes>) -> Result<RawTokenResponse, AuthError> {
    if resp.status().is_success() {
        return serde_json::from_slice(resp.body())
            .map_err(|e| AuthError::invalid("token response", e));
    }
    Err(refusal(resp.status().as_u16(), resp.body()))
}

fn refusal(status: u16, body: &[u8]) -> AuthError {
    match oauth_error(body) {
        Some(e) => AuthError::TokenRefused {
            status: Some(status),
            error: e.error,
            description: e.error_description,
        },
        None => AuthError::TokenRefused {
            status: Some(status),
            error: format!("HTTP {status}"),
            description: None,
        },
    }
}

/// What `oauth2` returned, as ours.
pub(crate) fn from_oauth2(
    result: Result<
        oauth2::basic::BasicTokenResponse,
        oauth2::basic::BasicRequestTokenError<FetchError>,
    >,
    endpoint: &str,
    asked: &[String],
    timing: &RefreshTiming,
) -> Result<TokenSet, AuthError> {
    match result {
        Ok(t) => {
            let scopes = match t.scopes() {
                Some(s) => s.iter().map(|s| s.to_string()).collect(),
                None => asked.to_vec(),
            };
            Ok(TokenSet::new(
                Secret::new(t.access_token().secret().clone()),
                TokenType::parse(t.token_type().as_ref()),
                t.refresh_token().map(|r| Secret::new(r.secret().clone())),
                t.expires_in(),
                scopes,
                timing,
            ))
        }
        Err(oauth2::RequestTokenError::ServerResponse(e)) => Err(AuthError::TokenRefused {
            status: None,
            error: e.error().as_ref().to_owned(),
            description: e.error_description().cloned(),
        }),
        Err(oauth2::RequestTokenError::Request(e)) => Err(AuthError::fetch(endpoint, e)),
        Err(oauth2::RequestTokenError::Parse(e, _body)) => {
            Err(AuthError::invalid("token response", e))
        }
        Err(oauth2::RequestTokenError::Other(msg)) => {
            Err(AuthError::invalid("token response", msg))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_responses_are_read_leniently_and_errors_typed() {
        let ok = Response::new(Bytes::from_static(
            br#"{"access_token":"A","token_type":"bearer","expires_in":"3600","scope":"a b","x":1}"#,
        ));
        let t = read_token_response(&ok)
            .unwrap()
            .into_token_set(&[], &RefreshTiming::default());
        assert_eq!(t.token_type, TokenType::Bearer);
        assert_eq!(t.scopes, ["a", "b"]);
        assert!(t.expires_at.is_some());
        let mut bad = Response::new(Bytes::from_static(
            br#"{"error":"invalid_grant","error_description":"expired"}"#,
        ));
        *bad.status_mut() = http::StatusCode::BAD_REQUEST;
        match read_token_response(&bad) {
            Err(AuthError::TokenRefused {
                status,
                error,
                description,
            }) => {
                assert_eq!(
                    (status, error.as_str(), description.as_deref()),
                    (Some(400), "invalid_grant", Some("expired"))
                );
            }
            other => panic!("{:?}", other.err()),
        }
        let mut html = Response::new(Bytes::from_static(b"<html>"));
        *html.status_mut() = http::StatusCode::BAD_GATEWAY;
        assert!(matches!(
            read_token_response(&html),
            Err(AuthError::TokenRefused {
                status: Some(502),
                ..
            })
        ));
    }

    #[test]
    fn expires_in_is_read_from_integers_floats_and_strings_but_never_negative() {
        let read = |v: &str| {
            let body = format!(r#"{{"access_token":"A","expires_in":{v}}}"#);
            serde_json::from_str::<RawTokenResponse>(&body)
                .unwrap()
                .expires_in
        };
        assert_eq!(read("3600"), Some(3600));
        // Above 2^53 an f64 is not exact: an integer stays one.
        assert_eq!(read("9007199254740993"), Some(9_007_199_254_740_993));
        assert_eq!(read("3600.9"), Some(3600));
        assert_eq!(read("0.0"), Some(0));
        assert_eq!(read("-1.5"), None);
        assert_eq!(read("\" 60 \""), Some(60));
        assert_eq!(read("\"soon\""), None);
        assert_eq!(read("null"), None);
    }

    #[test]
    fn basic_credentials_encode_each_part_first() {
        let v = basic_credentials("a:b", &Secret::new("p w"));
        assert!(v.is_sensitive());
        // base64("a%3Ab:p+w")
        assert_eq!(v.to_str().unwrap(), "Basic YSUzQWI6cCt3");
    }
}
