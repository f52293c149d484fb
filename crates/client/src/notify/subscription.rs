//! The vocabulary of `subscriptions/listen` (the 2026-07-28 revision's
//! notification stream): the filter a client opts in with, the
//! subscription ids notifications are tagged with, and what the client
//! wants to be subscribed to, which outlives any one connection.
//!
//! The stream itself is run by `crate::session::listen`; the notification lanes
//! (`crate::notify::inbox`) consult [`Tags`] to keep only what the current
//! subscription delivers.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use mcpwire_codec::jsonrpc::Payload;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{oneshot, watch};

use crate::base::error::Error;
use crate::base::lock::Mutex;

/// The method that opens a subscription stream.
pub(crate) const LISTEN: &str = "subscriptions/listen";
/// The notification a server acknowledges a subscription with.
pub(crate) const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// What a subscription opts in to (`SubscriptionFilter`); the server's
/// acknowledgement carries the subset it honours.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Filter {
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) tools_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) prompts_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) resources_list_changed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) resource_subscriptions: Vec<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Filter {
    /// True if it asks for nothing (no stream is needed).
    pub(crate) fn is_empty(&self) -> bool {
        *self == Filter::default()
    }
}

/// The params of `notifications/subscriptions/acknowledged`.
#[derive(Debug, Deserialize)]
struct Acknowledged {
    #[serde(default)]
    notifications: Filter,
}

/// Only the `_meta` of a notification's params: the subscription it belongs
/// to (`io.modelcontextprotocol/subscriptionId`).
#[derive(Deserialize)]
struct Tagged {
    #[serde(rename = "_meta")]
    meta: Option<TagMeta>,
}

#[derive(Deserialize)]
struct TagMeta {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    id: Option<Value>,
}

/// The subscription a notification is tagged with: `None` if untagged (the
/// `initialize` era, or a notification about a request), `Some(None)` if
/// tagged with an id that is not one of ours (a string, say).
fn tag(params: Option<&Payload>) -> Option<Option<i64>> {
    let tagged: Tagged = params?.deserialize().ok()?;
    let id = tagged.meta?.id?;
    Some(id.as_i64())
}

/// Which subscriptions are open on the current connection, and which one
/// delivers. Switched by the driver when an acknowledgement arrives, so a
/// notification right behind it in the same read is already kept.
#[derive(Debug, Default)]
pub(crate) struct Tags(Mutex<TagTable>);

#[derive(Debug, Default)]
struct TagTable {
    /// The acknowledged subscription whose notifications are delivered.
    current: Option<i64>,
    /// Opened, not yet acknowledged: who waits for the acknowledgement.
    waiting: HashMap<i64, oneshot::Sender<Filter>>,
    /// Notifications kept from the current subscription (progress, for the
    /// stream's reconnect budget).
    delivered: u64,
}

/// What the lanes do with a notification.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Deliver it.
    Keep,
    /// Drop it: it belongs to a subscription that is not current.
    Drop,
    /// It was an acknowledgement, now handled.
    Consumed,
}

impl Tags {
    /// A subscription `id` was opened: its acknowledgement goes to the
    /// receiver (and makes it current).
    pub(crate) fn expect(&self, id: i64) -> oneshot::Receiver<Filter> {
        let (tx, rx) = oneshot::channel();
        self.0.lock().waiting.insert(id, tx);
        rx
    }

    /// The subscription `id` ended (or was given up): its notifications are
    /// no longer delivered.
    pub(crate) fn ended(&self, id: i64) {
        let mut t = self.0.lock();
        t.waiting.remove(&id);
        if t.current == Some(id) {
            t.current = None;
        }
    }

    /// True if `id` is a subscription of ours, open or being opened.
    pub(crate) fn is_open(&self, id: i64) -> bool {
        let t = self.0.lock();
        t.current == Some(id) || t.waiting.contains_key(&id)
    }

    /// Notifications delivered by current subscriptions so far.
    pub(crate) fn delivered(&self) -> u64 {
        self.0.lock().delivered
    }

    /// Judges one notification that a subscription may carry.
    pub(crate) fn judge(&self, method: &str, params: Option<&Payload>) -> Verdict {
        let tag = tag(params);
        if method == ACKNOWLEDGED {
            if let Some(Some(id)) = tag {
                let mut t = self.0.lock();
                if let Some(tx) = t.waiting.remove(&id) {
                    let filter = params
                        .and_then(|p| p.deserialize::<Acknowledged>().ok())
                        .map(|a| a.notifications)
                        .unwrap_or_default();
                    t.current = Some(id);
                    let _ = tx.send(filter);
                }
            }
            return Verdict::Consumed;
        }
        match tag {
            None => Verdict::Keep,
            Some(id) => {
                let mut t = self.0.lock();
                if id.is_some() && id == t.current {
                    t.delivered += 1;
                    Verdict::Keep
                } else {
                    tracing::debug!(method, subscription = ?id, "dropping a notification of a subscription that is not current");
                    Verdict::Drop
                }
            }
        }
    }
}

/// How the last attempt at a subscription stream for a given version of
/// the wanted set went.
#[derive(Debug, Clone)]
pub(crate) struct Status {
    /// The version of the wanted set it covered.
    pub(crate) version: u64,
    /// The filter the server acknowledged, or why there is none.
    pub(crate) outcome: Result<Filter, Error>,
}

/// What the client wants to be subscribed to, across connections: the
/// resource URIs of `subscribe_resource`, versioned so a caller can wait
/// for the stream that covers its change.
///
/// The two watch channels are made on first use: most sessions never
/// subscribe, and each channel is an allocation an idle session would hold.
#[derive(Debug, Default)]
pub(crate) struct Wanted {
    uris: Mutex<BTreeSet<String>>,
    /// Bumped by every change of the set.
    version: OnceLock<watch::Sender<u64>>,
    /// Reported by the stream after each attempt.
    status: OnceLock<watch::Sender<Status>>,
}

impl Wanted {
    /// The version of the wanted set (0 until the first change).
    pub(crate) fn version(&self) -> &watch::Sender<u64> {
        self.version.get_or_init(|| watch::channel(0).0)
    }

    /// How the last attempt went (version 0, nothing asked for, until the
    /// first report).
    pub(crate) fn status(&self) -> &watch::Sender<Status> {
        self.status.get_or_init(|| {
            watch::channel(Status {
                version: 0,
                outcome: Ok(Filter::default()),
            })
            .0
        })
    }

    /// Adds (`true`) or removes `uri`; returns the new version.
    pub(crate) fn change(&self, uri: &str, add: bool) -> u64 {
        {
            let mut uris = self.uris.lock();
            if add {
                uris.insert(uri.to_owned());
            } else {
                uris.remove(uri);
            }
        }
        let mut version = 0;
        self.version().send_modify(|v| {
            *v += 1;
            version = *v;
        });
        version
    }

    /// Removes `uri` without asking for a new stream: a subscription that
    /// failed (the stream the server has, if any, goes on as it is).
    pub(crate) fn forget(&self, uri: &str) {
        self.uris.lock().remove(uri);
    }

    /// The URIs wanted now.
    pub(crate) fn uris(&self) -> Vec<String> {
        self.uris.lock().iter().cloned().collect()
    }

    /// Records how the stream for `version` went.
    pub(crate) fn report(&self, version: u64, outcome: Result<Filter, Error>) {
        self.status().send_replace(Status { version, outcome });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

    fn payload(v: Value) -> Payload {
        Payload::from_value(&v).unwrap()
    }

    #[test]
    fn the_filter_serializes_only_what_it_asks_for() {
        let f = Filter {
            tools_list_changed: true,
            resource_subscriptions: vec!["file:///a".into()],
            ..Filter::default()
        };
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
        );
        assert!(Filter::default().is_empty() && !f.is_empty());
    }

    #[test]
    fn an_acknowledgement_makes_its_subscription_current_and_others_are_dropped() {
        let tags = Tags::default();
        let mut ack = tags.expect(5);
        let tagged = |id: Value| payload(json!({"_meta": {META_SUBSCRIPTION_ID: id}}));
        // Before the acknowledgement nothing tagged is current.
        assert_eq!(
            tags.judge("notifications/tools/list_changed", Some(&tagged(json!(5)))),
            Verdict::Drop
        );
        let params = payload(json!({
            "_meta": {META_SUBSCRIPTION_ID: 5},
            "notifications": {"toolsListChanged": true}
        }));
        assert_eq!(tags.judge(ACKNOWLEDGED, Some(&params)), Verdict::Consumed);
        assert!(ack.try_recv().unwrap().tools_list_changed);
        let m = "notifications/tools/list_changed";
        assert_eq!(tags.judge(m, Some(&tagged(json!(5)))), Verdict::Keep);
        assert_eq!(tags.judge(m, Some(&tagged(json!(4)))), Verdict::Drop);
        assert_eq!(tags.judge(m, Some(&tagged(json!("5")))), Verdict::Drop);
        // Untagged: the `initialize` era's way, kept.
        assert_eq!(tags.judge(m, None), Verdict::Keep);
        assert_eq!(tags.judge(m, Some(&payload(json!({})))), Verdict::Keep);
        assert_eq!(tags.delivered(), 1);
        assert!(tags.is_open(5));
        tags.ended(5);
        assert!(!tags.is_open(5));
        assert_eq!(tags.judge(m, Some(&tagged(json!(5)))), Verdict::Drop);
    }

    #[test]
    fn the_wanted_set_made_lazily_still_versions_and_reports_in_order() {
        let wanted = Wanted::default();
        // Nothing made until first use, and first use starts at zero.
        assert!(wanted.version.get().is_none() && wanted.status.get().is_none());
        let mut status = wanted.status().subscribe();
        assert_eq!(status.borrow().version, 0);
        assert_eq!(wanted.change("file:///a", true), 1);
        let mut version = wanted.version().subscribe();
        assert_eq!(
            *version.borrow_and_update(),
            1,
            "a late subscriber sees the count"
        );
        assert_eq!(wanted.change("file:///b", true), 2);
        assert!(version.has_changed().unwrap());
        assert_eq!(wanted.uris(), ["file:///a", "file:///b"]);
        wanted.report(2, Ok(Filter::default()));
        assert!(status.has_changed().unwrap());
        assert_eq!(status.borrow_and_update().version, 2);
        assert_eq!(wanted.change("file:///a", false), 3);
        assert_eq!(wanted.uris(), ["file:///b"]);
    }
}
