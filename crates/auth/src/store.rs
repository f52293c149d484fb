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

    /// Takes a lock on the entry for `issuer` and `resource` that other
    /// processes sharing the store respect, held until the [`StoreLock`] is
    /// dropped: a refresh holds it from reading the entry to saving the new
    /// one, so two processes do not both spend a rotating refresh token.
    /// The default takes none (`None`), which is right for a store no other
    /// process reads.
    fn lock<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoreLock>, AuthError>> {
        let _ = (issuer, resource);
        Box::pin(async { Ok(None) })
    }
}

/// A lock of a [`TokenStore`] entry (see [`TokenStore::lock`]), released
/// when dropped.
pub struct StoreLock {
    _held: Box<dyn Send + Sync>,
}

impl StoreLock {
    /// A lock released when `held` is dropped (a locked file, say).
    pub fn new(held: impl Send + Sync + 'static) -> Self {
        Self {
            _held: Box::new(held),
        }
    }
}

impl std::fmt::Debug for StoreLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreLock")
    }
}

/// The tokens of the entry for `issuer` in `store` when another process
/// renewed them since `held` was read: a different refresh token, issued
/// later. Read under the entry's lock, before a refresh.
pub(crate) async fn renewed_elsewhere(
    store: &dyn TokenStore,
    resource: &str,
    issuer: &str,
    held: &TokenSet,
) -> Result<Option<TokenSet>, AuthError> {
    let entries = store.load(resource).await?;
    Ok(entries
        .into_iter()
        .filter(|e| e.issuer == issuer)
        .find_map(|e| e.tokens)
        .filter(|t| {
            t.refresh_token != held.refresh_token && secs(t.issued_at) >= secs(held.issued_at)
        }))
}

/// Whole seconds since the epoch: what the stores keep of a time.
fn secs(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
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

    fn tokens(refresh: &str, issued_at: std::time::SystemTime) -> TokenSet {
        let mut t = TokenSet::new(
            Secret::new("access"),
            crate::token::TokenType::Bearer,
            Some(Secret::new(refresh)),
            None,
            Vec::new(),
            &crate::token::RefreshTiming::default(),
        );
        t.issued_at = issued_at;
        t
    }

    #[tokio::test]
    async fn only_a_later_refresh_in_the_store_counts_as_renewed_elsewhere() {
        let store = MemoryStore::new();
        let now = std::time::SystemTime::now();
        let minute = std::time::Duration::from_secs(60);
        let held = tokens("r1", now);
        let mut entry = StoredAuth::new("https://as1", "https://mcp/x");
        // An older entry with another refresh token (written before ours
        // was refreshed) is not a renewal: ours is newer.
        entry.tokens = Some(tokens("r0", now - minute));
        store.save(&entry).await.unwrap();
        let found = renewed_elsewhere(&store, "https://mcp/x", "https://as1", &held);
        assert!(found.await.unwrap().is_none());
        // The same refresh token is ours.
        entry.tokens = Some(tokens("r1", now + minute));
        store.save(&entry).await.unwrap();
        let found = renewed_elsewhere(&store, "https://mcp/x", "https://as1", &held);
        assert!(found.await.unwrap().is_none());
        // A later one with another refresh token is another process's.
        entry.tokens = Some(tokens("r2", now + minute));
        store.save(&entry).await.unwrap();
        let found = renewed_elsewhere(&store, "https://mcp/x", "https://as1", &held);
        let newer = found.await.unwrap().expect("renewed elsewhere");
        assert_eq!(newer.refresh_token, Some(Secret::new("r2")));
    }
}
