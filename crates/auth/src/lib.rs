//! Authorization for MCP over HTTP: fixed bearer tokens, and OAuth 2.1 as
//! the MCP specification profiles it (2025-03-26 to 2026-07-28).
//!
//! The HTTP transport calls an [`Authorizer`] for the headers of every
//! request and on every `401`/`403`. Two are provided:
//!
//! - [`BearerToken`]: one fixed token (given, or read from an environment
//!   variable);
//! - [`OAuth`]: tokens obtained, kept and renewed as an [`OAuthConfig`]
//!   says: the authorization code flow with PKCE (a person authorizes, in a
//!   browser through [`LoopbackBrowser`] or through a [`CallbackRedirect`]),
//!   client credentials (a secret, or a `private_key_jwt` [`SigningKey`]),
//!   the JWT bearer grant for workload identity, and enterprise-managed
//!   authorization (token exchange for an ID-JAG, then the JWT bearer
//!   grant). Discovery follows the specification's order (Protected
//!   Resource Metadata, then authorization server metadata) and validates
//!   what it finds; registration prefers a pre-registered client, then a
//!   Client ID Metadata Document, then dynamic registration. Tokens carry
//!   an absolute expiry, are renewed before it, sit in a [`TokenStore`]
//!   ([`MemoryStore`] by default, or a [`FileStore`]), and are DPoP-bound
//!   (RFC 9449) where the authorization server offers it.
//!
//! Its own HTTP requests go through an [`HttpFetch`], which the HTTP
//! transport's client implements: one HTTP stack, one connection pool.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcpwire_auth::{Authorizer, HttpFetch, OAuth, OAuthConfig};
//!
//! # async fn demo(fetch: Arc<dyn HttpFetch>) -> Result<(), mcpwire_auth::AuthError> {
//! // A person authorizes in their browser; tokens are renewed as needed.
//! let auth = OAuth::new("https://mcp.example.com/mcp", OAuthConfig::new(), fetch.clone())?;
//! // A service with client credentials.
//! let m2m = OAuth::new(
//!     "https://mcp.example.com/mcp",
//!     OAuthConfig::client_credentials("my-service", "s3cret"),
//!     fetch,
//! )?;
//! let uri: http::Uri = "https://mcp.example.com/mcp".parse().unwrap();
//! let headers = m2m.headers(&http::Method::POST, &uri).await?; // none until the server asks
//! # let _ = (auth, headers); Ok(()) }
//! ```
//!
//! What it does not do: parse HTTP headers (the transport hands it parsed
//! challenges), follow redirects, or send a token to any origin but the
//! server's. Secrets and tokens are [`Secret`]s: redacted in `Debug`,
//! absent from errors and logs. See `docs/auth.md`.

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod address;
mod metadata;
mod secret;
mod token;
mod www_authenticate;
mod error;
mod authorizer;
mod dpop;
mod assertion;
mod fetch;
mod redirect;
mod loopback;
mod static_token;
mod store;
mod config;
mod file_store;
mod url_rules;
mod discovery;
mod oauth_http;
mod registration;
mod grants;
mod authcode;
mod obtain;
mod oauth;
mod setting;

pub use address::{ALLOW_SETTING, AddressKind, BlockedAddress, PublicAddressesOnly};
pub use assertion::{SigningAlgorithm, SigningKey};
pub use authorizer::{AuthHeaders, AuthRound, Authorizer, Challenged};
pub use config::{
    ApplicationType, AssertionSource, ClientAuth, DpopMode, EnterpriseIdp, Grant, OAuthConfig,
};
pub use error::{
    Attempt, AttemptOutcome, Attempts, AuthError, BoxError, DiscoveryStage, FetchError,
    FetchErrorKind,
};
pub use fetch::HttpFetch;
pub use file_store::FileStore;
pub use loopback::LoopbackBrowser;
pub use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use oauth::OAuth;
pub use redirect::{CallbackRedirect, FollowLocation, PendingRedirect, RedirectStep};
pub use secret::Secret;
pub use setting::Auth;
pub use static_token::BearerToken;
pub use store::{MemoryStore, StoreLock, StoredAuth, StoredClient, TokenStore};
pub use token::{RefreshTiming, TokenSet, TokenType};
pub use www_authenticate::Challenge;
