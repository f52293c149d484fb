//! The token requests: client credentials and refresh through the `oauth2`
//! crate; the JWT bearer grant (RFC 7523 §2.1) and token exchange (RFC 8693)
//! posted by hand (`oauth2` has neither). Every one carries the RFC 8707
//! `resource`, and the client authentication the server advertises.

use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, ClientId, ClientSecret, EndpointNotSet, EndpointSet, RefreshToken, Scope, TokenUrl,
};

use crate::assertion::JWT_ASSERTION_TYPE;
use crate::config::EnterpriseIdp;
use crate::error::AuthError;
use crate::oauth_http::{OAuthHttp, from_oauth2};
use crate::registration::{ClientIdentity, TokenAuth};
use crate::secret::Secret;
use crate::token::{RefreshTiming, TokenSet};
use crate::url_rules::secure_url;

/// The grant type of the JWT bearer grant.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// An `oauth2` client for `identity` at `token_endpoint`.
pub(crate) type TokenClient =
    BasicClient<EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

pub(crate) fn token_client(
    identity: &ClientIdentity,
    token_endpoint: &str,
) -> Result<TokenClient, AuthError> {
    let url = secure_url("token endpoint", token_endpoint)?;
    let client = BasicClient::new(ClientId::new(identity.client_id.clone()))
        .set_token_uri(TokenUrl::from_url(url));
    Ok(match &identity.auth {
        TokenAuth::None | TokenAuth::PrivateKeyJwt(_) => {
            client.set_auth_type(AuthType::RequestBody)
        }
        TokenAuth::Basic(s) => client
            .set_client_secret(ClientSecret::new(s.expose().to_owned()))
            .set_auth_type(AuthType::BasicAuth),
        TokenAuth::Post(s) => client
            .set_client_secret(ClientSecret::new(s.expose().to_owned()))
            .set_auth_type(AuthType::RequestBody),
    })
}

/// `client_id` in the body beside HTTP Basic (RFC 6749 §3.2.1 allows it;
/// the Python SDK's authorization servers require it), where `oauth2` sends
/// it only in the header.
pub(crate) fn basic_client_id(identity: &ClientIdentity) -> Option<(&'static str, String)> {
    matches!(identity.auth, TokenAuth::Basic(_)).then(|| ("client_id", identity.client_id.clone()))
}

/// The `client_assertion` parameters of a `private_key_jwt` client, its
/// audience the issuer.
pub(crate) fn assertion_params(
    identity: &ClientIdentity,
    issuer: &str,
) -> Result<Option<[(&'static str, String); 2]>, AuthError> {
    match &identity.auth {
        TokenAuth::PrivateKeyJwt(key) => Ok(Some([
            ("client_assertion_type", JWT_ASSERTION_TYPE.to_owned()),
            (
                "client_assertion",
                key.assertion(&identity.client_id, issuer)?,
            ),
        ])),
        _ => Ok(None),
    }
}

/// A token endpoint, and what every request to it carries.
pub(crate) struct Endpoint<'a> {
    pub(crate) http: &'a OAuthHttp<'a>,
    /// The authorization server's issuer (the audience of assertions).
    pub(crate) issuer: &'a str,
    pub(crate) url: &'a str,
    /// The RFC 8707 `resource`.
    pub(crate) resource: &'a str,
    pub(crate) timing: &'a RefreshTiming,
}

fn scopes(list: &[String]) -> impl Iterator<Item = Scope> + '_ {
    list.iter().map(|s| Scope::new(s.clone()))
}

/// The client credentials grant.
pub(crate) async fn client_credentials(
    ep: &Endpoint<'_>,
    identity: &ClientIdentity,
    asked: &[String],
) -> Result<TokenSet, AuthError> {
    let client = token_client(identity, ep.url)?;
    let mut req = client
        .exchange_client_credentials()
        .add_scopes(scopes(asked))
        .add_extra_param("resource", ep.resource.to_owned());
    if let Some((k, v)) = basic_client_id(identity) {
        req = req.add_extra_param(k, v);
    }
    if let Some(params) = assertion_params(identity, ep.issuer)? {
        for (k, v) in params {
            req = req.add_extra_param(k, v);
        }
    }
    from_oauth2(req.request_async(ep.http).await, ep.url, asked, ep.timing)
}

/// A refresh (OAuth 2.1 §4.3), with the same `resource`.
pub(crate) async fn refresh(
    ep: &Endpoint<'_>,
    identity: &ClientIdentity,
    refresh_token: &Secret,
    asked: &[String],
    send_scope: bool,
) -> Result<TokenSet, AuthError> {
    let client = token_client(identity, ep.url)?;
    let token = RefreshToken::new(refresh_token.expose().to_owned());
    let mut req = client
        .exchange_refresh_token(&token)
        .add_extra_param("resource", ep.resource.to_owned());
    if send_scope {
        req = req.add_scopes(scopes(asked));
    }
    if let Some((k, v)) = basic_client_id(identity) {
        req = req.add_extra_param(k, v);
    }
    if let Some(params) = assertion_params(identity, ep.issuer)? {
        for (k, v) in params {
            req = req.add_extra_param(k, v);
        }
    }
    from_oauth2(req.request_async(ep.http).await, ep.url, asked, ep.timing)
}

/// The JWT bearer grant with `assertion`. The client authenticates as
/// `identity` says (`client_id` in the body for a public client).
pub(crate) async fn jwt_bearer(
    ep: &Endpoint<'_>,
    identity: Option<&ClientIdentity>,
    assertion: &Secret,
    asked: &[String],
) -> Result<TokenSet, AuthError> {
    secure_url("token endpoint", ep.url)?;
    let scope = asked.join(" ");
    let mut params: Vec<(&str, String)> = vec![
        ("grant_type", JWT_BEARER.to_owned()),
        ("assertion", assertion.expose().to_owned()),
        ("resource", ep.resource.to_owned()),
    ];
    if !scope.is_empty() {
        params.push(("scope", scope));
    }
    let mut basic = None;
    if let Some(id) = identity {
        match &id.auth {
            TokenAuth::None => params.push(("client_id", id.client_id.clone())),
            TokenAuth::Basic(s) => {
                basic = Some((id.client_id.as_str(), s));
                params.push(("client_id", id.client_id.clone()));
            }
            TokenAuth::Post(s) => {
                params.push(("client_id", id.client_id.clone()));
                params.push(("client_secret", s.expose().to_owned()));
            }
            TokenAuth::PrivateKeyJwt(_) => {
                params.push(("client_id", id.client_id.clone()));
                if let Some(a) = assertion_params(id, ep.issuer)? {
                    params.extend(a);
                }
            }
        }
    }
    let borrowed: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let raw = ep.http.post_token_form(ep.url, &borrowed, basic).await?;
    Ok(raw.into_token_set(asked, ep.timing))
}

/// Token exchange at the enterprise identity provider (RFC 8693): the
/// user's ID token for an identity assertion grant (ID-JAG) for the
/// authorization server `audience` and the resource.
pub(crate) async fn exchange_for_id_jag(
    http: &OAuthHttp<'_>,
    idp: &EnterpriseIdp,
    audience: &str,
    resource: &str,
    asked: &[String],
) -> Result<Secret, AuthError> {
    secure_url("identity provider token endpoint", &idp.token_endpoint)?;
    let id_token = idp.id_token.read().await?;
    let scope = asked.join(" ");
    let mut params: Vec<(&str, &str)> = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("requested_token_type", ID_JAG_TYPE),
        ("audience", audience),
        ("resource", resource),
        ("subject_token", id_token.expose()),
        ("subject_token_type", ID_TOKEN_TYPE),
    ];
    if !scope.is_empty() {
        params.push(("scope", &scope));
    }
    let basic = match &idp.client_secret {
        Some(s) => Some((idp.client_id.as_str(), s)),
        None => {
            params.push(("client_id", &idp.client_id));
            None
        }
    };
    let raw = http
        .post_token_form(&idp.token_endpoint, &params, basic)
        .await?;
    if raw
        .issued_token_type
        .as_deref()
        .is_some_and(|t| t != ID_JAG_TYPE)
    {
        return Err(AuthError::invalid(
            "token exchange response",
            format!(
                "issued_token_type is {:?}, not an ID-JAG",
                raw.issued_token_type
            ),
        ));
    }
    Ok(raw.access_token().clone())
}
