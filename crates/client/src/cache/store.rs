//! The response cache: answers to lists, `resources/read` and
//! `server/discover`, kept as the server's caching hints (SEP-2549: `ttlMs`,
//! `cacheScope`) or, in the `initialize` era, its `list_changed`
//! notifications allow (see `docs/eras.md`, "The cache").
//!
//! A [`ResponseCache`] is a bounded store (entries and bytes, least
//! recently used out first) that several clients may share. Each entry is
//! keyed by the server (its command line or URL, or the client itself when
//! the transport names no server), the partition it may be served to, the
//! method and the one parameter that selects the answer (a list's cursor, a
//! read's URI). The partition is [`Partition::Public`] for a
//! `cacheScope: "public"` answer; anything else is private to the
//! credential the client declared ([`CredentialId`]) or, without one, to
//! the client alone, so a private answer never reaches another credential
//! through a shared cache.
//!
//! Every critical section is one map operation; no lock is held across an
//! await. Which store a client uses, and its partitions, are
//! `crate::cache::view`'s.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_codec::jsonrpc::Payload;
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use crate::base::lock::Mutex;

/// The entries a client's own cache holds at most, by default.
pub const DEFAULT_CACHE_ENTRIES: usize = 256;
/// The bytes of answers a client's own cache holds at most, by default.
pub const DEFAULT_CACHE_BYTES: usize = 8 << 20;
/// The longest a `ttlMs` is trusted for (a day): a larger one is cut to it.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// What an entry costs beyond its answer's bytes (key, bookkeeping), for
/// the byte bound.
const ENTRY_OVERHEAD: usize = 128;

/// Who a credential is, for the cache: private answers are kept per
/// credential. Made from an opaque id the caller already has (a user id,
/// an account, the authorizer's key) or from the secret itself, of which
/// only a SHA-256 digest is kept; the secret is never stored or logged.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CredentialId(Arc<str>);

impl CredentialId {
    /// An opaque identity (not a secret: it appears in `Debug`).
    pub fn new(id: impl Into<String>) -> Self {
        Self(Arc::from(id.into()))
    }

    /// The identity of a secret (a bearer token, an API key): a SHA-256
    /// digest of it; the secret itself is not kept.
    pub fn from_secret(secret: impl AsRef<[u8]>) -> Self {
        let digest = Sha256::digest(secret.as_ref());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        Self(Arc::from(format!("sha256:{hex}")))
    }
}

impl fmt::Debug for CredentialId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CredentialId").field(&&*self.0).finish()
    }
}

/// A bounded cache of answers, shared by every client given a clone of it
/// ([`ClientConfig::response_cache`](crate::ClientConfig::response_cache)).
/// Cheap to clone. A gateway holding one server for several users may give
/// all their clients one cache: answers the server marks `public` are
/// served to all, `private` ones only to the same
/// [`CredentialId`](crate::CredentialId).
#[derive(Clone)]
pub struct ResponseCache {
    store: Arc<Store>,
}

struct Store {
    max_entries: usize,
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    map: HashMap<Key, Entry>,
    /// Use order: the least recently used first.
    lru: BTreeMap<u64, Key>,
    bytes: usize,
    tick: u64,
    /// Bumped by every invalidation: an answer that was in flight across
    /// one is not stored (it may predate the change).
    generation: u64,
}

struct Entry {
    payload: Payload,
    /// `None`: fresh until invalidated (the `initialize` era).
    expires: Option<Instant>,
    tick: u64,
    size: usize,
}

impl Default for ResponseCache {
    fn default() -> Self {
        Self::new(DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_BYTES)
    }
}

impl fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseCache")
            .field("entries", &self.len())
            .field("bytes", &self.bytes())
            .field("max_entries", &self.store.max_entries)
            .field("max_bytes", &self.store.max_bytes)
            .finish()
    }
}

impl ResponseCache {
    /// A cache of at most `max_entries` answers and `max_bytes` bytes of
    /// them; either at zero makes a cache that keeps nothing.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        Self {
            store: Arc::new(Store {
                max_entries,
                max_bytes,
                inner: Mutex::default(),
            }),
        }
    }

    /// The answers held.
    pub fn len(&self) -> usize {
        self.store.inner.lock().map.len()
    }

    /// True if no answer is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes held (answers and bookkeeping).
    pub fn bytes(&self) -> usize {
        self.store.inner.lock().bytes
    }

    /// Forgets every answer.
    pub fn clear(&self) {
        let mut inner = self.store.inner.lock();
        inner.map.clear();
        inner.lru.clear();
        inner.bytes = 0;
        inner.generation += 1;
    }

    /// True if the cache can hold anything.
    pub(crate) fn enabled(&self) -> bool {
        self.store.max_entries > 0 && self.store.max_bytes > 0
    }

    /// Taken before a request is sent, given back to [`put`](Self::put).
    pub(crate) fn generation(&self) -> u64 {
        self.store.inner.lock().generation
    }

    /// The fresh answer under `key`, if any. An expired one is removed.
    pub(crate) fn get(&self, key: &Key, now: Instant) -> Option<Payload> {
        let mut guard = self.store.inner.lock();
        let inner = &mut *guard;
        let entry = inner.map.get_mut(key)?;
        if entry.expires.is_some_and(|at| now >= at) {
            inner.remove(key);
            drop(guard);
            tracing::debug!(method = key.method, arg = key.arg(), "cache entry expired");
            return None;
        }
        inner.tick += 1;
        let old = std::mem::replace(&mut entry.tick, inner.tick);
        let payload = entry.payload.clone();
        inner.lru.remove(&old);
        inner.lru.insert(inner.tick, key.clone());
        Some(payload)
    }

    /// Stores `payload` under `key` until `expires` (`None`: until
    /// invalidated), unless an invalidation happened since `generation`
    /// or it is larger than the whole cache. Evicts the least recently used
    /// entries to stay within bounds. True if stored.
    pub(crate) fn put(
        &self,
        key: Key,
        payload: Payload,
        expires: Option<Instant>,
        generation: u64,
    ) -> bool {
        let size =
            payload.as_bytes().len() + key.arg.as_deref().map_or(0, str::len) + ENTRY_OVERHEAD;
        if !self.enabled() || size > self.store.max_bytes {
            return false;
        }
        let mut inner = self.store.inner.lock();
        if inner.generation != generation {
            return false;
        }
        inner.remove(&key);
        let mut evicted = 0usize;
        while inner.map.len() >= self.store.max_entries || inner.bytes + size > self.store.max_bytes
        {
            let Some((_, oldest)) = inner.lru.pop_first() else {
                break;
            };
            if let Some(e) = inner.map.remove(&oldest) {
                inner.bytes -= e.size;
            }
            evicted += 1;
        }
        let tick = inner.next_tick();
        inner.lru.insert(tick, key.clone());
        inner.bytes += size;
        inner.map.insert(
            key,
            Entry {
                payload,
                expires,
                tick,
                size,
            },
        );
        drop(inner);
        if evicted > 0 {
            tracing::debug!(evicted, "cache full: least recently used entries evicted");
        }
        true
    }

    /// Forgets the answers of `server` that `topic` covers, in every
    /// partition.
    pub(crate) fn invalidate(&self, server: &Server, topic: &Topic<'_>) {
        self.remove_where(|k, _| k.server == *server && topic.covers(k));
    }

    /// Forgets the answers of `server` that have no expiry (kept until a
    /// `list_changed` that a new session may have missed).
    pub(crate) fn invalidate_untimed(&self, server: &Server) {
        self.remove_where(|k, e| k.server == *server && e.expires.is_none());
    }

    fn remove_where(&self, mut doomed: impl FnMut(&Key, &Entry) -> bool) {
        let mut inner = self.store.inner.lock();
        inner.generation += 1;
        let keys: Vec<Key> = inner
            .map
            .iter()
            .filter(|(k, e)| doomed(k, e))
            .map(|(k, _)| k.clone())
            .collect();
        for key in &keys {
            inner.remove(key);
        }
        drop(inner);
        if !keys.is_empty() {
            tracing::debug!(entries = keys.len(), "cache entries invalidated");
        }
    }
}

impl Inner {
    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    fn remove(&mut self, key: &Key) {
        if let Some(e) = self.map.remove(key) {
            self.lru.remove(&e.tick);
            self.bytes -= e.size;
        }
    }
}

/// Which server an entry came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Server {
    /// A server its transport names (`stdio <command line>`, `http <url>`):
    /// clients sharing a cache share its public answers.
    Named(Arc<str>),
    /// A server only this client (by its instance number) knows.
    Client(u64),
}

/// Who an entry may be served to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Partition {
    /// Anyone (`cacheScope: "public"`).
    Public,
    /// Clients that declared this credential.
    Credential(CredentialId),
    /// This client alone (it declared no credential).
    Client(u64),
}

/// One cached answer's identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub(crate) server: Server,
    pub(crate) partition: Partition,
    pub(crate) method: &'static str,
    /// The parameter that selects the answer: a cursor, a URI, a version.
    pub(crate) arg: Option<Box<str>>,
}

impl Key {
    fn arg(&self) -> &str {
        self.arg.as_deref().unwrap_or("")
    }
}

/// What a notification makes stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Topic<'a> {
    /// `tools/list` (`notifications/tools/list_changed`).
    Tools,
    /// `resources/list` and `resources/templates/list`
    /// (`notifications/resources/list_changed`).
    Resources,
    /// `prompts/list` (`notifications/prompts/list_changed`).
    Prompts,
    /// `resources/read` of one URI (`notifications/resources/updated`).
    Read(&'a str),
}

impl Topic<'_> {
    fn covers(&self, key: &Key) -> bool {
        match self {
            Topic::Tools => key.method == "tools/list",
            Topic::Resources => {
                key.method == "resources/list" || key.method == "resources/templates/list"
            }
            Topic::Prompts => key.method == "prompts/list",
            Topic::Read(uri) => key.method == "resources/read" && key.arg.as_deref() == Some(uri),
        }
    }
}

/// The methods whose answers may be cached (the ones the 2026-07-28 schema
/// gives caching hints), and the list whose `listChanged` capability keeps
/// them current in the `initialize` era.
pub(crate) fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "server/discover"
    )
}

/// The caching hints of a result of the stateless era.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hints {
    /// How long it is fresh (`ttlMs`, negative taken as 0, cut to
    /// [`MAX_TTL`]); zero: not kept.
    pub(crate) ttl: Duration,
    /// `cacheScope: "public"`: anyone may be served it. Anything else
    /// (`"private"`, absent, unknown) keeps it to its credential.
    pub(crate) public: bool,
}

impl Hints {
    /// The hints `payload` carries; a missing or malformed `ttlMs` is 0.
    pub(crate) fn of(payload: &Payload) -> Hints {
        #[derive(serde::Deserialize)]
        struct Raw {
            #[serde(rename = "ttlMs", default)]
            ttl_ms: Option<serde_json::Value>,
            #[serde(rename = "cacheScope", default)]
            cache_scope: Option<serde_json::Value>,
        }
        let none = Raw {
            ttl_ms: None,
            cache_scope: None,
        };
        // A derived struct also takes an array: only an object has hints.
        let object = payload.as_bytes().trim_ascii_start().starts_with(b"{");
        let raw: Raw = if object {
            payload.deserialize().unwrap_or(none)
        } else {
            none
        };
        let ms = raw
            .ttl_ms
            .as_ref()
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0);
        let ttl = if ms.is_finite() && ms > 0.0 {
            Duration::from_secs_f64((ms / 1000.0).min(MAX_TTL.as_secs_f64()))
        } else {
            Duration::ZERO
        };
        let public = raw.cache_scope.as_ref().and_then(serde_json::Value::as_str) == Some("public");
        Hints { ttl, public }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn payload(v: serde_json::Value) -> Payload {
        Payload::from_value(&v).unwrap()
    }

    fn key(server: &str, partition: Partition, method: &'static str, arg: Option<&str>) -> Key {
        Key {
            server: Server::Named(Arc::from(server)),
            partition,
            method,
            arg: arg.map(Box::from),
        }
    }

    #[test]
    fn hints_follow_the_spec_and_defend_against_odd_values() {
        let h = Hints::of(&payload(json!({"ttlMs": 1500, "cacheScope": "public"})));
        assert_eq!(
            h,
            Hints {
                ttl: Duration::from_millis(1500),
                public: true
            }
        );
        // Absent, negative, a string: not kept; absent scope is private.
        assert_eq!(Hints::of(&payload(json!({}))).ttl, Duration::ZERO);
        assert!(!Hints::of(&payload(json!({"ttlMs": 5}))).public);
        assert_eq!(
            Hints::of(&payload(json!({"ttlMs": -4}))).ttl,
            Duration::ZERO
        );
        assert_eq!(
            Hints::of(&payload(json!({"ttlMs": "9"}))).ttl,
            Duration::ZERO
        );
        assert!(!Hints::of(&payload(json!({"ttlMs": 5, "cacheScope": "PUBLIC"}))).public);
        // A huge TTL is cut to a day (and never overflows an Instant).
        assert_eq!(Hints::of(&payload(json!({"ttlMs": 1e300}))).ttl, MAX_TTL);
        assert_eq!(Hints::of(&payload(json!([1, 2]))).ttl, Duration::ZERO);
    }

    #[test]
    fn entries_expire_and_are_removed() {
        let cache = ResponseCache::default();
        let k = key("s", Partition::Public, "tools/list", None);
        let now = Instant::now();
        let g = cache.generation();
        assert!(cache.put(
            k.clone(),
            payload(json!({"tools": []})),
            Some(now + Duration::from_secs(1)),
            g
        ));
        assert!(cache.get(&k, now).is_some());
        assert!(cache.get(&k, now + Duration::from_millis(999)).is_some());
        assert!(cache.get(&k, now + Duration::from_secs(1)).is_none());
        assert!(cache.is_empty());
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn keys_differ_by_server_partition_method_and_argument() {
        let cache = ResponseCache::default();
        let now = Instant::now();
        let cred = |s: &str| Partition::Credential(CredentialId::new(s));
        let k = key("s", cred("alice"), "resources/read", Some("file:///a"));
        cache.put(k.clone(), payload(json!(1)), None, cache.generation());
        assert!(cache.get(&k, now).is_some());
        for other in [
            key("s", cred("bob"), "resources/read", Some("file:///a")),
            key("s", Partition::Public, "resources/read", Some("file:///a")),
            key(
                "s",
                Partition::Client(1),
                "resources/read",
                Some("file:///a"),
            ),
            key("t", cred("alice"), "resources/read", Some("file:///a")),
            key("s", cred("alice"), "resources/read", Some("file:///b")),
            key("s", cred("alice"), "resources/list", Some("file:///a")),
        ] {
            assert!(cache.get(&other, now).is_none(), "{other:?}");
        }
    }

    #[test]
    fn invalidation_is_per_topic_and_server_and_stops_racing_stores() {
        let cache = ResponseCache::default();
        let now = Instant::now();
        let p = Partition::Public;
        let tools = key("s", p.clone(), "tools/list", None);
        let page2 = key("s", p.clone(), "tools/list", Some("c2"));
        let templates = key("s", p.clone(), "resources/templates/list", None);
        let read_a = key("s", p.clone(), "resources/read", Some("file:///a"));
        let read_b = key("s", p.clone(), "resources/read", Some("file:///b"));
        let other = key("t", p.clone(), "tools/list", None);
        for k in [&tools, &page2, &templates, &read_a, &read_b, &other] {
            assert!(cache.put(k.clone(), payload(json!(1)), None, cache.generation()));
        }
        let s = Server::Named(Arc::from("s"));
        let g = cache.generation();
        cache.invalidate(&s, &Topic::Tools);
        assert!(cache.get(&tools, now).is_none() && cache.get(&page2, now).is_none());
        assert!(
            cache.get(&other, now).is_some(),
            "another server's list stays"
        );
        assert!(cache.get(&templates, now).is_some());
        cache.invalidate(&s, &Topic::Read("file:///a"));
        assert!(cache.get(&read_a, now).is_none());
        assert!(cache.get(&read_b, now).is_some());
        cache.invalidate(&s, &Topic::Resources);
        assert!(cache.get(&templates, now).is_none());
        // An answer that was in flight across an invalidation is not kept.
        assert!(!cache.put(tools.clone(), payload(json!(2)), None, g));
        assert!(cache.get(&tools, now).is_none());
    }

    #[test]
    fn a_new_session_forgets_untimed_entries_only() {
        let cache = ResponseCache::default();
        let now = Instant::now();
        let timed = key("s", Partition::Public, "tools/list", None);
        let untimed = key("s", Partition::Client(3), "prompts/list", None);
        cache.put(
            timed.clone(),
            payload(json!(1)),
            Some(now + Duration::from_secs(60)),
            cache.generation(),
        );
        cache.put(untimed.clone(), payload(json!(1)), None, cache.generation());
        cache.invalidate_untimed(&Server::Named(Arc::from("s")));
        assert!(cache.get(&timed, now).is_some());
        assert!(cache.get(&untimed, now).is_none());
    }

    #[test]
    fn bounds_evict_the_least_recently_used() {
        let cache = ResponseCache::new(2, 1 << 20);
        let now = Instant::now();
        let k = |c: &str| key("s", Partition::Public, "tools/list", Some(c));
        cache.put(k("a"), payload(json!(1)), None, cache.generation());
        cache.put(k("b"), payload(json!(1)), None, cache.generation());
        assert!(cache.get(&k("a"), now).is_some()); // b is now the oldest
        cache.put(k("c"), payload(json!(1)), None, cache.generation());
        assert_eq!(cache.len(), 2);
        assert!(cache.get(&k("b"), now).is_none());
        assert!(cache.get(&k("a"), now).is_some() && cache.get(&k("c"), now).is_some());

        // By bytes: room for two small answers, not three.
        let small = payload(json!("x".repeat(100)));
        let each = small.as_bytes().len() + 1 + ENTRY_OVERHEAD;
        let cache = ResponseCache::new(100, 2 * each + 10);
        for c in ["a", "b", "c"] {
            assert!(cache.put(k(c), small.clone(), None, cache.generation()));
        }
        assert_eq!(cache.len(), 2);
        assert!(cache.bytes() <= 2 * each + 10);
        assert!(cache.get(&k("a"), now).is_none());
        // An answer larger than the whole cache is not kept (and evicts
        // nothing).
        let big = payload(json!("y".repeat(1000)));
        assert!(!cache.put(k("d"), big, None, cache.generation()));
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_zero_bound_disables_the_cache() {
        for cache in [ResponseCache::new(0, 1 << 20), ResponseCache::new(10, 0)] {
            assert!(!cache.enabled());
            let k = key("s", Partition::Public, "tools/list", None);
            assert!(!cache.put(k.clone(), payload(json!(1)), None, cache.generation()));
            assert!(cache.is_empty());
        }
    }

    #[test]
    fn a_credential_from_a_secret_keeps_only_a_digest() {
        let id = CredentialId::from_secret("s3cret-token");
        let shown = format!("{id:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("sha256:"), "{shown}");
        assert_eq!(id, CredentialId::from_secret(b"s3cret-token"));
        assert_ne!(id, CredentialId::from_secret("other"));
    }
}
