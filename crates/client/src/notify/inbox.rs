//! The inbox of server notifications: each is routed into bounded,
//! lossy-at-the-old-end lanes, and invalidates the caches it concerns.
//!
//! The reader task never waits on a consumer: every lane is either a
//! coalescing `watch` (list changes, resource updates, progress) or a bounded
//! `broadcast` ring whose oldest entries are overwritten when nobody keeps up.
//! So responses are never stuck behind notifications nobody reads, and memory
//! stays bounded however many arrive. Overwritten entries are counted.
//!
//! A ring is made on the first subscription, not with the session: tokio
//! allocates a ring's every slot up front (1,024 by default, about 230 KiB
//! for the two rings), and most sessions of a gateway never subscribe.
//! Until then messages are dropped as they would be with no receiver.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use mcpwire_codec::jsonrpc::Payload;
use serde_json::Value;
use tokio::sync::{broadcast, watch};

use crate::base::lock::Mutex;
use crate::cache::schema::ToolCache;
use crate::cache::store::Topic;
use crate::cache::view::CacheView;
use crate::notify::subscription::{ACKNOWLEDGED, Tags, Verdict};
use crate::types::{LogMessage, LoggingLevel, ResourceUpdated};

/// A notification the client has no dedicated lane for, as sent.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerNotification {
    /// Its method.
    pub method: String,
    /// Its params, parsed.
    pub params: Option<Value>,
}

/// Which server list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListKind {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/resources/list_changed`.
    Resources,
    /// `notifications/prompts/list_changed`.
    Prompts,
}

/// Where the server's notifications arrive: their lanes, and the caches a
/// notification invalidates.
///
/// The tool cache and the response cache view live here, not beside it,
/// because the driver task updates them on its reading path, in the order
/// frames arrive: a `list_changed` invalidates them before any later answer
/// is delivered, and each `tools/list` answer is matched to the listing it
/// ends (`ToolCache::answered`). The inbox is the one handle the driver and
/// the listen stream hold for that.
pub(crate) struct Inbox {
    capacity: usize,
    /// Made on the first subscription (see the module docs).
    logs: OnceLock<broadcast::Sender<LogMessage>>,
    other: OnceLock<broadcast::Sender<ServerNotification>>,
    /// Made on the first subscription or the first change, like the
    /// queues above: a session whose server announces nothing holds none.
    tools_changed: OnceLock<watch::Sender<u64>>,
    resources_changed: OnceLock<watch::Sender<u64>>,
    prompts_changed: OnceLock<watch::Sender<u64>>,
    updates: Mutex<HashMap<String, watch::Sender<Option<ResourceUpdated>>>>,
    drops: AtomicU64,
    pub(crate) tools: ToolCache,
    /// Which `subscriptions/listen` stream delivers (the stateless era).
    pub(crate) tags: Tags,
    /// The response cache, invalidated by `list_changed` and
    /// `resources/updated`.
    pub(crate) cache: CacheView,
}

impl Inbox {
    pub(crate) fn new(capacity: usize, cache: CacheView) -> Self {
        Self {
            cache,
            capacity,
            logs: OnceLock::new(),
            other: OnceLock::new(),
            tools_changed: OnceLock::new(),
            resources_changed: OnceLock::new(),
            prompts_changed: OnceLock::new(),
            updates: Mutex::new(HashMap::new()),
            drops: AtomicU64::new(0),
            tools: ToolCache::default(),
            tags: Tags::default(),
        }
    }

    /// Entries overwritten because a queue was full.
    pub(crate) fn drops(&self) -> u64 {
        self.drops.load(Ordering::Relaxed)
    }

    fn push<T: Clone>(&self, tx: &OnceLock<broadcast::Sender<T>>, value: T) {
        let Some(tx) = tx.get() else {
            return;
        };
        if tx.receiver_count() == 0 {
            return;
        }
        if tx.len() >= self.capacity {
            self.drops.fetch_add(1, Ordering::Relaxed);
        }
        let _ = tx.send(value);
    }

    pub(crate) fn logs(&self) -> broadcast::Receiver<LogMessage> {
        self.logs
            .get_or_init(|| broadcast::channel(self.capacity).0)
            .subscribe()
    }

    pub(crate) fn other(&self) -> broadcast::Receiver<ServerNotification> {
        self.other
            .get_or_init(|| broadcast::channel(self.capacity).0)
            .subscribe()
    }

    pub(crate) fn list_changed(&self, kind: ListKind) -> watch::Receiver<u64> {
        match kind {
            ListKind::Tools => counter(&self.tools_changed).subscribe(),
            ListKind::Resources => counter(&self.resources_changed).subscribe(),
            ListKind::Prompts => counter(&self.prompts_changed).subscribe(),
        }
    }

    pub(crate) fn updates_for(&self, uri: &str) -> watch::Receiver<Option<ResourceUpdated>> {
        let mut map = self.updates.lock();
        map.retain(|_, tx| tx.receiver_count() > 0);
        map.entry(uri.to_owned())
            .or_insert_with(|| watch::channel(None).0)
            .subscribe()
    }

    /// Routes one notification (not progress or cancellation, which the
    /// driver routes itself). Never waits. What a subscription stream
    /// carries is kept only from the current subscription (see
    /// `crate::notify::subscription`); untagged notifications (the `initialize`
    /// era's) are always kept.
    pub(crate) fn dispatch(&self, method: &str, params: Option<Payload>) {
        if matches!(
            method,
            ACKNOWLEDGED
                | "notifications/resources/updated"
                | "notifications/tools/list_changed"
                | "notifications/resources/list_changed"
                | "notifications/prompts/list_changed"
        ) && self.tags.judge(method, params.as_ref()) != Verdict::Keep
        {
            return;
        }
        match method {
            "notifications/message" => {
                if let Some(msg) = parse::<LogMessage>(method, params) {
                    trace_log(&msg);
                    self.push(&self.logs, msg);
                }
            }
            "notifications/resources/updated" => {
                if let Some(update) = parse::<ResourceUpdated>(method, params) {
                    self.cache.invalidate(Topic::Read(&update.uri));
                    let map = self.updates.lock();
                    for (uri, tx) in map.iter() {
                        if covers(uri, &update.uri) {
                            tx.send_replace(Some(update.clone()));
                        }
                    }
                }
            }
            "notifications/tools/list_changed" => {
                self.tools.invalidate();
                self.cache.invalidate(Topic::Tools);
                counter(&self.tools_changed).send_modify(|n| *n += 1);
            }
            "notifications/resources/list_changed" => {
                self.cache.invalidate(Topic::Resources);
                counter(&self.resources_changed).send_modify(|n| *n += 1)
            }
            "notifications/prompts/list_changed" => {
                self.cache.invalidate(Topic::Prompts);
                counter(&self.prompts_changed).send_modify(|n| *n += 1)
            }
            _ => {
                let params = params.and_then(|p| p.deserialize().ok());
                self.push(
                    &self.other,
                    ServerNotification {
                        method: method.to_owned(),
                        params,
                    },
                );
            }
        }
    }
}

/// True if a subscription to `subscribed` covers an update of `updated`
/// (the same URI, or a sub-resource of it).
fn covers(subscribed: &str, updated: &str) -> bool {
    updated == subscribed
        || (updated.starts_with(subscribed)
            && (subscribed.ends_with('/') || updated[subscribed.len()..].starts_with('/')))
}

fn parse<T: serde::de::DeserializeOwned>(method: &str, params: Option<Payload>) -> Option<T> {
    let params = params?;
    match params.deserialize() {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!(method, error = %e, "ignoring a malformed notification");
            None
        }
    }
}

/// A `list_changed` counter, made (at zero) on first use.
fn counter(slot: &OnceLock<watch::Sender<u64>>) -> &watch::Sender<u64> {
    slot.get_or_init(|| watch::channel(0).0)
}

fn trace_log(msg: &LogMessage) {
    let logger = msg.logger.as_deref().unwrap_or("");
    let data = &msg.data;
    match msg.level {
        LoggingLevel::Debug => tracing::debug!(target: "mcp_server", logger, %data),
        LoggingLevel::Info | LoggingLevel::Notice => {
            tracing::info!(target: "mcp_server", logger, %data)
        }
        LoggingLevel::Warning => tracing::warn!(target: "mcp_server", logger, %data),
        _ => tracing::error!(target: "mcp_server", logger, %data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_cache() -> CacheView {
        CacheView::new(None, (0, 0), None)
    }

    #[test]
    fn sub_resources_are_covered() {
        assert!(covers("file:///a", "file:///a"));
        assert!(covers("file:///a", "file:///a/b"));
        assert!(covers("file:///a/", "file:///a/b"));
        assert!(!covers("file:///a", "file:///ab"));
        assert!(!covers("file:///a/b", "file:///a"));
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts() {
        let inbox = Inbox::new(4, test_cache());
        let mut rx = inbox.other();
        for i in 0..10 {
            let p = Payload::from_value(&serde_json::json!({ "i": i })).unwrap();
            inbox.dispatch("x/y", Some(p));
        }
        assert_eq!(inbox.drops(), 6);
        // The receiver learns it lagged, then reads the newest four.
        assert!(matches!(
            rx.try_recv(),
            Err(broadcast::error::TryRecvError::Lagged(6))
        ));
        let first = rx.try_recv().unwrap();
        assert_eq!(first.params.unwrap()["i"], 6);
    }

    #[test]
    fn no_ring_is_made_until_someone_subscribes() {
        let inbox = Inbox::new(1024, test_cache());
        let p = || Payload::from_value(&serde_json::json!({"level": "info", "data": 1})).unwrap();
        inbox.dispatch("notifications/message", Some(p()));
        inbox.dispatch("x/y", Some(p()));
        assert!(inbox.logs.get().is_none() && inbox.other.get().is_none());
        assert_eq!(inbox.drops(), 0);
        // A subscriber sees what comes after it subscribed.
        let mut logs = inbox.logs();
        inbox.dispatch("notifications/message", Some(p()));
        assert_eq!(logs.try_recv().unwrap().data, 1);
        assert!(inbox.other.get().is_none());
    }

    #[test]
    fn list_changed_counters_are_made_on_first_use_and_count_from_zero() {
        let inbox = Inbox::new(1024, test_cache());
        assert!(inbox.tools_changed.get().is_none());
        assert!(inbox.prompts_changed.get().is_none());
        // A change before anyone subscribed is counted all the same.
        inbox.dispatch("notifications/tools/list_changed", None);
        let mut tools = inbox.list_changed(ListKind::Tools);
        assert_eq!(*tools.borrow_and_update(), 1);
        inbox.dispatch("notifications/tools/list_changed", None);
        assert!(tools.has_changed().unwrap());
        assert_eq!(*tools.borrow_and_update(), 2);
        // The other kinds were not made by it.
        assert!(inbox.resources_changed.get().is_none());
        assert_eq!(*inbox.list_changed(ListKind::Prompts).borrow(), 0);
    }
}
