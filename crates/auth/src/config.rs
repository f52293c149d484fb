//! [`OAuthConfig`]: how an [`OAuth`](crate::OAuth) authorizer obtains
//! tokens: the grant, the client's identity, the redirect step, the token
//! store and the timing.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::assertion::SigningKey;
use crate::error::{AuthError, BoxError};
use crate::loopback::DefaultRedirect;
use crate::redirect::RedirectStep;
use crate::secret::Secret;
use crate::store::{MemoryStore, TokenStore};
use crate::token::RefreshTiming;

/// How tokens are obtained.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE: a person authorizes in a browser (or
    /// whatever the [`RedirectStep`] does).
    AuthorizationCode,
    /// Client credentials (RFC 6749 §4.4): the client acts on its own
    /// behalf, authenticated by a secret or a private key.
    ClientCredentials,
    /// The JWT bearer grant (RFC 7523 §2.1) with an assertion from a
    /// workload identity provider (a Kubernetes service account token, a
    /// cloud identity token).
    JwtBearer(AssertionSource),
    /// Enterprise-managed authorization (cross-app access): the user's ID
    /// token is exchanged at the enterprise identity provider for an
    /// identity assertion grant (RFC 8693, an ID-JAG), which the
    /// authorization server takes in a JWT bearer grant (RFC 7523).
    EnterpriseManaged(EnterpriseIdp),
}

type AssertionCallback = dyn Fn() -> BoxFuture<'static, Result<Secret, BoxError>> + Send + Sync;

/// Where an assertion comes from. It is read each time one is needed, so a
/// rotated file or variable is picked up.
#[derive(Clone)]
#[non_exhaustive]
pub enum AssertionSource {
    /// A fixed value.
    Value(Secret),
    /// A file holding it (a projected service account token).
    File(PathBuf),
    /// An environment variable holding it.
    Env(String),
    /// A function producing it.
    Callback(Arc<AssertionCallback>),
}

impl std::fmt::Debug for AssertionSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssertionSource::Value(_) => f.write_str("Value([redacted])"),
            AssertionSource::File(p) => f.debug_tuple("File").field(p).finish(),
            AssertionSource::Env(v) => f.debug_tuple("Env").field(v).finish(),
            AssertionSource::Callback(_) => f.write_str("Callback"),
        }
    }
}

impl AssertionSource {
    /// A source calling `f`.
    pub fn callback<F, Fut>(f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Secret, BoxError>> + Send + 'static,
    {
        AssertionSource::Callback(Arc::new(move || Box::pin(f())))
    }

    /// Reads the assertion now.
    pub async fn read(&self) -> Result<Secret, AuthError> {
        match self {
            AssertionSource::Value(v) => Ok(v.clone()),
            AssertionSource::File(path) => {
                let text = tokio::fs::read_to_string(path).await.map_err(|_| {
                    AuthError::MissingCredential {
                        what: format!("the assertion file {}", path.display()),
                    }
                })?;
                Ok(Secret::new(text.trim().to_owned()))
            }
            AssertionSource::Env(var) => match std::env::var(var) {
                Ok(v) if !v.trim().is_empty() => Ok(Secret::new(v.trim().to_owned())),
                _ => Err(AuthError::MissingCredential {
                    what: format!("environment variable {var}"),
                }),
            },
            AssertionSource::Callback(f) => f().await.map_err(|e| AuthError::Key {
                what: "assertion",
                source: e,
            }),
        }
    }
}

/// The enterprise identity provider of [`Grant::EnterpriseManaged`].
#[derive(Debug, Clone)]
pub struct EnterpriseIdp {
    pub(crate) token_endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<Secret>,
    pub(crate) id_token: AssertionSource,
}

impl EnterpriseIdp {
    /// The identity provider's token endpoint, the client's ID there, and
    /// where the user's ID token comes from.
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: AssertionSource,
    ) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token,
        }
    }

    /// The client's secret at the identity provider (sent with HTTP Basic).
    #[must_use]
    pub fn client_secret(mut self, secret: impl Into<Secret>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
}

/// How the client authenticates at the token endpoint when it is
/// pre-registered.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClientAuth {
    /// A public client: no authentication (`none`).
    None,
    /// A client secret, sent the way the server advertises
    /// (`client_secret_basic` or `client_secret_post`).
    Secret(Secret),
    /// A signed JWT assertion (`private_key_jwt`, RFC 7523 §2.2).
    PrivateKeyJwt(SigningKey),
}

/// Whether DPoP-bound tokens (RFC 9449) are requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DpopMode {
    /// When the authorization server advertises DPoP with ES256 (the
    /// default).
    #[default]
    Auto,
    /// Never: plain bearer tokens.
    Off,
}

/// The OIDC `application_type` sent in dynamic client registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ApplicationType {
    /// Desktop, mobile and command-line programs, and anything redirecting
    /// to a loopback address (the default).
    #[default]
    Native,
    /// Browser-based programs served from a remote host.
    Web,
}

impl ApplicationType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ApplicationType::Native => "native",
            ApplicationType::Web => "web",
        }
    }
}

/// How an [`OAuth`](crate::OAuth) authorizer obtains tokens.
///
/// The default is the authorization code flow with PKCE through the user's
/// browser ([`LoopbackBrowser`](crate::LoopbackBrowser), when a terminal is attached; without one a
/// server that needs a person fails at once with a clear error), dynamic
/// registration (or a Client ID
/// Metadata Document, when one is configured and the server accepts them),
/// tokens kept in memory, DPoP when the server offers it.
#[derive(Clone)]
#[must_use]
pub struct OAuthConfig {
    pub(crate) grant: Grant,
    pub(crate) client_id: Option<String>,
    pub(crate) client_auth: ClientAuth,
    pub(crate) client_issuer: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) application_type: ApplicationType,
    pub(crate) redirect: Arc<dyn RedirectStep>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) dpop: DpopMode,
    pub(crate) timing: RefreshTiming,
    pub(crate) offline_access: bool,
    pub(crate) authorization_timeout: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) max_authorizations: u32,
    pub(crate) allow_private_addresses: bool,
    pub(crate) scope_on_refresh: bool,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("grant", &self.grant)
            .field("client_id", &self.client_id)
            .field("client_auth", &self.client_auth)
            .field("client_issuer", &self.client_issuer)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("client_name", &self.client_name)
            .field("dpop", &self.dpop)
            .field("timing", &self.timing)
            .field("allow_private_addresses", &self.allow_private_addresses)
            .field("scope_on_refresh", &self.scope_on_refresh)
            .finish_non_exhaustive()
    }
}

impl Default for OAuthConfig {
    fn default() -> Self {
        Self {
            grant: Grant::AuthorizationCode,
            client_id: None,
            client_auth: ClientAuth::None,
            client_issuer: None,
            client_metadata_url: None,
            client_name: "mcpwire".into(),
            application_type: ApplicationType::Native,
            redirect: Arc::new(DefaultRedirect::default()),
            store: Arc::new(MemoryStore::new()),
            dpop: DpopMode::Auto,
            timing: RefreshTiming::default(),
            offline_access: true,
            authorization_timeout: Duration::from_secs(300),
            request_timeout: Duration::from_secs(30),
            max_authorizations: 3,
            allow_private_addresses: false,
            scope_on_refresh: false,
        }
    }
}

impl OAuthConfig {
    /// The authorization code flow with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Client credentials with a client secret.
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<Secret>) -> Self {
        Self {
            grant: Grant::ClientCredentials,
            client_id: Some(client_id.into()),
            client_auth: ClientAuth::Secret(secret.into()),
            ..Self::default()
        }
    }

    /// Client credentials with a `private_key_jwt` assertion.
    pub fn private_key_jwt(client_id: impl Into<String>, key: SigningKey) -> Self {
        Self {
            grant: Grant::ClientCredentials,
            client_id: Some(client_id.into()),
            client_auth: ClientAuth::PrivateKeyJwt(key),
            ..Self::default()
        }
    }

    /// The JWT bearer grant with a workload identity assertion; `client_id`
    /// is sent when given.
    pub fn jwt_bearer(client_id: Option<String>, assertion: AssertionSource) -> Self {
        Self {
            grant: Grant::JwtBearer(assertion),
            client_id,
            ..Self::default()
        }
    }

    /// Enterprise-managed authorization: `client_id` and `secret` at the
    /// authorization server, `idp` for the token exchange.
    pub fn enterprise_managed(
        client_id: impl Into<String>,
        secret: Option<Secret>,
        idp: EnterpriseIdp,
    ) -> Self {
        Self {
            grant: Grant::EnterpriseManaged(idp),
            client_id: Some(client_id.into()),
            client_auth: secret.map_or(ClientAuth::None, ClientAuth::Secret),
            ..Self::default()
        }
    }

    /// A pre-registered client for the authorization code flow: used before
    /// any other registration. `secret` is `None` for a public client.
    pub fn client(mut self, client_id: impl Into<String>, secret: Option<Secret>) -> Self {
        self.client_id = Some(client_id.into());
        self.client_auth = secret.map_or(ClientAuth::None, ClientAuth::Secret);
        self
    }

    /// How the pre-registered client authenticates.
    pub fn client_auth(mut self, auth: ClientAuth) -> Self {
        self.client_auth = auth;
        self
    }

    /// The issuer the pre-registered client belongs to. When set, a server
    /// that names another authorization server is refused instead of being
    /// sent this client's credentials; when unset, the first authorization
    /// server used binds them.
    pub fn client_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.client_issuer = Some(issuer.into());
        self
    }

    /// The URL of this client's Client ID Metadata Document (an `https` URL
    /// with a path), used as the client ID where the server accepts them.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The `client_name` sent in dynamic registration (default `mcpwire`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The `application_type` sent in dynamic registration (default native).
    pub fn application_type(mut self, t: ApplicationType) -> Self {
        self.application_type = t;
        self
    }

    /// The redirect step of the authorization code flow (default
    /// [`LoopbackBrowser`](crate::LoopbackBrowser) when a terminal is attached, an error otherwise).
    pub fn redirect(mut self, step: impl RedirectStep + 'static) -> Self {
        self.redirect = Arc::new(step);
        self
    }

    /// Where authorizations are kept (default in memory; see
    /// [`FileStore`](crate::FileStore)).
    pub fn token_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// Whether to request DPoP-bound tokens (default: when offered).
    pub fn dpop(mut self, mode: DpopMode) -> Self {
        self.dpop = mode;
        self
    }

    /// How long before expiry tokens are renewed (default 5 minutes, at most
    /// half a token's lifetime).
    pub fn refresh_early(mut self, early: Duration) -> Self {
        self.timing.early = early;
        self
    }

    /// The clock-skew allowance taken off every expiry (default 30 seconds).
    pub fn clock_skew(mut self, skew: Duration) -> Self {
        self.timing.skew = skew;
        self
    }

    /// Whether to ask for `offline_access` (a refresh token) when the
    /// authorization server lists it (default `true`).
    pub fn offline_access(mut self, ask: bool) -> Self {
        self.offline_access = ask;
        self
    }

    /// How long the redirect step may take (default 5 minutes: a person is
    /// logging in).
    pub fn authorization_timeout(mut self, timeout: Duration) -> Self {
        self.authorization_timeout = timeout;
        self
    }

    /// How long one request to an authorization endpoint may take (default
    /// 30 seconds).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How many authorizations one request may trigger (a first one, then
    /// step-ups after `403 insufficient_scope`) before it fails with
    /// [`AuthError::StepUpLimit`] (default 3).
    pub fn max_authorizations(mut self, n: u32) -> Self {
        self.max_authorizations = n.max(1);
        self
    }

    /// Lets URLs learned from a server (metadata documents, registration
    /// and token endpoints) lead to loopback, private, link-local and
    /// unspecified addresses (default `false`: refused with
    /// [`AuthError::BlockedAddress`], so a hostile server cannot make the
    /// client reach a cloud metadata service or a port on the user's
    /// machine). Not needed when the MCP server is itself written as such
    /// an address (or `localhost`): its servers may then be local too. An
    /// MCP server named by a host name that resolves to a private address
    /// (an intranet) needs it.
    pub fn allow_private_addresses(mut self, allow: bool) -> Self {
        self.allow_private_addresses = allow;
        self
    }

    /// Whether a refresh request names the scopes of the tokens it renews
    /// in `scope` (default `false`: RFC 6749 §6 makes it optional, and the
    /// server keeps the granted scopes). Some providers refuse a refresh
    /// without it.
    pub fn scope_on_refresh(mut self, send: bool) -> Self {
        self.scope_on_refresh = send;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redirect::CallbackRedirect;

    fn secret_of(auth: &ClientAuth) -> Option<&str> {
        match auth {
            ClientAuth::Secret(s) => Some(s.expose()),
            _ => None,
        }
    }

    #[tokio::test]
    async fn every_setting_is_kept_as_given() {
        let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
        let c = OAuthConfig::new()
            .client("app", Some(Secret::new("s3cret")))
            .client_issuer("https://as.example")
            .client_metadata_url("https://app.example/client.json")
            .client_name("named")
            .application_type(ApplicationType::Web)
            .redirect(CallbackRedirect::new(
                "http://localhost:1/cb",
                |_url| async { Ok(String::new()) },
            ))
            .token_store(store.clone())
            .dpop(DpopMode::Off)
            .refresh_early(Duration::from_secs(7))
            .clock_skew(Duration::from_secs(3))
            .offline_access(false)
            .authorization_timeout(Duration::from_secs(11))
            .request_timeout(Duration::from_secs(13))
            .max_authorizations(5)
            .allow_private_addresses(true)
            .scope_on_refresh(true);
        assert_eq!(c.client_id.as_deref(), Some("app"));
        assert_eq!(secret_of(&c.client_auth), Some("s3cret"));
        assert_eq!(c.client_issuer.as_deref(), Some("https://as.example"));
        assert_eq!(
            c.client_metadata_url.as_deref(),
            Some("https://app.example/client.json")
        );
        assert_eq!(c.client_name, "named");
        assert_eq!(c.application_type.as_str(), "web");
        let pending = c.redirect.prepare().await.unwrap();
        assert_eq!(pending.redirect_uri(), "http://localhost:1/cb");
        assert!(Arc::ptr_eq(&c.store, &store));
        assert_eq!(c.dpop, DpopMode::Off);
        assert_eq!(
            c.timing,
            RefreshTiming {
                early: Duration::from_secs(7),
                skew: Duration::from_secs(3),
            }
        );
        assert!(!c.offline_access);
        assert_eq!(c.authorization_timeout, Duration::from_secs(11));
        assert_eq!(c.request_timeout, Duration::from_secs(13));
        assert_eq!(c.max_authorizations, 5);
        assert!(c.allow_private_addresses);
        assert!(c.scope_on_refresh);
        // The settings show; the secret does not.
        let shown = format!("{c:?}");
        assert!(
            shown.contains(r#"client_id: Some("app")"#) && shown.contains("scope_on_refresh: true"),
            "{shown}"
        );
        assert!(!shown.contains("s3cret"), "{shown}");

        // A client without a secret is public; `client_auth` replaces it.
        let public = OAuthConfig::new().client("app", None);
        assert!(matches!(public.client_auth, ClientAuth::None));
        let later = public.client_auth(ClientAuth::Secret(Secret::new("late")));
        assert_eq!(secret_of(&later.client_auth), Some("late"));
        assert_eq!(OAuthConfig::new().application_type.as_str(), "native");
        // At least one authorization per request, whatever is asked.
        assert_eq!(
            OAuthConfig::new().max_authorizations(0).max_authorizations,
            1
        );
    }

    #[test]
    fn each_grant_constructor_sets_its_grant_and_client() {
        let c = OAuthConfig::client_credentials("svc", "s1");
        assert!(matches!(c.grant, Grant::ClientCredentials));
        assert_eq!(c.client_id.as_deref(), Some("svc"));
        assert_eq!(secret_of(&c.client_auth), Some("s1"));

        let pem = include_bytes!("../tests/fixtures/rsa_private.pem");
        let key = SigningKey::from_pem(crate::SigningAlgorithm::Rs256, pem).unwrap();
        let c = OAuthConfig::private_key_jwt("svc", key);
        assert!(matches!(c.grant, Grant::ClientCredentials));
        assert_eq!(c.client_id.as_deref(), Some("svc"));
        assert!(matches!(c.client_auth, ClientAuth::PrivateKeyJwt(_)));

        let source = AssertionSource::Value(Secret::new("jwt"));
        let c = OAuthConfig::jwt_bearer(Some("wl".into()), source.clone());
        assert!(matches!(
            c.grant,
            Grant::JwtBearer(AssertionSource::Value(_))
        ));
        assert_eq!(c.client_id.as_deref(), Some("wl"));

        let idp = EnterpriseIdp::new("https://idp.example/token", "idp-client", source)
            .client_secret("idp-secret");
        assert_eq!(
            idp.client_secret.as_ref().map(Secret::expose),
            Some("idp-secret")
        );
        let c = OAuthConfig::enterprise_managed("app", Some(Secret::new("s2")), idp);
        assert!(matches!(c.grant, Grant::EnterpriseManaged(_)));
        assert_eq!(c.client_id.as_deref(), Some("app"));
        assert_eq!(secret_of(&c.client_auth), Some("s2"));
    }

    #[tokio::test]
    async fn assertion_sources_read_their_value_and_never_show_it() {
        let value = AssertionSource::Value(Secret::new("the-jwt"));
        assert_eq!(value.read().await.unwrap().expose(), "the-jwt");
        assert_eq!(format!("{value:?}"), "Value([redacted])");
        let callback = AssertionSource::callback(|| async { Ok(Secret::new("from-callback")) });
        assert_eq!(callback.read().await.unwrap().expose(), "from-callback");
        assert_eq!(format!("{callback:?}"), "Callback");
        let env = AssertionSource::Env("SOME_VAR".into());
        assert_eq!(format!("{env:?}"), r#"Env("SOME_VAR")"#);
    }
}
