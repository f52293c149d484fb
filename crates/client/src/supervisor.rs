//! The connection task: runs one connection after another, backing off
//! between them under the reconnect policy, and publishes every state.

use std::sync::Arc;

use crate::connection::{self, Ended, TransportFactory, until_true};
use crate::error::ErrorKind;
use crate::shared::Shared;
use crate::state::ConnectionState;

/// Runs until the client closes, or a connection fails and no reconnect is
/// allowed.
pub(crate) async fn supervise(shared: Arc<Shared>, mut factory: TransportFactory) {
    let mut attempt = 0u32;
    let mut closing = shared.closing.subscribe();
    loop {
        shared
            .state
            .send_replace(ConnectionState::Connecting { attempt });
        let cause = match connection::run(&shared, &mut factory, &mut closing).await {
            Ended::Local => {
                shared.state.send_replace(ConnectionState::Closed(None));
                return;
            }
            Ended::Failed { error, ready } => {
                if ready {
                    attempt = 0;
                }
                error
            }
        };
        let retry = shared.config.reconnect.clone().filter(|p| {
            attempt < p.max_attempts
                && cause.kind() != ErrorKind::UnsupportedVersion
                && !*closing.borrow()
        });
        let Some(policy) = retry else {
            shared
                .state
                .send_replace(ConnectionState::Closed(Some(cause)));
            return;
        };
        attempt += 1;
        let delay = policy.delay(attempt);
        tracing::info!(attempt, ?delay, error = %cause, "reconnecting");
        shared.state.send_replace(ConnectionState::Backoff {
            attempt,
            delay,
            cause,
        });
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = until_true(&mut closing) => {
                shared.state.send_replace(ConnectionState::Closed(None));
                return;
            }
        }
    }
}
