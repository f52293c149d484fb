//! The authorization code flow with PKCE (S256 only): build the request
//! (state, code challenge, scope, RFC 8707 `resource`), let the redirect
//! step bring the response back, validate it (`state`, then RFC 9207 `iss`,
//! then `error`), and exchange the code.

use oauth2::{AuthUrl, AuthorizationCode, CsrfToken, PkceCodeChallenge, RedirectUrl, Scope};

use crate::error::AuthError;
use crate::grants::{assertion_params, basic_client_id, token_client};
use crate::metadata::AuthorizationServerMetadata;
use crate::oauth_http::{OAuthHttp, from_oauth2};
use crate::redirect::{AuthorizationResponse, PendingRedirect};
use crate::registration::ClientIdentity;
use crate::token::{RefreshTiming, TokenSet};
use crate::url_rules::secure_url;

/// What one authorization code flow needs.
pub(crate) struct CodeRequest<'a> {
    pub(crate) meta: &'a AuthorizationServerMetadata,
    /// Whether `meta` was made up from the 2025-03-26 default endpoints (no
    /// PKCE advertisement to check).
    pub(crate) defaulted: bool,
    pub(crate) identity: &'a ClientIdentity,
    pub(crate) resource: &'a str,
    pub(crate) scopes: &'a [String],
    pub(crate) timeout: std::time::Duration,
    pub(crate) timing: &'a RefreshTiming,
}

/// Runs the flow through `pending` and returns the tokens.
pub(crate) async fn authorize(
    req: CodeRequest<'_>,
    pending: Box<dyn PendingRedirect>,
    http: &OAuthHttp<'_>,
) -> Result<TokenSet, AuthError> {
    let meta = req.meta;
    if !req.defaulted && !meta.supports_pkce_s256() {
        return Err(AuthError::PkceUnsupported {
            issuer: meta.issuer.clone(),
        });
    }
    let auth_endpoint = meta.authorization_endpoint.as_deref().ok_or_else(|| {
        AuthError::invalid("authorization server metadata", "no authorization_endpoint")
    })?;
    let token_endpoint = meta
        .token_endpoint
        .as_deref()
        .ok_or_else(|| AuthError::invalid("authorization server metadata", "no token_endpoint"))?;
    let auth_url = AuthUrl::from_url(secure_url("authorization endpoint", auth_endpoint)?);
    let redirect_uri = RedirectUrl::new(pending.redirect_uri().to_owned())
        .map_err(|e| AuthError::Config(format!("unusable redirect URI: {e}")))?;
    let client = token_client(req.identity, token_endpoint)?
        .set_auth_uri(auth_url)
        .set_redirect_uri(redirect_uri);

    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = client
        .authorize_url(CsrfToken::new_random)
        .add_scopes(req.scopes.iter().map(|s| Scope::new(s.clone())))
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", req.resource.to_owned())
        .url();
    tracing::debug!(issuer = %meta.issuer, scope = %req.scopes.join(" "), "authorization request");

    let redirected = tokio::time::timeout(req.timeout, pending.finish(url))
        .await
        .map_err(|_| AuthError::Timeout {
            what: "waiting for the authorization redirect",
        })??;
    let response = AuthorizationResponse::parse(&redirected);
    let code = validate(&response, state.secret(), meta)?;

    let mut exchange = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .add_extra_param("resource", req.resource.to_owned());
    if let Some((k, v)) = basic_client_id(req.identity) {
        exchange = exchange.add_extra_param(k, v);
    }
    if let Some(params) = assertion_params(req.identity, &meta.issuer)? {
        for (k, v) in params {
            exchange = exchange.add_extra_param(k, v);
        }
    }
    from_oauth2(
        exchange.request_async(http).await,
        token_endpoint,
        req.scopes,
        req.timing,
    )
}

/// Checks an authorization response and returns its code: `state` first
/// (a response to another request is discarded unread), then `iss` (RFC
/// 9207 §2.4 with the MCP table: compared by simple string comparison when
/// present, required when advertised), and only then `error`.
pub(crate) fn validate(
    response: &AuthorizationResponse,
    state: &str,
    meta: &AuthorizationServerMetadata,
) -> Result<String, AuthError> {
    if response.state.as_deref() != Some(state) {
        return Err(AuthError::StateMismatch);
    }
    let advertised = meta.authorization_response_iss_parameter_supported == Some(true);
    match &response.iss {
        Some(iss) if iss != &meta.issuer => {
            return Err(AuthError::IssuerParameter {
                expected: meta.issuer.clone(),
                found: Some(iss.clone()),
            });
        }
        None if advertised => {
            return Err(AuthError::IssuerParameter {
                expected: meta.issuer.clone(),
                found: None,
            });
        }
        _ => {}
    }
    if let Some(error) = &response.error {
        return Err(AuthError::AuthorizationDenied {
            error: error.clone(),
            description: response.error_description.clone(),
        });
    }
    response.code.clone().ok_or(AuthError::MissingCode)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(advertised: Option<bool>) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: "http://localhost:9000".into(),
            authorization_response_iss_parameter_supported: advertised,
            ..Default::default()
        }
    }

    fn resp(state: Option<&str>, iss: Option<&str>, error: Option<&str>) -> AuthorizationResponse {
        AuthorizationResponse {
            code: Some("c".into()),
            state: state.map(Into::into),
            iss: iss.map(Into::into),
            error: error.map(Into::into),
            error_description: None,
        }
    }

    #[test]
    fn the_iss_table_of_the_specification() {
        let iss = Some("http://localhost:9000");
        // advertised + present and equal: proceed.
        assert_eq!(
            validate(&resp(Some("s"), iss, None), "s", &meta(Some(true))).unwrap(),
            "c"
        );
        // advertised + absent: reject.
        assert!(matches!(
            validate(&resp(Some("s"), None, None), "s", &meta(Some(true))),
            Err(AuthError::IssuerParameter { found: None, .. })
        ));
        // not advertised + present and different: reject.
        assert!(matches!(
            validate(
                &resp(Some("s"), Some("https://evil.example.com"), None),
                "s",
                &meta(None)
            ),
            Err(AuthError::IssuerParameter { .. })
        ));
        // not advertised + absent: proceed.
        assert_eq!(
            validate(&resp(Some("s"), None, None), "s", &meta(Some(false))).unwrap(),
            "c"
        );
        // Simple string comparison: a trailing slash is a different issuer.
        assert!(
            validate(
                &resp(Some("s"), Some("http://localhost:9000/"), None),
                "s",
                &meta(Some(true))
            )
            .is_err()
        );
    }

    #[test]
    fn state_is_checked_first_and_errors_only_after_iss() {
        assert!(matches!(
            validate(&resp(Some("other"), None, None), "s", &meta(None)),
            Err(AuthError::StateMismatch)
        ));
        assert!(matches!(
            validate(&resp(None, None, None), "s", &meta(None)),
            Err(AuthError::StateMismatch)
        ));
        // An error from a mismatched issuer is not acted on.
        assert!(matches!(
            validate(
                &resp(Some("s"), Some("https://evil"), Some("access_denied")),
                "s",
                &meta(None)
            ),
            Err(AuthError::IssuerParameter { .. })
        ));
        assert!(matches!(
            validate(
                &resp(Some("s"), None, Some("access_denied")),
                "s",
                &meta(None)
            ),
            Err(AuthError::AuthorizationDenied { .. })
        ));
    }
}
