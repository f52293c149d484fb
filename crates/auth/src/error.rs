//! [`AuthError`], the one error type of this crate, and the discovery
//! diagnostics it carries ([`Attempt`]).
//!
//! Messages never contain a token, a secret, an authorization code or a
//! private key: the values that could hold one are [`Secret`](crate::Secret)s
//! and are not part of any variant.

use std::fmt;

use crate::www_authenticate::Challenge;

/// A boxed error from a layer below (the HTTP client, serde, ring).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why authorization failed.
///
/// `Display` says, in one level, what went wrong and what a user can do; the
/// cause, if any, is in `source()`. The message text is not stable: branch on
/// the variant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// Discovery found no usable metadata document. `attempts` lists every
    /// URL tried and what each gave.
    #[error("could not discover the {stage}; tried {attempts}")]
    Discovery {
        /// What was being looked for.
        stage: DiscoveryStage,
        /// Every URL tried, in order, and its outcome.
        attempts: Attempts,
    },
    /// An authorization URL is plain `http` and not on a loopback address.
    #[error(
        "refusing the {what} {url}: authorization endpoints must use https (or a loopback address)"
    )]
    InsecureUrl {
        /// Which endpoint.
        what: &'static str,
        /// The URL.
        url: String,
    },
    /// A URL learned from a server (a metadata document, an endpoint) leads
    /// to a loopback, private, link-local or unspecified address, and the
    /// MCP server is not itself on one: a hostile server could use it to
    /// reach a cloud metadata service or the user's own machine.
    #[error(
        "refusing {url}: it leads to {address}, a {kind} address, which a URL learned from a server may not reach (set {setting} to allow it)",
        setting = crate::address::ALLOW_SETTING
    )]
    BlockedAddress {
        /// The URL (without its query).
        url: String,
        /// The address it leads to.
        address: std::net::IpAddr,
        /// Why that address is refused.
        kind: crate::address::AddressKind,
    },
    /// The Protected Resource Metadata describes another resource than the
    /// server being reached (RFC 9728 §3.3), so it must not be used.
    #[error("the protected resource metadata is for {resource}, not for the server at {server}")]
    ResourceMismatch {
        /// The server's URL.
        server: String,
        /// The `resource` the metadata names.
        resource: String,
    },
    /// The authorization server metadata names another issuer than the one it
    /// was fetched for (RFC 8414 §3.3), so it must not be used.
    #[error("the authorization server metadata names issuer {found:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The issuer it names.
        found: String,
    },
    /// The authorization server does not advertise PKCE with `S256`.
    #[error(
        "the authorization server {issuer} does not advertise PKCE (code_challenge_methods_supported lacks S256); refusing to authorize without it"
    )]
    PkceUnsupported {
        /// The issuer.
        issuer: String,
    },
    /// There is no way to obtain a client ID at this authorization server.
    #[error(
        "no client registration is possible at {issuer}: {missing}; configure a pre-registered client ID for it"
    )]
    NoClientRegistration {
        /// The issuer.
        issuer: String,
        /// What is missing, in words.
        missing: String,
    },
    /// Pre-registered client credentials belong to another authorization
    /// server than the one the resource names now.
    #[error(
        "the pre-registered client is registered with {registered}, but the server now uses {current}; register a client there"
    )]
    CredentialsBoundElsewhere {
        /// The issuer the credentials belong to.
        registered: String,
        /// The issuer the resource names.
        current: String,
    },
    /// Dynamic client registration was refused.
    #[error("client registration at {endpoint} was refused (HTTP {status}{})", oauth_error_suffix(.error.as_deref()))]
    RegistrationRefused {
        /// The registration endpoint.
        endpoint: String,
        /// The HTTP status.
        status: u16,
        /// The OAuth `error` code, if the answer had one.
        error: Option<String>,
    },
    /// The authorization server sent the user back with an error.
    #[error("authorization was refused: {error}{}", description_suffix(.description.as_deref()))]
    AuthorizationDenied {
        /// The OAuth `error` code.
        error: String,
        /// `error_description`, if any.
        description: Option<String>,
    },
    /// The authorization response does not carry the `state` we sent: it
    /// belongs to another request (or to an attacker) and is discarded.
    #[error("the authorization response's state does not match the request; discarded")]
    StateMismatch,
    /// The authorization response's `iss` (RFC 9207) is missing although
    /// advertised, or names another issuer: a possible mix-up attack.
    #[error(
        "the authorization response's issuer {found:?} is not the expected {expected:?}; discarded"
    )]
    IssuerParameter {
        /// The issuer recorded before the redirect.
        expected: String,
        /// The `iss` received, if any.
        found: Option<String>,
    },
    /// The authorization response carries no code.
    #[error("the authorization response carries no code")]
    MissingCode,
    /// The token endpoint refused the request with an OAuth error.
    #[error("the token endpoint refused the request: {error}{}", description_suffix(.description.as_deref()))]
    TokenRefused {
        /// The HTTP status, when known.
        status: Option<u16>,
        /// The OAuth `error` code (`invalid_grant`, `invalid_client`, ...).
        error: String,
        /// `error_description`, if any.
        description: Option<String>,
    },
    /// An answer could not be read (not JSON, a required member missing).
    #[error("the {what} could not be read")]
    InvalidResponse {
        /// What was being read.
        what: &'static str,
        /// Why.
        #[source]
        source: BoxError,
    },
    /// An HTTP request of the authorization flow failed.
    #[error("request to {url} failed")]
    Fetch {
        /// The URL.
        url: String,
        /// Why.
        #[source]
        source: FetchError,
    },
    /// The server asks for credentials and publishes no OAuth metadata (no
    /// protected resource metadata, no authorization server metadata at its
    /// origin): since the 2025-06-18 revision that means it has no OAuth,
    /// and expects a token given beforehand (an API key, a personal access
    /// token). The 2025-03-26 default endpoints were tried first where
    /// possible; the cause says how that ended (the guessed registration
    /// endpoint is not there, or no person is present to try them).
    #[error(
        "{server} publishes no OAuth metadata: it expects a token given beforehand (an API key or access token)"
    )]
    TokenRequired {
        /// The MCP server's URL.
        server: String,
        /// What settled it.
        #[source]
        source: Box<AuthError>,
    },
    /// Authorizing needs a person at a browser, and there is none: no
    /// terminal is attached (the default redirect step's check), or the
    /// application said so.
    #[error(
        "authorizing needs a person at a browser, and none can be asked (no terminal is attached, or the application runs unattended): authorize beforehand (a stored token), or give a token or credentials that need no person"
    )]
    InteractionRequired,
    /// The redirect step (browser, loopback listener, callback) failed.
    #[error("the authorization redirect did not complete")]
    Redirect(#[source] BoxError),
    /// An operation took longer than its bound.
    #[error("{what} timed out")]
    Timeout {
        /// What timed out.
        what: &'static str,
    },
    /// The server kept answering `403 insufficient_scope` after the allowed
    /// number of authorizations for one request.
    #[error(
        "the server still requires more scope ({scope}) after {authorizations} authorizations; giving up"
    )]
    StepUpLimit {
        /// How many authorizations were made for the request.
        authorizations: u32,
        /// The scopes last asked for.
        scope: String,
    },
    /// The server refused the credentials and nothing more can be tried.
    #[error("the server refused the credentials (HTTP {status}){}", challenge_suffix(.challenge.as_ref()))]
    Unauthorized {
        /// The HTTP status (401 or 403).
        status: u16,
        /// The challenge the server sent, if any.
        challenge: Option<Challenge>,
    },
    /// A credential the configuration points to is not there.
    #[error("{what} is not set")]
    MissingCredential {
        /// What is missing (`environment variable MCP_TOKEN`).
        what: String,
    },
    /// A key could not be loaded or used for signing.
    #[error("the {what} is unusable")]
    Key {
        /// Which key.
        what: &'static str,
        /// Why.
        #[source]
        source: BoxError,
    },
    /// The token store failed to load or save.
    #[error("the token store failed")]
    Store(#[source] BoxError),
    /// The configuration cannot work.
    #[error("invalid authorization configuration: {0}")]
    Config(String),
}

impl AuthError {
    pub(crate) fn invalid(what: &'static str, source: impl Into<BoxError>) -> Self {
        AuthError::InvalidResponse {
            what,
            source: source.into(),
        }
    }

    pub(crate) fn fetch(url: impl fmt::Display, source: FetchError) -> Self {
        if let Some(b) = crate::address::blocked_in(&source) {
            return AuthError::BlockedAddress {
                url: url.to_string(),
                address: b.address,
                kind: b.kind,
            };
        }
        AuthError::Fetch {
            url: url.to_string(),
            source,
        }
    }
}

fn description_suffix(description: Option<&str>) -> String {
    description.map(|d| format!(" ({d})")).unwrap_or_default()
}

fn oauth_error_suffix(error: Option<&str>) -> String {
    error.map(|e| format!(": {e}")).unwrap_or_default()
}

fn challenge_suffix(challenge: Option<&Challenge>) -> String {
    match challenge {
        Some(c) => {
            let mut s = format!("; challenge {}", c.scheme());
            if let Some(e) = c.error() {
                s.push_str(&format!(" error={e}"));
            }
            if let Some(sc) = c.scope() {
                s.push_str(&format!(" scope={sc:?}"));
            }
            s
        }
        None => String::new(),
    }
}

/// What discovery was looking for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoveryStage {
    /// The Protected Resource Metadata (RFC 9728).
    ResourceMetadata,
    /// The authorization server metadata (RFC 8414 / OpenID Connect
    /// Discovery).
    AuthorizationServerMetadata,
}

impl fmt::Display for DiscoveryStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DiscoveryStage::ResourceMetadata => "protected resource metadata",
            DiscoveryStage::AuthorizationServerMetadata => "authorization server metadata",
        })
    }
}

/// One URL tried during discovery and what it gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The URL.
    pub url: String,
    /// What it gave.
    pub outcome: AttemptOutcome,
}

/// What a discovery URL gave.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptOutcome {
    /// An HTTP status other than success.
    Status(u16),
    /// The request failed (connection refused, timeout): the message.
    Failed(String),
    /// A document came back but was rejected: why.
    Rejected(String),
}

/// The URLs tried during discovery, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attempts(pub Vec<Attempt>);

impl fmt::Display for Attempts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no URL");
        }
        for (i, a) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match &a.outcome {
                AttemptOutcome::Status(s) => write!(f, "{} (HTTP {s})", a.url)?,
                AttemptOutcome::Failed(why) => write!(f, "{} (failed: {why})", a.url)?,
                AttemptOutcome::Rejected(why) => write!(f, "{} (rejected: {why})", a.url)?,
            }
        }
        Ok(())
    }
}

/// An HTTP request made through [`HttpFetch`](crate::HttpFetch) failed.
#[derive(Debug, thiserror::Error)]
#[error("{}", match .kind { FetchErrorKind::Connect => "could not connect", FetchErrorKind::Timeout => "timed out", FetchErrorKind::Other => "HTTP request failed" })]
pub struct FetchError {
    kind: FetchErrorKind,
    #[source]
    source: Option<BoxError>,
}

/// What kind of failure a [`FetchError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FetchErrorKind {
    /// No connection could be made.
    Connect,
    /// The request took too long.
    Timeout,
    /// Anything else (a reset connection, an unreadable answer).
    Other,
}

impl FetchError {
    /// A failure of `kind` caused by `source`.
    pub fn new(kind: FetchErrorKind, source: impl Into<BoxError>) -> Self {
        Self {
            kind,
            source: Some(source.into()),
        }
    }

    /// A timeout with no further cause.
    pub fn timeout() -> Self {
        Self {
            kind: FetchErrorKind::Timeout,
            source: None,
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> FetchErrorKind {
        self.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_errors_list_every_url_and_outcome() {
        let e = AuthError::Discovery {
            stage: DiscoveryStage::ResourceMetadata,
            attempts: Attempts(vec![
                Attempt {
                    url: "https://a/.well-known/oauth-protected-resource/mcp".into(),
                    outcome: AttemptOutcome::Status(404),
                },
                Attempt {
                    url: "https://a/.well-known/oauth-protected-resource".into(),
                    outcome: AttemptOutcome::Failed("timed out".into()),
                },
            ]),
        };
        assert_eq!(
            e.to_string(),
            "could not discover the protected resource metadata; tried \
             https://a/.well-known/oauth-protected-resource/mcp (HTTP 404), \
             https://a/.well-known/oauth-protected-resource (failed: timed out)"
        );
    }

    #[test]
    fn fetch_errors_keep_their_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = AuthError::fetch(
            "https://as/token",
            FetchError::new(FetchErrorKind::Connect, io),
        );
        assert_eq!(e.to_string(), "request to https://as/token failed");
        let cause = std::error::Error::source(&e).unwrap();
        assert_eq!(cause.to_string(), "could not connect");
        let io = cause
            .source()
            .unwrap()
            .downcast_ref::<std::io::Error>()
            .unwrap();
        assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused);
    }

    #[test]
    fn refusals_say_what_the_server_said_and_nothing_when_it_said_nothing() {
        let refused = |description: Option<&str>| AuthError::TokenRefused {
            status: Some(400),
            error: "invalid_grant".into(),
            description: description.map(Into::into),
        };
        assert_eq!(
            refused(Some("expired")).to_string(),
            "the token endpoint refused the request: invalid_grant (expired)"
        );
        assert_eq!(
            refused(None).to_string(),
            "the token endpoint refused the request: invalid_grant"
        );
        let denied = AuthError::AuthorizationDenied {
            error: "access_denied".into(),
            description: Some("the user said no".into()),
        };
        assert_eq!(
            denied.to_string(),
            "authorization was refused: access_denied (the user said no)"
        );
        let registration = |error: Option<&str>| AuthError::RegistrationRefused {
            endpoint: "https://as/register".into(),
            status: 400,
            error: error.map(Into::into),
        };
        assert_eq!(
            registration(Some("invalid_redirect_uri")).to_string(),
            "client registration at https://as/register was refused (HTTP 400: invalid_redirect_uri)"
        );
        assert_eq!(
            registration(None).to_string(),
            "client registration at https://as/register was refused (HTTP 400)"
        );
        let unauthorized = |challenge: Option<Challenge>| AuthError::Unauthorized {
            status: 403,
            challenge,
        };
        let challenge = Challenge::parse(r#"Bearer error="insufficient_scope", scope="a b""#)
            .into_iter()
            .next();
        assert_eq!(
            unauthorized(challenge).to_string(),
            r#"the server refused the credentials (HTTP 403); challenge Bearer error=insufficient_scope scope="a b""#
        );
        assert_eq!(
            unauthorized(None).to_string(),
            "the server refused the credentials (HTTP 403)"
        );
    }
}
