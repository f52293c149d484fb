//! The stateless era's notification stream: one `subscriptions/listen`
//! request per connection, whose answer stream stays open and carries the
//! notifications the client opted in to, each tagged with the request's id
//! (see `crate::notify::subscription`). It replaces the `initialize` era's GET
//! stream and `resources/subscribe`, so the same typed API
//! (`Client::list_changed`, `subscribe_resource`) works in both eras.
//!
//! - **What it asks for**: the `list_changed` kinds the server advertises
//!   (as a server of the `initialize` era sends them), and the resources the
//!   user subscribed to. With nothing to ask for, no stream is open.
//! - **A change of the set** opens a new stream with the new filter; the old
//!   one is cancelled once the new one is acknowledged, so nothing is missed
//!   in between, and notifications of the old one are dropped from then on.
//! - **A broken stream** (or one the server ended) is opened again after a
//!   delay: the [`Reconnect`] defaults (250 ms doubling to 30 s, jittered), 8
//!   attempts without progress (a notification delivered, or a stream that
//!   lived 30 s), then it waits for the next change of the set.
//! - **A server without it** (`-32601`) gets a warning in `tracing`; requests
//!   are unaffected, and `subscribe_resource` fails with the server's error.
//! - **Cancelling** a stream is cancelling its request: its answer stream is
//!   closed over HTTP, `notifications/cancelled` is sent over stdio.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_codec::jsonrpc::{ErrorCode, Payload};
use serde_json::json;
use tokio::time::Instant;

use crate::base::error::Error;
use crate::base::options::{Replay, RequestOptions};
use crate::config::Reconnect;
use crate::notify::inbox::Inbox;
use crate::notify::subscription::{Filter, LISTEN};
use crate::requests::pending::Cancel;
use crate::session::client_core::ClientCore;
use crate::session::live::LiveConnection;
use crate::types::ListCapability;

type Outcome = Pin<Box<dyn Future<Output = Result<Payload, Error>> + Send>>;

/// One open stream: dropping it cancels its request.
struct Listen {
    id: i64,
    call: Outcome,
    inbox: Arc<Inbox>,
    /// When it was acknowledged, and the delivery count then.
    since: Instant,
    delivered: u64,
}

impl Listen {
    /// True if it delivered something, or stayed open long enough to count
    /// as working (a quiet server's stream that breaks now and then).
    fn made_progress(&self, long: Duration) -> bool {
        self.inbox.tags.delivered() > self.delivered || self.since.elapsed() >= long
    }
}

impl Drop for Listen {
    fn drop(&mut self) {
        self.inbox.tags.ended(self.id);
    }
}

/// The `list_changed` kinds the server of this connection advertises.
fn advertised(shared: &ClientCore) -> Filter {
    let Some(session) = shared.session() else {
        return Filter::default();
    };
    let on = |c: &Option<ListCapability>| c.as_ref().and_then(|c| c.list_changed) == Some(true);
    let caps = &session.capabilities;
    Filter {
        tools_list_changed: on(&caps.tools),
        prompts_list_changed: on(&caps.prompts),
        resources_list_changed: on(&caps.resources),
        resource_subscriptions: Vec::new(),
    }
}

/// Runs the subscription stream of one connection of the stateless era,
/// until the connection ends (its task is then aborted).
pub(crate) async fn run(shared: Arc<ClientCore>, conn: Arc<LiveConnection>) {
    let lists = advertised(&shared);
    let policy = Reconnect::new();
    let ack_timeout = shared.config.request_timeout;
    let mut version_rx = shared.wanted.version().subscribe();
    let mut current: Option<Listen> = None;
    let mut failures = 0u32;
    loop {
        let version = *version_rx.borrow_and_update();
        let filter = Filter {
            resource_subscriptions: shared.wanted.uris(),
            ..lists.clone()
        };
        if filter.is_empty() {
            drop(current.take());
            shared.wanted.report(version, Ok(Filter::default()));
            if version_rx.changed().await.is_err() {
                return;
            }
            continue;
        }
        match open(&conn, &shared.inbox, &filter, ack_timeout).await {
            Ok((listen, acked)) => {
                tracing::debug!(id = listen.id, ?acked, "subscription stream open");
                if acked != filter {
                    tracing::debug!(asked = ?filter, ?acked, "the server honours part of the subscription");
                }
                // The previous stream, if any, is cancelled here.
                current = Some(listen);
                shared.wanted.report(version, Ok(acked));
                let Some(listen) = current.as_mut() else {
                    continue;
                };
                tokio::select! {
                    outcome = &mut listen.call => {
                        if listen.made_progress(policy.max_delay) {
                            failures = 0;
                        }
                        drop(current.take());
                        match outcome {
                            Ok(_) => tracing::debug!("the server ended the subscription stream"),
                            Err(e) if e.is_closed() => return,
                            Err(e) => tracing::debug!(error = %e, "the subscription stream broke"),
                        }
                    }
                    changed = version_rx.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        continue;
                    }
                }
            }
            Err(e) if e.is_closed() => return,
            Err(e) if e.code() == Some(ErrorCode::METHOD_NOT_FOUND) => {
                tracing::warn!(
                    "the server does not support subscriptions/listen: list changes and resource updates will not be delivered"
                );
                drop(current.take());
                shared.wanted.report(version, Err(e));
                if version_rx.changed().await.is_err() {
                    return;
                }
                continue;
            }
            Err(e) => {
                tracing::debug!(error = %e, "opening the subscription stream failed");
                shared.wanted.report(version, Err(e));
            }
        }
        // Broken, ended or refused: again after a delay, within a budget.
        failures += 1;
        if failures > policy.max_attempts {
            tracing::warn!(
                attempts = policy.max_attempts,
                "the subscription stream keeps failing: list changes and resource updates stop until the subscriptions change or the client reconnects"
            );
            failures = 0;
            if version_rx.changed().await.is_err() {
                return;
            }
            continue;
        }
        tokio::select! {
            () = tokio::time::sleep(policy.delay(failures)) => {}
            changed = version_rx.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

/// Opens a stream with `filter` and waits (at most `timeout`) for its
/// acknowledgement.
async fn open(
    conn: &Arc<LiveConnection>,
    inbox: &Arc<Inbox>,
    filter: &Filter,
    timeout: Duration,
) -> Result<(Listen, Filter), Error> {
    let params = json!({ "notifications": filter });
    // The stream has no deadline: it is meant to stay open.
    let opts = RequestOptions::new().timeout(Duration::MAX);
    let request = conn
        .engine
        .encode_request(LISTEN, Some(&params), &opts, None)?;
    let id = request.id();
    let ack = inbox.tags.expect(id);
    let call = {
        let conn = conn.clone();
        Box::pin(async move {
            conn.engine
                .call_encoded(
                    request,
                    Cow::Borrowed(LISTEN),
                    &opts,
                    Replay::ByMethod,
                    Cancel::Notify,
                )
                .await
        })
    };
    let mut listen = Listen {
        id,
        call,
        inbox: inbox.clone(),
        since: Instant::now(),
        delivered: 0,
    };
    let acked = tokio::select! {
        acked = ack => acked.map_err(|_| Error::protocol("the subscription ended before it was acknowledged"))?,
        outcome = &mut listen.call => {
            return Err(outcome.err().unwrap_or_else(|| {
                Error::protocol("the server ended the subscription before acknowledging it")
            }));
        }
        () = tokio::time::sleep(timeout) => return Err(Error::timeout(timeout)),
    };
    listen.since = Instant::now();
    listen.delivered = inbox.tags.delivered();
    Ok((listen, acked))
}

/// Adds (`add`) or removes a resource subscription and waits, at most
/// `timeout`, for the stream that covers the change: a subscription the
/// server did not acknowledge fails, and is forgotten.
pub(crate) async fn change(
    shared: &ClientCore,
    uri: &str,
    add: bool,
    timeout: Duration,
) -> Result<(), Error> {
    let mut status = shared.wanted.status().subscribe();
    let version = shared.wanted.change(uri, add);
    let seen = tokio::time::timeout(timeout, async {
        status
            .wait_for(|s| s.version >= version)
            .await
            .map(|s| s.outcome.clone())
    })
    .await;
    if !add {
        return Ok(());
    }
    let outcome = match seen {
        Err(_) => Err(Error::timeout(timeout)),
        Ok(Err(_)) => Err(Error::not_ready()),
        Ok(Ok(Ok(acked))) if acked.resource_subscriptions.iter().any(|u| u == uri) => {
            return Ok(());
        }
        Ok(Ok(Ok(_))) => Err(Error::protocol(format!(
            "the server did not accept a subscription to {uri}"
        ))),
        Ok(Ok(Err(e))) => Err(e),
    };
    shared.wanted.forget(uri);
    outcome
}

/// Subscribes again, on a new session of the `initialize` era, to what the
/// user subscribed to before (the server forgot it with the old session).
pub(crate) async fn resubscribe(shared: Arc<ClientCore>, conn: Arc<LiveConnection>) {
    let opts = RequestOptions::new();
    for uri in shared.wanted.uris() {
        let params = json!({ "uri": uri });
        let outcome = conn
            .engine
            .call(
                Cow::Borrowed("resources/subscribe"),
                Some(&params),
                &opts,
                Replay::Allow,
                Cancel::Notify,
            )
            .await;
        if let Err(e) = outcome {
            tracing::warn!(%uri, error = %e, "could not subscribe again after reconnecting");
        }
    }
}
