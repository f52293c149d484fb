//! What every part of one transport shares: its [`Link`] to the server (the HTTP client,
//! the session state, the URL, the event queues) and the vocabulary of
//! requests in flight ([`Exchange`], [`InFlight`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use http::Uri;

use crate::client::HttpClient;
use crate::events::Events;
use crate::session::SessionState;

/// The link to one server that every task of a transport shares: how it
/// reaches the server and what it knows of the session there.
pub(crate) struct Link {
    pub(crate) client: HttpClient,
    pub(crate) session: Arc<SessionState>,
    /// The URL the user gave: the MCP endpoint, or the legacy SSE URL.
    pub(crate) url: Uri,
    pub(crate) events: Events,
    /// Credentials for every request, and what to do on a 401 or 403.
    pub(crate) auth: Option<Arc<dyn mcpwire_auth::Authorizer>>,
}

/// One request's exchange (its POST, then its JSON or SSE answer), polled by
/// the transport's own tasks rather than spawned.
pub(crate) type Exchange = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The requests in flight. They are polled in the driver's task (and the
/// consumer's) rather than each in a task of its own: a spawned task costs a
/// scheduling and, when it ends, a wake-up of the driver, on every request.
/// Here hyper's connection task wakes the poller once when the answer is in.
pub(crate) type InFlight = FuturesUnordered<Exchange>;

/// Polls the requests in flight forever (pending once there are none), so it
/// can run beside whatever the caller is waiting for.
pub(crate) async fn drive(requests: &mut InFlight) {
    loop {
        if requests.next().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}
