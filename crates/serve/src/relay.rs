//! What a session passes on from the fleet without being asked: a change
//! of the catalogue as `list_changed`, and the servers' log messages.
//! Each relay runs on its own task, starts once the client is initialized,
//! and ends with the session (its task is aborted).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use mcpwire_client::CancellationToken;
use mcpwire_client::types::{LogMessage, LoggingLevel};
use mcpwire_manager::Manager;
use mcpwire_transport::FrameSender;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinSet;

use crate::wire;

/// The least severe level the client wants (`logging/setLevel`); `None`
/// until it says, and then every message goes.
#[derive(Debug, Default)]
pub(crate) struct LogLevel(Mutex<Option<LoggingLevel>>);

impl LogLevel {
    pub(crate) fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    fn wants(&self, level: LoggingLevel) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none_or(|least| level >= least)
    }
}

/// Tells the client when the fleet's catalogue changes (a server's lists
/// changed, a server started or stopped). The catalogue says which servers
/// changed, not which kinds of item, so all three `list_changed` go out;
/// the manager has already debounced them.
pub(crate) async fn list_changed(
    manager: Manager,
    sender: FrameSender,
    initialized: CancellationToken,
) {
    let mut version = manager.watch_catalogue();
    initialized.cancelled().await;
    version.borrow_and_update();
    while version.changed().await.is_ok() {
        for kind in ["tools", "prompts", "resources"] {
            let method = format!("notifications/{kind}/list_changed");
            if let Some(frame) = wire::notification::<Value>(&method, None) {
                // Waits when the client reads slowly: this task only.
                let _ = sender.send(frame).await;
            }
        }
    }
}

/// How many log messages may wait for the client before a server's
/// relay waits in turn (and the client's own queue drops the oldest).
const LOG_QUEUE: usize = 64;

/// Passes every server's log messages on to the client as
/// `notifications/message`, the logger named `{server}` or
/// `{server}/{logger}`, at or above the level the client set. A server
/// whose client appears later (a lazy start, a restart) is picked up at the
/// next change of the catalogue.
pub(crate) async fn logs(
    manager: Manager,
    sender: FrameSender,
    initialized: CancellationToken,
    level: Arc<LogLevel>,
) {
    initialized.cancelled().await;
    let (tx, mut rx) = mpsc::channel::<Value>(LOG_QUEUE);
    let mut catalogue = manager.watch_catalogue();
    // The forwarding tasks: dropped (aborted) with this one.
    let mut forwarding = JoinSet::new();
    let mut subscribed = HashSet::new();
    loop {
        for name in manager.servers() {
            if subscribed.contains(&name) {
                continue;
            }
            if let Some(client) = manager.client(&name) {
                subscribed.insert(name.clone());
                forwarding.spawn(forward(name, client.log_messages(), tx.clone()));
            }
        }
        tokio::select! {
            Some(params) = rx.recv() => {
                let wanted = serde_json::from_value::<LoggingLevel>(params["level"].clone())
                    .is_ok_and(|l| level.wants(l));
                if wanted
                    && let Some(frame) = wire::notification("notifications/message", Some(&params))
                {
                    let _ = sender.send(frame).await;
                }
            }
            Some(Ok(name)) = forwarding.join_next() => {
                // Its client is gone: subscribe again when it is back.
                subscribed.remove(&name);
            }
            changed = catalogue.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

/// Forwards one server's log messages until its client closes; returns
/// the server's name.
async fn forward(
    server: String,
    mut messages: broadcast::Receiver<LogMessage>,
    tx: mpsc::Sender<Value>,
) -> String {
    loop {
        match messages.recv().await {
            Ok(message) => {
                let logger = match &message.logger {
                    Some(own) => format!("{server}/{own}"),
                    None => server.clone(),
                };
                let params =
                    json!({"level": message.level, "logger": logger, "data": message.data});
                if tx.send(params).await.is_err() {
                    return server;
                }
            }
            // Older messages were dropped by the client's bounded queue:
            // go on with the newer ones.
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return server,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_is_wanted_until_the_client_sets_one() {
        let level = LogLevel::default();
        assert!(level.wants(LoggingLevel::Debug));
        level.set(LoggingLevel::Warning);
        assert!(!level.wants(LoggingLevel::Info));
        assert!(level.wants(LoggingLevel::Warning));
        assert!(level.wants(LoggingLevel::Emergency));
    }
}
