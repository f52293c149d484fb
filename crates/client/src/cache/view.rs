//! One client's view of the response cache (`crate::cache::store`): which store
//! (a shared one, or its own, allocated when it first keeps an answer), the
//! server its connection reaches, whose private answers it may see, and how
//! long an answer is kept. A client whose cache stays empty holds this view
//! and nothing else.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use mcpwire_codec::jsonrpc::Payload;
use tokio::time::Instant;

use crate::base::lock::RwLock;
use crate::cache::store::{CredentialId, Hints, Key, Partition, ResponseCache, Server, Topic};

/// How long an answer is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifetime {
    /// As its caching hints say (the stateless era): `ttlMs`, and
    /// `cacheScope` for who may see it.
    Hinted,
    /// Until its `list_changed` or a new session, for this client's
    /// partition only (the `initialize` era, which has no hints).
    UntilChanged,
}

/// One client's view of its cache: which store (the shared one it was
/// given, or its own, made on first use), which server its answers come
/// from, and whose private answers it may see.
#[derive(Debug)]
pub(crate) struct CacheView {
    shared: Option<ResponseCache>,
    own_bounds: (usize, usize),
    own: OnceLock<ResponseCache>,
    /// This client's number: its partition when it declared no credential,
    /// and its server's when the transport names none.
    instance: u64,
    credential: Option<CredentialId>,
    server: RwLock<Server>,
}

impl CacheView {
    /// The view of a client with `shared` (or its own cache of
    /// `own_bounds`: entries, bytes) and `credential`.
    pub(crate) fn new(
        shared: Option<ResponseCache>,
        own_bounds: (usize, usize),
        credential: Option<CredentialId>,
    ) -> Self {
        static INSTANCES: AtomicU64 = AtomicU64::new(0);
        let instance = INSTANCES.fetch_add(1, Ordering::Relaxed);
        Self {
            shared,
            own_bounds,
            own: OnceLock::new(),
            instance,
            credential,
            server: RwLock::new(Server::Client(instance)),
        }
    }

    /// The store to read, if there is one (its own is not made for a read).
    pub(crate) fn reader(&self) -> Option<&ResponseCache> {
        self.shared.as_ref().or_else(|| self.own.get())
    }

    /// The store to write, made now if it is its own; `None` if disabled.
    pub(crate) fn writer(&self) -> Option<&ResponseCache> {
        let (entries, bytes) = self.own_bounds;
        let store = match &self.shared {
            Some(s) => s,
            None if entries == 0 || bytes == 0 => return None,
            None => self.own.get_or_init(|| ResponseCache::new(entries, bytes)),
        };
        store.enabled().then_some(store)
    }

    /// True if answers may be kept at all.
    pub(crate) fn enabled(&self) -> bool {
        match &self.shared {
            Some(s) => s.enabled(),
            None => self.own_bounds.0 > 0 && self.own_bounds.1 > 0,
        }
    }

    /// The connection now reaches the server its transport names `key`
    /// (`None`: a server only this client knows).
    pub(crate) fn set_server(&self, key: Option<&str>) {
        let server = match key {
            Some(k) => Server::Named(Arc::from(k)),
            None => Server::Client(self.instance),
        };
        *self.server.write() = server;
    }

    pub(crate) fn server(&self) -> Server {
        self.server.read().clone()
    }

    /// Where this client's private answers go.
    pub(crate) fn private(&self) -> Partition {
        match &self.credential {
            Some(c) => Partition::Credential(c.clone()),
            None => Partition::Client(self.instance),
        }
    }

    /// The fresh answer to `method` selected by `arg` this client may be
    /// served: its private one first, then a public one.
    pub(crate) fn lookup(&self, method: &'static str, arg: Option<&str>) -> Option<Payload> {
        let shown = arg.unwrap_or("");
        let found = self.reader().and_then(|store| {
            let now = Instant::now();
            let mut key = self.key(self.private(), method, arg);
            store.get(&key, now).or_else(|| {
                key.partition = Partition::Public;
                store.get(&key, now)
            })
        });
        match &found {
            Some(_) => tracing::debug!(method, arg = shown, "cache hit"),
            None => tracing::debug!(method, arg = shown, "cache miss"),
        }
        found
    }

    /// What to give back to [`keep`](Self::keep): `None` if the cache is
    /// off.
    pub(crate) fn begin(&self) -> Option<u64> {
        self.writer().map(ResponseCache::generation)
    }

    /// Keeps `payload`, the answer to `method` selected by `arg`, for as
    /// long as `lifetime` says, unless an invalidation happened since
    /// [`begin`](Self::begin) gave `generation`.
    pub(crate) fn keep(
        &self,
        method: &'static str,
        arg: Option<&str>,
        payload: &Payload,
        lifetime: Lifetime,
        generation: u64,
    ) {
        let Some(store) = self.writer() else { return };
        let (partition, expires) = match lifetime {
            Lifetime::Hinted => {
                let hints = Hints::of(payload);
                if hints.ttl.is_zero() {
                    return;
                }
                let partition = if hints.public {
                    Partition::Public
                } else {
                    self.private()
                };
                (partition, Some(Instant::now() + hints.ttl))
            }
            Lifetime::UntilChanged => (self.private(), None),
        };
        let key = self.key(partition, method, arg);
        let public = key.partition == Partition::Public;
        let stored = store.put(key, payload.clone(), expires, generation);
        let ttl_ms = expires.map(|at| at.saturating_duration_since(Instant::now()).as_millis());
        tracing::debug!(
            method,
            arg = arg.unwrap_or(""),
            stored,
            public,
            ?ttl_ms,
            "cache store"
        );
    }

    fn key(&self, partition: Partition, method: &'static str, arg: Option<&str>) -> Key {
        Key {
            server: self.server(),
            partition,
            method,
            arg: arg.map(Box::from),
        }
    }

    /// A notification made `topic` stale.
    pub(crate) fn invalidate(&self, topic: Topic<'_>) {
        if let Some(store) = self.reader() {
            store.invalidate(&self.server(), &topic);
        }
    }

    /// A new session started: what only a `list_changed` kept current may
    /// have changed unseen.
    pub(crate) fn new_session(&self) {
        if let Some(store) = self.reader() {
            store.invalidate_untimed(&self.server());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn payload(v: serde_json::Value) -> Payload {
        Payload::from_value(&v).unwrap()
    }

    /// Collects the messages of the events emitted while it is the
    /// default subscriber.
    #[derive(Default)]
    struct Messages(std::sync::Mutex<Vec<String>>);

    impl tracing::Subscriber for Messages {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            struct Visit<'a>(&'a mut String);
            impl tracing::field::Visit for Visit<'_> {
                fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
                    use std::fmt::Write;
                    let _ = write!(self.0, "{}={:?} ", field.name(), value);
                }
            }
            assert_eq!(*event.metadata().level(), tracing::Level::DEBUG);
            let mut line = String::new();
            event.record(&mut Visit(&mut line));
            self.0.lock().unwrap().push(line);
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    #[tokio::test(start_paused = true)]
    async fn hits_misses_stores_and_expiries_are_traced_at_debug() {
        let messages = Arc::new(Messages::default());
        let view = CacheView::new(None, (8, 1 << 20), None);
        let answer = payload(json!({"tools": [], "ttlMs": 1000, "cacheScope": "public"}));
        tracing::subscriber::with_default(messages.clone(), || {
            assert!(view.lookup("tools/list", Some("c1")).is_none());
            let g = view.begin().unwrap();
            view.keep("tools/list", Some("c1"), &answer, Lifetime::Hinted, g);
            assert!(view.lookup("tools/list", Some("c1")).is_some());
        });
        tokio::time::advance(Duration::from_secs(1)).await;
        tracing::subscriber::with_default(messages.clone(), || {
            assert!(view.lookup("tools/list", Some("c1")).is_none());
        });
        let lines = messages.0.lock().unwrap().clone();
        let find = |what: &str| {
            lines
                .iter()
                .any(|l| l.contains(what) && l.contains("tools/list"))
        };
        for what in [
            "cache miss",
            "cache store",
            "cache hit",
            "cache entry expired",
        ] {
            assert!(find(what), "no {what:?} in {lines:#?}");
        }
        assert!(lines.iter().all(|l| l.contains("c1")), "{lines:#?}");
    }
}
