//! [`TokenStore`]: where authorizations are kept between requests and,
//! with a persistent store, between runs; [`MemoryStore`], the default.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::error::AuthError;
use crate::secret::Secret;
use crate::token::TokenSet;

/// What is kept for one authorization server (`issuer`) and one resource:
/// the client registered there, the tokens, and the DPoP key they are bound
/// to. One entry per issuer and resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredAuth {
    /// The authorization server's issuer identifier.
    pub issuer: String,
    /// The resource: the MCP server's canonical URI (the store's key).
    pub resource: String,
    /// The RFC 8707 `resource` value the tokens were asked for, when the
    /// server's metadata names another one than `resource` (a parent path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indicator: Option<String>,
    /// The client registered with `issuer` (dynamic registration), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<StoredClient>,
    /// The tokens, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenSet>,
    /// The DPoP private key the tokens are bound to (PKCS#8, base64url).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

impl StoredAuth {
    /// An empty entry for `issuer` and `resource`.
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            resource: resource.into(),
            indicator: None,
            client: None,
            tokens: None,
            dpop_key: None,
        }
    }
}

/// A client registration kept in a [`StoredAuth`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredClient {
    /// The client ID.
    pub client_id: String,
    /// The client secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// The token endpoint authentication method (`none`,
    /// `client_secret_basic`, `client_secret_post`).
    pub auth_method: String,
}

impl StoredClient {
    /// A registration.
    pub fn new(
        client_id: impl Into<String>,
        client_secret: Option<Secret>,
        auth_method: impl Into<String>,
    ) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret,
            auth_method: auth_method.into(),
        }
    }
}

/// Keeps [`StoredAuth`] entries, one per issuer and resource.
///
/// Implementations must not block the async runtime (do file or keychain
/// work on a blocking thread) and must keep secrets out of logs.
pub trait TokenStore: Send + Sync {
    /// Every entry for `resource` (one per issuer).
    fn load<'a>(&'a self, resource: &'a str) -> BoxFuture<'a, Result<Vec<StoredAuth>, AuthError>>;
    /// Creates or replaces the entry for `entry.issuer` and `entry.resource`.
    fn save<'a>(&'a self, entry: &'a StoredAuth) -> BoxFuture<'a, Result<(), AuthError>>;
    /// Removes the entry for `issuer` and `resource`, if there is one.
    fn remove<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
    ) -> BoxFuture<'a, Result<(), AuthError>>;
}

/// A [`TokenStore`] in memory: authorizations last as long as the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: Mutex<HashMap<(String, String), StoredAuth>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), StoredAuth>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TokenStore for MemoryStore {
    fn load<'a>(&'a self, resource: &'a str) -> BoxFuture<'a, Result<Vec<StoredAuth>, AuthError>> {
        let found = self
            .lock()
            .values()
            .filter(|e| e.resource == resource)
            .cloned()
            .collect();
        Box::pin(async move { Ok(found) })
    }

    fn save<'a>(&'a self, entry: &'a StoredAuth) -> BoxFuture<'a, Result<(), AuthError>> {
        self.lock().insert(
            (entry.issuer.clone(), entry.resource.clone()),
            entry.clone(),
        );
        Box::pin(async { Ok(()) })
    }

    fn remove<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        self.lock()
            .remove(&(issuer.to_owned(), resource.to_owned()));
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_entry_per_issuer_and_resource() {
        let store = MemoryStore::new();
        let mut a = StoredAuth::new("https://as1", "https://mcp/x");
        store.save(&a).await.unwrap();
        a.client = Some(StoredClient::new("c", None, "none"));
        store.save(&a).await.unwrap();
        store
            .save(&StoredAuth::new("https://as2", "https://mcp/x"))
            .await
            .unwrap();
        store
            .save(&StoredAuth::new("https://as1", "https://other"))
            .await
            .unwrap();
        let found = store.load("https://mcp/x").await.unwrap();
        assert_eq!(found.len(), 2);
        assert!(found.iter().any(|e| e.client.is_some()));
        store.remove("https://as1", "https://mcp/x").await.unwrap();
        assert_eq!(store.load("https://mcp/x").await.unwrap().len(), 1);
    }
}
