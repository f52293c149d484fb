//! [`OAuth`]: the [`Authorizer`] for OAuth-protected MCP servers. It keeps
//! one authorization (the authorization server it is bound to, the client
//! registered there, the tokens), renews it before it expires, and on a
//! challenge refreshes, authorizes, steps up or applies a DPoP nonce.
//!
//! Concurrency: the state sits behind a plain mutex that is never held
//! across an `await`; every acquisition (discovery, registration, a grant, a
//! refresh) runs under one async "flight" lock, so concurrent requests that
//! meet the same expired token cause one refresh, and the others reuse its
//! result (they compare the generation of the credentials they sent).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use futures_util::future::BoxFuture;
use http::{HeaderValue, Method, StatusCode, Uri};
use url::Url;

use crate::authorizer::{AuthHeaders, AuthRound, Authorizer, Challenged};
use crate::config::{Grant, OAuthConfig};
use crate::discovery::{AuthServer, discover_issuer, discover_resource};
use crate::dpop::{DpopKey, Nonces, origin_of};
use crate::error::AuthError;
use crate::fetch::{Fetcher, HttpFetch};
use crate::grants;
use crate::oauth_http::OAuthHttp;
use crate::obtain;
use crate::registration::{self, ClientIdentity, IdentityOrigin};
use crate::store::{StoredAuth, StoredClient, renewed_elsewhere};
use crate::token::{TokenSet, TokenType};
use crate::url_rules::{canonical_resource, htu, require_secure, same_origin_uri};
use crate::www_authenticate::{Challenge, pick};

/// An [`Authorizer`] that obtains and renews OAuth tokens for one MCP
/// server, as [`OAuthConfig`] says. Cheap to clone (clones share the
/// authorization).
#[derive(Clone)]
pub struct OAuth {
    inner: Arc<Inner>,
}

struct Inner {
    server: Url,
    key: String,
    config: OAuthConfig,
    fetcher: Fetcher,
    nonces: Nonces,
    state: Mutex<State>,
    flight: tokio::sync::Mutex<()>,
}

/// The authorization server the client is bound to.
#[derive(Clone)]
struct Binding {
    issuer: String,
    /// The RFC 8707 `resource` value.
    resource: String,
    /// The server's metadata, once discovered in this process.
    server: Option<AuthServer>,
}

#[derive(Default)]
struct State {
    loaded: bool,
    generation: u64,
    binding: Option<Binding>,
    tokens: Option<TokenSet>,
    client: Option<StoredClient>,
    dpop_key: Option<Arc<DpopKey>>,
    /// The scopes last asked for.
    asked: Vec<String>,
    /// Entries of the store for this server, by issuer (other issuers'
    /// entries are kept for a migration back).
    stored: Vec<StoredAuth>,
    /// The issuer a pre-registered client was first used with.
    pre_registered_issuer: Option<String>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state();
        f.debug_struct("OAuth")
            .field("server", &self.inner.server.as_str())
            .field("issuer", &st.binding.as_ref().map(|b| b.issuer.clone()))
            .field("authorized", &st.tokens.is_some())
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// What an acquisition is for.
enum Purpose {
    /// A first authorization, or a new one after a refusal.
    Fresh {
        challenge_scope: Option<Vec<String>>,
    },
    /// More scope (`insufficient_scope`).
    StepUp { scopes: Vec<String> },
}

fn union(a: &[String], b: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = a.to_vec();
    for s in b {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

impl OAuth {
    /// An authorizer for the MCP server at `server`, making its own
    /// requests through `fetch`. A server whose URL is not `https` (or
    /// `http` on a loopback address) is never authorized: its `401` fails
    /// with [`AuthError::InsecureUrl`], so tokens are never sent in the
    /// clear (and a plain-`http` server that needs no authorization still
    /// works).
    pub fn new(
        server: &str,
        config: OAuthConfig,
        fetch: Arc<dyn HttpFetch>,
    ) -> Result<Self, AuthError> {
        let url = Url::parse(server)
            .map_err(|e| AuthError::Config(format!("unusable server URL {server:?}: {e}")))?;
        let key = canonical_resource(&url);
        // A server written as a non-public address (or `localhost`) is a
        // local deployment: the servers it names may be local too.
        let local = url
            .host_str()
            .is_some_and(crate::address::is_non_public_host);
        let fetcher = Fetcher::new(fetch, config.request_timeout)
            .guarded(!local && !config.allow_private_addresses);
        Ok(Self {
            inner: Arc::new(Inner {
                server: url,
                key,
                config,
                fetcher,
                nonces: Nonces::default(),
                state: Mutex::new(State::default()),
                flight: tokio::sync::Mutex::new(()),
            }),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn config(&self) -> &OAuthConfig {
        &self.inner.config
    }

    /// The current tokens, if any (for diagnostics; the values stay
    /// redacted in `Debug`).
    pub fn tokens(&self) -> Option<TokenSet> {
        self.state().tokens.clone()
    }

    /// The issuer of the authorization server in use, once known.
    pub fn issuer(&self) -> Option<String> {
        self.state().binding.as_ref().map(|b| b.issuer.clone())
    }

    /// Authorizes now, without waiting for the server to ask (a "log in"
    /// command). Discovery starts from the well-known URLs.
    pub async fn authorize(&self) -> Result<(), AuthError> {
        self.ensure_loaded().await?;
        let generation = self.state().generation;
        self.acquire(
            Purpose::Fresh {
                challenge_scope: None,
            },
            None,
            generation,
        )
        .await
    }

    /// Takes the flight lock, within a bound: the holder is itself bounded
    /// (the redirect step, and each request).
    async fn flight(&self) -> Result<tokio::sync::MutexGuard<'_, ()>, AuthError> {
        let c = self.config();
        let bound = c.authorization_timeout + c.request_timeout * 8;
        tokio::time::timeout(bound, self.inner.flight.lock())
            .await
            .map_err(|_| AuthError::Timeout {
                what: "waiting for another authorization",
            })
    }

    /// Reads the token store once.
    async fn ensure_loaded(&self) -> Result<(), AuthError> {
        if self.state().loaded {
            return Ok(());
        }
        let _flight = self.flight().await?;
        if self.state().loaded {
            return Ok(());
        }
        let entries = self.config().store.load(&self.inner.key).await?;
        let mut st = self.state();
        st.loaded = true;
        let newest = entries
            .iter()
            .filter(|e| e.tokens.is_some())
            .max_by_key(|e| e.tokens.as_ref().map(|t| t.issued_at))
            .cloned();
        if let Some(e) = newest {
            tracing::debug!(issuer = %e.issuer, "authorization loaded from the token store");
            st.binding = Some(Binding {
                issuer: e.issuer.clone(),
                resource: e.indicator.clone().unwrap_or_else(|| e.resource.clone()),
                server: None,
            });
            st.asked = e
                .tokens
                .as_ref()
                .map(|t| t.scopes.clone())
                .unwrap_or_default();
            st.tokens = e.tokens;
            st.client = e.client;
            st.dpop_key = e
                .dpop_key
                .as_ref()
                .and_then(|k| DpopKey::from_secret(k).ok())
                .map(Arc::new);
            st.generation += 1;
        }
        st.stored = entries;
        Ok(())
    }

    /// Builds the headers for `tokens`.
    fn build(
        &self,
        tokens: &TokenSet,
        generation: u64,
        key: Option<&DpopKey>,
        method: &Method,
        uri: &Uri,
    ) -> Result<AuthHeaders, AuthError> {
        let mut h = AuthHeaders::new(generation);
        let value = format!(
            "{} {}",
            tokens.token_type.scheme(),
            tokens.access_token.expose()
        );
        let value = HeaderValue::from_str(&value).map_err(|_| {
            AuthError::invalid(
                "token response",
                "the access token cannot be a header value",
            )
        })?;
        h.push(http::header::AUTHORIZATION, value);
        if tokens.token_type == TokenType::Dpop {
            let key =
                key.ok_or_else(|| AuthError::Config("a DPoP-bound token without its key".into()))?;
            let nonce = self.inner.nonces.get(&origin_of(uri));
            let proof = key.proof(
                method,
                &htu(uri),
                Some(tokens.access_token.expose()),
                nonce.as_deref(),
            )?;
            let proof = HeaderValue::from_str(&proof).map_err(|e| AuthError::Key {
                what: "DPoP key",
                source: Box::new(e),
            })?;
            h.push(http::header::HeaderName::from_static("dpop"), proof);
        }
        Ok(h)
    }

    async fn headers_for(&self, method: &Method, uri: &Uri) -> Result<AuthHeaders, AuthError> {
        // The common case of a server that needs no authorization: one
        // lock, nothing allocated.
        {
            let st = self.state();
            if st.loaded && st.tokens.is_none() {
                return Ok(AuthHeaders::none());
            }
        }
        if !same_origin_uri(&self.inner.server, uri) {
            tracing::debug!("no credentials for a request to another origin");
            return Ok(AuthHeaders::none());
        }
        self.ensure_loaded().await?;
        let (tokens, generation, key) = {
            let st = self.state();
            (st.tokens.clone(), st.generation, st.dpop_key.clone())
        };
        let Some(tokens) = tokens else {
            return Ok(AuthHeaders::none());
        };
        let now = SystemTime::now();
        if self.config().timing.due(&tokens, now) && self.can_renew(&tokens) {
            // A token still valid is used as is while another flight (an
            // authorization in a browser, say) holds the lock; an expired
            // one waits for it.
            let renewed = if tokens.is_expired(now) {
                self.renew(generation).await
            } else {
                match self.inner.flight.try_lock() {
                    Ok(flight) => self.renew_locked(generation, flight).await,
                    Err(_) => Ok(()),
                }
            };
            if let Err(e) = renewed {
                tracing::warn!(error = %e, "token renewal failed");
            }
            let st = self.state();
            match &st.tokens {
                Some(t) if !t.is_expired(SystemTime::now()) => {
                    return self.build(t, st.generation, st.dpop_key.as_deref(), method, uri);
                }
                _ => return Ok(AuthHeaders::none()),
            }
        }
        self.build(&tokens, generation, key.as_deref(), method, uri)
    }

    /// Renews the tokens of `generation` without a person: a refresh, or the
    /// grant again for the grants that need nobody.
    async fn renew(&self, generation: u64) -> Result<(), AuthError> {
        let flight = self.flight().await?;
        self.renew_locked(generation, flight).await
    }

    /// Whether `tokens` can be renewed without a person.
    fn can_renew(&self, tokens: &TokenSet) -> bool {
        tokens.refresh_token.is_some() || !matches!(self.config().grant, Grant::AuthorizationCode)
    }

    async fn renew_locked(
        &self,
        generation: u64,
        _flight: tokio::sync::MutexGuard<'_, ()>,
    ) -> Result<(), AuthError> {
        if self.state().generation != generation {
            return Ok(());
        }
        let has_refresh = self
            .state()
            .tokens
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some());
        if has_refresh {
            return self.refresh_locked().await;
        }
        match self.config().grant {
            Grant::AuthorizationCode => Ok(()),
            _ => self.run_grant_locked().await,
        }
    }

    /// The bound server's metadata, discovered if this process has not yet.
    async fn bound_server(&self) -> Result<(Binding, AuthServer), AuthError> {
        let binding = self
            .state()
            .binding
            .clone()
            .ok_or_else(|| AuthError::Config("no authorization server is known yet".into()))?;
        if let Some(s) = &binding.server {
            return Ok((binding.clone(), s.clone()));
        }
        let server = discover_issuer(&self.inner.fetcher, &binding.issuer, false).await?;
        let mut st = self.state();
        if let Some(b) = st.binding.as_mut().filter(|b| b.issuer == binding.issuer) {
            b.server = Some(server.clone());
        }
        Ok((binding, server))
    }

    /// The identity for token requests other than a first authorization
    /// code flow: the pre-registered client, else the registered one.
    fn known_identity(
        &self,
        meta: &crate::metadata::AuthorizationServerMetadata,
    ) -> Option<ClientIdentity> {
        registration::pre_registered(self.config(), meta).or_else(|| {
            self.state().client.as_ref().map(|c| ClientIdentity {
                client_id: c.client_id.clone(),
                auth: match (c.auth_method.as_str(), &c.client_secret) {
                    ("client_secret_post", Some(s)) => registration::TokenAuth::Post(s.clone()),
                    ("none", _) | (_, None) => registration::TokenAuth::None,
                    (_, Some(s)) => registration::TokenAuth::Basic(s.clone()),
                },
                origin: IdentityOrigin::Stored,
            })
        })
    }

    /// Refreshes under the flight lock.
    async fn refresh_locked(&self) -> Result<(), AuthError> {
        let (binding, server) = self.bound_server().await?;
        let (tokens, key) = {
            let st = self.state();
            (st.tokens.clone(), st.dpop_key.clone())
        };
        let Some(tokens) = tokens else { return Ok(()) };
        let Some(refresh_token) = tokens.refresh_token.clone() else {
            return Ok(());
        };
        // Other processes sharing the store: one refresh at a time, and a
        // refresh another one made is taken instead of spending a refresh
        // token it rotated away.
        let store = &self.config().store;
        let _lock = store.lock(&binding.issuer, &self.inner.key).await?;
        let newer = renewed_elsewhere(&**store, &self.inner.key, &binding.issuer, &tokens).await?;
        if let Some(newer) = newer {
            tracing::debug!(issuer = %binding.issuer, "tokens renewed by another process");
            return self
                .commit(&binding, server.clone(), newer, None, key)
                .await;
        }
        let meta = &server.metadata;
        let identity = self
            .known_identity(meta)
            .ok_or_else(|| AuthError::Config("no client identity to refresh with".into()))?;
        let token_endpoint = meta.token_endpoint.clone().ok_or_else(|| {
            AuthError::invalid("authorization server metadata", "no token_endpoint")
        })?;
        let dpop = key
            .as_deref()
            .filter(|_| tokens.token_type == TokenType::Dpop)
            .map(|k| (k, &self.inner.nonces));
        let http = OAuthHttp::new(&self.inner.fetcher, dpop);
        let ep = grants::Endpoint {
            http: &http,
            issuer: &meta.issuer,
            url: &token_endpoint,
            resource: &binding.resource,
            timing: &self.config().timing,
        };
        let send_scope = self.config().scope_on_refresh;
        let result =
            grants::refresh(&ep, &identity, &refresh_token, &tokens.scopes, send_scope).await;
        match result {
            Ok(newer) => {
                tracing::debug!(issuer = %binding.issuer, "tokens refreshed");
                let merged = tokens.refreshed(newer);
                self.commit(&binding, server.clone(), merged, None, key)
                    .await
            }
            Err(e) => {
                // A refused refresh token is spent: forget it, so the next
                // challenge authorizes afresh instead of retrying it.
                if matches!(e, AuthError::TokenRefused { .. }) {
                    let mut st = self.state();
                    if let Some(t) = st.tokens.as_mut() {
                        t.refresh_token = None;
                    }
                }
                Err(e)
            }
        }
    }

    /// Records new tokens (and the client they came with) and saves them.
    async fn commit(
        &self,
        binding: &Binding,
        server: AuthServer,
        tokens: TokenSet,
        identity: Option<&ClientIdentity>,
        key: Option<Arc<DpopKey>>,
    ) -> Result<(), AuthError> {
        let entry = {
            let mut st = self.state();
            st.binding = Some(Binding {
                server: Some(server),
                ..binding.clone()
            });
            if let Some(id) = identity {
                if let Some(c) = id.to_stored() {
                    st.client = Some(c);
                }
                if id.origin == IdentityOrigin::PreRegistered {
                    st.pre_registered_issuer
                        .get_or_insert_with(|| binding.issuer.clone());
                }
            }
            st.asked = union(&st.asked, tokens.scopes.iter().cloned());
            st.tokens = Some(tokens);
            st.dpop_key = key;
            st.generation += 1;
            let mut entry = StoredAuth::new(binding.issuer.clone(), self.inner.key.clone());
            if binding.resource != self.inner.key {
                entry.indicator = Some(binding.resource.clone());
            }
            entry.client = st.client.clone();
            entry.tokens = st.tokens.clone();
            entry.dpop_key = st.dpop_key.as_ref().map(|k| k.to_secret());
            st.stored.retain(|e| e.issuer != binding.issuer);
            st.stored.push(entry.clone());
            entry
        };
        self.config().store.save(&entry).await
    }

    /// Discovery, binding (and migration), then the grant, under the
    /// flight lock. `sent` is the generation the challenged request used.
    async fn acquire(
        &self,
        purpose: Purpose,
        hint: Option<&str>,
        sent: u64,
    ) -> Result<(), AuthError> {
        let _flight = self.flight().await?;
        {
            let st = self.state();
            if st.generation != sent && st.tokens.is_some() {
                let satisfied = match &purpose {
                    Purpose::Fresh { .. } => true,
                    Purpose::StepUp { scopes } => st
                        .tokens
                        .as_ref()
                        .is_some_and(|t| scopes.iter().all(|s| t.scopes.contains(s))),
                };
                if satisfied {
                    return Ok(());
                }
            }
        }
        let info = discover_resource(&self.inner.fetcher, &self.inner.server, hint).await?;
        let issuer = match &self.config().client_issuer {
            Some(pinned) if info.authorization_servers.contains(pinned) => pinned.clone(),
            _ => info.authorization_servers[0].clone(),
        };
        self.bind(&issuer)?;
        let server = discover_issuer(&self.inner.fetcher, &issuer, info.legacy).await?;
        let scopes = {
            let st = self.state();
            match purpose {
                Purpose::Fresh { challenge_scope } => {
                    let base = challenge_scope
                        .filter(|s| !s.is_empty())
                        .or_else(|| (!st.asked.is_empty()).then(|| st.asked.clone()))
                        .or_else(|| info.scopes_supported.clone())
                        .unwrap_or_default();
                    union(&st.asked, base)
                }
                Purpose::StepUp { scopes } => scopes,
            }
        };
        let binding = Binding {
            issuer,
            resource: info.resource.clone(),
            server: Some(server.clone()),
        };
        self.run_grant_with(&binding, &server, scopes).await
    }

    /// Binds to `issuer`; a different issuer than before is a migration:
    /// the old client and tokens are dropped here (kept in the store for
    /// that issuer) and never sent to the new server.
    fn bind(&self, issuer: &str) -> Result<(), AuthError> {
        let config = self.config();
        let uses_pre_registered = config.client_id.is_some();
        if uses_pre_registered
            && let Some(pinned) = &config.client_issuer
            && pinned != issuer
        {
            return Err(AuthError::CredentialsBoundElsewhere {
                registered: pinned.clone(),
                current: issuer.to_owned(),
            });
        }
        let mut st = self.state();
        if uses_pre_registered
            && st
                .pre_registered_issuer
                .as_deref()
                .is_some_and(|i| i != issuer)
        {
            return Err(AuthError::CredentialsBoundElsewhere {
                registered: st.pre_registered_issuer.clone().unwrap_or_default(),
                current: issuer.to_owned(),
            });
        }
        let changed = st.binding.as_ref().is_some_and(|b| b.issuer != issuer);
        if changed || st.binding.is_none() {
            if changed {
                tracing::info!(
                    from = %st.binding.as_ref().map(|b| b.issuer.as_str()).unwrap_or(""),
                    to = %issuer,
                    "the server names another authorization server; registering there"
                );
            }
            let previous = st.stored.iter().find(|e| e.issuer == issuer).cloned();
            st.tokens = None;
            st.dpop_key = None;
            st.client = previous.as_ref().and_then(|e| e.client.clone());
            if changed {
                st.asked.clear();
            }
            st.binding = Some(Binding {
                issuer: issuer.to_owned(),
                resource: String::new(),
                server: None,
            });
            st.generation += 1;
        }
        Ok(())
    }

    /// The grant of the configuration against the bound server (used for a
    /// renewal of a grant that needs no person).
    async fn run_grant_locked(&self) -> Result<(), AuthError> {
        let (binding, server) = self.bound_server().await?;
        let scopes = self.state().asked.clone();
        self.run_grant_with(&binding, &server, scopes).await
    }

    async fn run_grant_with(
        &self,
        binding: &Binding,
        server: &AuthServer,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        let (dpop_key, stored_client) = {
            let st = self.state();
            (st.dpop_key.clone(), st.client.clone())
        };
        let got = obtain::obtain(
            obtain::Obtain {
                config: self.config(),
                fetcher: &self.inner.fetcher,
                nonces: &self.inner.nonces,
                server,
                resource: &binding.resource,
                dpop_key,
                stored_client,
            },
            scopes,
        )
        .await?;
        tracing::debug!(issuer = %server.metadata.issuer, scope = %got.tokens.scopes.join(" "), "authorized");
        {
            let mut st = self.state();
            st.asked = union(&st.asked, got.asked);
        }
        self.commit(
            binding,
            server.clone(),
            got.tokens,
            Some(&got.identity),
            got.key,
        )
        .await
    }

    async fn on_challenge(
        &self,
        answer: Challenged<'_>,
        round: &mut AuthRound,
    ) -> Result<(), AuthError> {
        require_secure("MCP server", &self.inner.server)?;
        let challenge: Option<Challenge> = pick(answer.challenges).cloned();
        let refuse = |challenge: Option<Challenge>| AuthError::Unauthorized {
            status: answer.status.as_u16(),
            challenge,
        };
        // A DPoP nonce (RFC 9449 §9): retry with it.
        if challenge
            .as_ref()
            .is_some_and(|c| c.error() == Some("use_dpop_nonce"))
        {
            if let Some(nonce) = answer.dpop_nonce {
                self.inner.nonces.set(&origin_of(answer.uri), nonce);
                if round.free_retries < 2 {
                    round.free_retries += 1;
                    return Ok(());
                }
            }
            return Err(refuse(challenge));
        }
        // Another request renewed the credentials this one carried.
        {
            let st = self.state();
            if !answer.sent.is_empty()
                && answer.sent.generation() != st.generation
                && st.tokens.is_some()
                && round.free_retries < 2
            {
                round.free_retries += 1;
                return Ok(());
            }
        }
        let hint = challenge
            .as_ref()
            .and_then(|c| c.resource_metadata().map(str::to_owned));
        let challenge_scopes: Vec<String> = challenge
            .as_ref()
            .map(|c| c.scopes().map(str::to_owned).collect())
            .unwrap_or_default();
        let max = self.config().max_authorizations;
        if challenge
            .as_ref()
            .is_some_and(|c| c.error() == Some("insufficient_scope"))
        {
            let held = {
                let st = self.state();
                let granted = st
                    .tokens
                    .as_ref()
                    .map(|t| t.scopes.clone())
                    .unwrap_or_default();
                union(&st.asked, granted)
            };
            let scopes = union(&held, challenge_scopes);
            if round.authorizations >= max {
                return Err(AuthError::StepUpLimit {
                    authorizations: round.authorizations,
                    scope: scopes.join(" "),
                });
            }
            round.authorizations += 1;
            tracing::debug!(scope = %scopes.join(" "), "step-up authorization");
            return self
                .acquire(
                    Purpose::StepUp { scopes },
                    hint.as_deref(),
                    answer.sent.generation(),
                )
                .await;
        }
        if answer.status != StatusCode::UNAUTHORIZED {
            return Err(refuse(challenge));
        }
        // 401: a refresh first when the request carried a token we can
        // refresh, then (or else) one new authorization.
        let can_refresh = !answer.sent.is_empty()
            && self
                .state()
                .tokens
                .as_ref()
                .is_some_and(|t| t.refresh_token.is_some());
        if can_refresh && !round.refreshed {
            round.refreshed = true;
            let refreshed = async {
                let _flight = self.flight().await?;
                if self.state().generation != answer.sent.generation() {
                    return Ok(());
                }
                self.refresh_locked().await
            }
            .await;
            match refreshed {
                Ok(()) => return Ok(()),
                Err(e) => {
                    tracing::debug!(error = %e, "refresh after 401 failed; authorizing again")
                }
            }
        }
        if round.authorizations >= 1 || round.authorizations >= max {
            return Err(refuse(challenge));
        }
        round.authorizations += 1;
        let scope = (!challenge_scopes.is_empty()).then_some(challenge_scopes);
        self.acquire(
            Purpose::Fresh {
                challenge_scope: scope,
            },
            hint.as_deref(),
            answer.sent.generation(),
        )
        .await
    }
}

impl Authorizer for OAuth {
    fn headers<'a>(
        &'a self,
        method: &'a Method,
        uri: &'a Uri,
    ) -> BoxFuture<'a, Result<AuthHeaders, AuthError>> {
        Box::pin(self.headers_for(method, uri))
    }

    fn challenged<'a>(
        &'a self,
        answer: Challenged<'a>,
        round: &'a mut AuthRound,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(self.on_challenge(answer, round))
    }
}
