//! The connection task: runs one connection after another, backing off
//! between them under the reconnect policy, and publishes every state.

use std::sync::Arc;

use crate::base::error::ErrorKind;
use crate::base::state::ConnectionState;
use crate::observe::metrics::Count;
use crate::session::client_core::ClientCore;
use crate::session::connection::{self, Ended, TransportFactory};

/// Runs until the client closes, or a connection fails and no reconnect is
/// allowed.
pub(crate) async fn supervise(shared: Arc<ClientCore>, factory: TransportFactory) {
    // Dropped once a session is ready if no reconnection may follow: it
    // holds what opens the transport (a stdio server's command line and
    // environment, an HTTP server's URL), which an idle session never uses
    // again.
    let mut factory = Some(factory);
    let mut attempt = 0u32;
    // The first attempt starts in the state the client was made with,
    // `Connecting { attempt: 0 }`, so it is not announced: a notice would
    // wake whoever waits on the state (`Client::connect_with` first) for
    // nothing while the server starts. Every later attempt is announced
    // when its backoff ends.
    loop {
        let cause = match connection::run(&shared, &mut factory).await {
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
                && !shared.closing.is_set()
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
        shared
            .metrics
            .count(Count::Reconnect, &crate::observe::labels::Peer::default());
        shared.state.send_replace(ConnectionState::Backoff {
            attempt,
            delay,
            cause,
        });
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = shared.closing.wait() => {
                shared.state.send_replace(ConnectionState::Closed(None));
                return;
            }
        }
        shared
            .state
            .send_replace(ConnectionState::Connecting { attempt });
    }
}
