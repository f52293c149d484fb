//! Who the client is at an authorization server, in the specification's
//! priority order: pre-registered credentials, a client registered earlier
//! (kept in the token store), a Client ID Metadata Document URL where the
//! server accepts them, dynamic client registration (RFC 7591); else an
//! error naming what is missing.

use bytes::Bytes;
use serde::Deserialize;
use serde_json::json;

use crate::assertion::SigningKey;
use crate::config::{ClientAuth, OAuthConfig};
use crate::error::AuthError;
use crate::fetch::Fetcher;
use crate::metadata::AuthorizationServerMetadata;
use crate::secret::Secret;
use crate::store::StoredClient;
use crate::url_rules::secure_url;

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone)]
pub(crate) enum TokenAuth {
    /// `none`: `client_id` in the body.
    None,
    /// `client_secret_basic`.
    Basic(Secret),
    /// `client_secret_post`.
    Post(Secret),
    /// `private_key_jwt`.
    PrivateKeyJwt(SigningKey),
}

impl TokenAuth {
    pub(crate) fn method(&self) -> &'static str {
        match self {
            TokenAuth::None => "none",
            TokenAuth::Basic(_) => "client_secret_basic",
            TokenAuth::Post(_) => "client_secret_post",
            TokenAuth::PrivateKeyJwt(_) => "private_key_jwt",
        }
    }

    fn from_stored(method: &str, secret: Option<Secret>) -> Self {
        match (method, secret) {
            ("client_secret_post", Some(s)) => TokenAuth::Post(s),
            ("none", _) | (_, None) => TokenAuth::None,
            (_, Some(s)) => TokenAuth::Basic(s),
        }
    }
}

/// The client's identity at one authorization server.
#[derive(Debug, Clone)]
pub(crate) struct ClientIdentity {
    pub(crate) client_id: String,
    pub(crate) auth: TokenAuth,
    /// How it was obtained.
    pub(crate) origin: IdentityOrigin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdentityOrigin {
    PreRegistered,
    Stored,
    MetadataDocument,
    Registered,
}

impl ClientIdentity {
    /// The registration to keep in the token store (registered clients
    /// only: the others come from the configuration each time).
    pub(crate) fn to_stored(&self) -> Option<StoredClient> {
        if self.origin != IdentityOrigin::Registered && self.origin != IdentityOrigin::Stored {
            return None;
        }
        let secret = match &self.auth {
            TokenAuth::Basic(s) | TokenAuth::Post(s) => Some(s.clone()),
            _ => None,
        };
        Some(StoredClient::new(
            self.client_id.clone(),
            secret,
            self.auth.method(),
        ))
    }
}

/// The pre-registered identity of the configuration, if any, with the
/// secret sent the way `meta` advertises.
pub(crate) fn pre_registered(
    config: &OAuthConfig,
    meta: &AuthorizationServerMetadata,
) -> Option<ClientIdentity> {
    let client_id = config.client_id.clone()?;
    let auth = match &config.client_auth {
        ClientAuth::None => TokenAuth::None,
        ClientAuth::PrivateKeyJwt(k) => TokenAuth::PrivateKeyJwt(k.clone()),
        ClientAuth::Secret(s) => {
            if !meta.supports_auth_method("client_secret_basic")
                && meta.supports_auth_method("client_secret_post")
            {
                TokenAuth::Post(s.clone())
            } else {
                TokenAuth::Basic(s.clone())
            }
        }
    };
    Some(ClientIdentity {
        client_id,
        auth,
        origin: IdentityOrigin::PreRegistered,
    })
}

/// The identity to use at the server described by `meta` for the
/// authorization code flow. `stored` is a client registered there earlier;
/// `redirect_uri` is registered with a new client.
pub(crate) async fn resolve(
    config: &OAuthConfig,
    fetcher: &Fetcher,
    meta: &AuthorizationServerMetadata,
    stored: Option<&StoredClient>,
    redirect_uri: &str,
) -> Result<ClientIdentity, AuthError> {
    if let Some(id) = pre_registered(config, meta) {
        return Ok(id);
    }
    if let Some(s) = stored {
        return Ok(ClientIdentity {
            client_id: s.client_id.clone(),
            auth: TokenAuth::from_stored(&s.auth_method, s.client_secret.clone()),
            origin: IdentityOrigin::Stored,
        });
    }
    if let Some(url) = config
        .client_metadata_url
        .as_ref()
        .filter(|_| meta.client_id_metadata_document_supported == Some(true))
    {
        return Ok(ClientIdentity {
            client_id: url.clone(),
            auth: TokenAuth::None,
            origin: IdentityOrigin::MetadataDocument,
        });
    }
    if let Some(endpoint) = &meta.registration_endpoint {
        return register(config, fetcher, meta, endpoint, redirect_uri).await;
    }
    let missing = if config.client_metadata_url.is_some() {
        "it offers no registration_endpoint and does not accept client ID metadata documents"
    } else {
        "it offers no registration_endpoint, and no client ID metadata document URL is configured"
    };
    Err(AuthError::NoClientRegistration {
        issuer: meta.issuer.clone(),
        missing: missing.into(),
    })
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<Secret>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Dynamic client registration (RFC 7591 §3).
async fn register(
    config: &OAuthConfig,
    fetcher: &Fetcher,
    meta: &AuthorizationServerMetadata,
    endpoint: &str,
    redirect_uri: &str,
) -> Result<ClientIdentity, AuthError> {
    secure_url("registration endpoint", endpoint)?;
    // A public client where the server allows it; otherwise a secret sent
    // the way the server prefers.
    let asked = ["none", "client_secret_basic", "client_secret_post"]
        .into_iter()
        .find(|m| meta.supports_auth_method(m))
        .unwrap_or("client_secret_basic");
    let body = json!({
        "client_name": config.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": asked,
        "application_type": config.application_type.as_str(),
    });
    let req = http::Request::post(endpoint)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(Bytes::from(body.to_string()))
        .map_err(|e| {
            AuthError::Config(format!("unusable registration endpoint {endpoint:?}: {e}"))
        })?;
    let resp = fetcher.send(req).await?;
    if !resp.status().is_success() {
        return Err(AuthError::RegistrationRefused {
            endpoint: endpoint.to_owned(),
            status: resp.status().as_u16(),
            error: crate::oauth_http::oauth_error(resp.body()).map(|e| e.error),
        });
    }
    let reg: RegistrationResponse = serde_json::from_slice(resp.body())
        .map_err(|e| AuthError::invalid("client registration response", e))?;
    let method = match (&reg.token_endpoint_auth_method, &reg.client_secret) {
        (Some(m), _) => m.clone(),
        (None, Some(_)) if asked != "none" => asked.to_owned(),
        (None, Some(_)) => "client_secret_basic".to_owned(),
        (None, None) => "none".to_owned(),
    };
    tracing::debug!(endpoint, client_id = %reg.client_id, method = %method, "client registered");
    Ok(ClientIdentity {
        client_id: reg.client_id,
        auth: TokenAuth::from_stored(&method, reg.client_secret),
        origin: IdentityOrigin::Registered,
    })
}
