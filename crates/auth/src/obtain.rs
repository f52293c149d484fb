//! One run of the configured grant against a discovered authorization
//! server: the DPoP key, the client identity, then the grant itself. No
//! state is kept here; the caller records what comes back.

use std::sync::Arc;

use crate::authcode::{self, CodeRequest};
use crate::config::{DpopMode, Grant, OAuthConfig};
use crate::discovery::AuthServer;
use crate::dpop::{DpopKey, Nonces};
use crate::error::AuthError;
use crate::fetch::Fetcher;
use crate::grants;
use crate::oauth_http::OAuthHttp;
use crate::registration::{self, ClientIdentity, IdentityOrigin, TokenAuth};
use crate::store::StoredClient;
use crate::token::{TokenSet, TokenType};

/// What a grant needs.
pub(crate) struct Obtain<'a> {
    pub(crate) config: &'a OAuthConfig,
    pub(crate) fetcher: &'a Fetcher,
    pub(crate) nonces: &'a Nonces,
    pub(crate) server: &'a AuthServer,
    /// The RFC 8707 `resource`.
    pub(crate) resource: &'a str,
    /// The DPoP key in use with this server, if any.
    pub(crate) dpop_key: Option<Arc<DpopKey>>,
    /// A client registered with this server earlier.
    pub(crate) stored_client: Option<StoredClient>,
}

/// What a grant produced.
pub(crate) struct Obtained {
    pub(crate) tokens: TokenSet,
    pub(crate) identity: ClientIdentity,
    /// The key the tokens are bound to (DPoP tokens only).
    pub(crate) key: Option<Arc<DpopKey>>,
    /// The scopes asked for.
    pub(crate) asked: Vec<String>,
}

/// Runs the grant of `o.config` for `scopes`.
pub(crate) async fn obtain(o: Obtain<'_>, mut scopes: Vec<String>) -> Result<Obtained, AuthError> {
    let config = o.config;
    let server = o.server;
    let meta = &server.metadata;
    let token_endpoint = meta
        .token_endpoint
        .clone()
        .ok_or_else(|| AuthError::invalid("authorization server metadata", "no token_endpoint"))?;
    let key = if config.dpop == DpopMode::Auto && meta.supports_dpop_es256() {
        Some(match o.dpop_key {
            Some(k) => k,
            None => Arc::new(DpopKey::generate()?),
        })
    } else {
        None
    };
    let dpop = key.as_deref().map(|k| (k, o.nonces));
    let http = OAuthHttp::new(o.fetcher, dpop);
    let timing = &config.timing;
    let ep = grants::Endpoint {
        http: &http,
        issuer: &meta.issuer,
        url: &token_endpoint,
        resource: o.resource,
        timing,
    };
    let (tokens, identity) = match &config.grant {
        Grant::AuthorizationCode => {
            if config.offline_access
                && meta.supports_scope("offline_access")
                && !scopes.iter().any(|s| s == "offline_access")
            {
                scopes.push("offline_access".into());
            }
            let pending = config
                .redirect
                .prepare()
                .await
                .map_err(|e| crate::discovery::explain_guess(server, o.resource, e))?;
            let identity = registration::resolve(
                config,
                o.fetcher,
                meta,
                o.stored_client.as_ref(),
                pending.redirect_uri(),
            )
            .await
            .map_err(|e| crate::discovery::explain_guess(server, o.resource, e))?;
            let req = CodeRequest {
                meta,
                defaulted: server.defaulted,
                identity: &identity,
                resource: o.resource,
                scopes: &scopes,
                timeout: config.authorization_timeout,
                timing,
            };
            (authcode::authorize(req, pending, &http).await?, identity)
        }
        Grant::ClientCredentials => {
            let identity = registration::pre_registered(config, meta)
                .ok_or_else(|| AuthError::Config("client credentials need a client ID".into()))?;
            (
                grants::client_credentials(&ep, &identity, &scopes).await?,
                identity,
            )
        }
        Grant::JwtBearer(source) => {
            let identity = registration::pre_registered(config, meta);
            let assertion = source.read().await?;
            let t = grants::jwt_bearer(&ep, identity.as_ref(), &assertion, &scopes).await?;
            let identity = identity.unwrap_or(ClientIdentity {
                client_id: String::new(),
                auth: TokenAuth::None,
                origin: IdentityOrigin::PreRegistered,
            });
            (t, identity)
        }
        Grant::EnterpriseManaged(idp) => {
            let identity = registration::pre_registered(config, meta).ok_or_else(|| {
                AuthError::Config("enterprise-managed authorization needs a client ID".into())
            })?;
            // The identity provider is another server: no DPoP proof bound
            // to this authorization server's key goes there.
            let idp_fetcher = o.fetcher.unguarded();
            let idp_http = OAuthHttp::new(&idp_fetcher, None);
            let id_jag =
                grants::exchange_for_id_jag(&idp_http, idp, &meta.issuer, o.resource, &scopes)
                    .await?;
            (
                grants::jwt_bearer(&ep, Some(&identity), &id_jag, &scopes).await?,
                identity,
            )
        }
    };
    let key = key.filter(|_| tokens.token_type == TokenType::Dpop);
    Ok(Obtained {
        tokens,
        identity,
        key,
        asked: scopes,
    })
}
