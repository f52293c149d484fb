//! The [`Client`] handle: connecting, state, what the server said about
//! itself, and closing. The requests are in `crate::api`.

use std::future::Future;
use std::sync::Arc;

use mcpwire_transport::Transport;
use tokio::sync::watch;

use crate::base::boxed::unbox;
use crate::base::error::Error;
use crate::base::state::ConnectionState;
use crate::base::version::Era;
use crate::config::ClientConfig;
use crate::session::client_core::ClientCore;
use crate::session::connection::TransportFactory;
use crate::session::live::LiveConnection;
use crate::session::supervisor::supervise;
use crate::types::{Implementation, InitializeResult, ServerCapabilities};

/// A connection to one MCP server. Cheap to clone; every clone drives the
/// same connection. The connection closes when [`close`](Self::close) is
/// called or the last clone is dropped.
///
/// A background task (spawned on the current tokio runtime by
/// [`connect`](Self::connect)) owns the transport: it reads, routes and
/// reconnects. Requests do not pass through it: each call encodes its request
/// and queues it on the transport from the caller's own task.
#[derive(Clone)]
pub struct Client {
    pub(crate) shared: Arc<ClientCore>,
    _owner: Arc<Owner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("state", &*self.shared.state.borrow())
            .field("era", &self.shared.era())
            .finish_non_exhaustive()
    }
}

/// Dropped with the last `Client` clone: closes the connection.
struct Owner {
    shared: Arc<ClientCore>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.shared.closing.set();
    }
}

impl Client {
    /// Connects over `transport`: spawns the connection task, runs the
    /// handshake and returns once the connection is ready (or failed).
    /// Reconnection needs a factory: see [`connect_with`](Self::connect_with).
    pub fn connect<T: Transport>(
        transport: T,
        config: ClientConfig,
    ) -> impl Future<Output = Result<Self, Error>> + Send {
        let mut slot = Some(Box::new(transport) as Box<dyn Transport>);
        let factory: TransportFactory = Box::new(move || {
            let t = slot.take();
            Box::pin(async move { t.ok_or_else(Error::not_reopenable) })
        });
        Self::connect_with(factory, config)
    }

    /// Connects with a transport `factory`, called for the first connection
    /// and for each reconnection (see [`ClientConfig::reconnect`]).
    ///
    /// Nothing happens until the future is first polled. The configuration
    /// waits in a box meanwhile: the future stays small (a caller opening
    /// many sessions at once holds one per session), where an `async fn`
    /// would keep a copy of the configuration in every nested future.
    pub fn connect_with(
        factory: TransportFactory,
        config: ClientConfig,
    ) -> impl Future<Output = Result<Self, Error>> + Send {
        let config = Box::new(config);
        async move {
            // By value: the box is freed now, where `*config` would keep
            // it until the handshake is over.
            let client = Self::start(factory, unbox(config));
            let mut states = client.watch_state();
            let outcome = states
                .wait_for(|s| matches!(s, ConnectionState::Ready | ConnectionState::Closed(_)))
                .await
                .map(|s| s.clone());
            match outcome {
                Ok(ConnectionState::Ready) => Ok(client),
                Ok(ConnectionState::Closed(Some(e))) => Err(e),
                _ => Err(Error::closed(None, None, Vec::new())),
            }
        }
    }

    /// Starts connecting in the background and returns at once; watch
    /// [`watch_state`](Self::watch_state) for readiness.
    pub fn start(factory: TransportFactory, config: ClientConfig) -> Self {
        let shared = Arc::new(ClientCore::new(config));
        let task = tokio::spawn(supervise(shared.clone(), factory));
        *shared.task.lock() = Some(task);
        Client {
            _owner: Arc::new(Owner {
                shared: shared.clone(),
            }),
            shared,
        }
    }

    /// The current state.
    pub fn state(&self) -> ConnectionState {
        self.shared.state.borrow().clone()
    }

    /// A receiver that sees every state transition.
    pub fn watch_state(&self) -> watch::Receiver<ConnectionState> {
        self.shared.state.subscribe()
    }

    /// A counter of the sessions started: 1 after the first handshake, then
    /// one more after each reconnection and each re-initialization of an
    /// expired session. A new session is a server that may have forgotten
    /// everything (a restarted process, an HTTP server that dropped the
    /// session): whatever was listed from it should be listed again. The
    /// session is published before the counter moves.
    pub fn sessions(&self) -> watch::Receiver<u64> {
        self.shared.watch_sessions()
    }

    /// The server's `initialize` result for the current session.
    pub fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        self.shared.session()
    }

    /// Who the server is.
    pub fn server_info(&self) -> Option<Implementation> {
        self.initialize_result().map(|r| r.server_info.clone())
    }

    /// What the server supports.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        self.initialize_result().map(|r| r.capabilities.clone())
    }

    /// The server's instructions for a model, if it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.initialize_result()
            .and_then(|r| r.instructions.clone())
    }

    /// The negotiated protocol version (in the stateless era, the one
    /// every request declares).
    pub fn protocol_version(&self) -> Option<String> {
        self.initialize_result().map(|r| r.protocol_version.clone())
    }

    /// The era the current session speaks: [`Era::Legacy`] (`initialize`)
    /// or [`Era::Modern`] (stateless, 2026-07-28), as configured or as the
    /// probe found (see [`ClientConfig::era`]).
    pub fn era(&self) -> Option<Era> {
        self.shared.era()
    }

    /// Requests in flight on the current connection.
    pub fn in_flight(&self) -> usize {
        self.conn().map_or(0, |c| c.engine.in_flight())
    }

    /// Closes the connection: in-flight requests fail with a `Closed` error,
    /// the transport is closed (for a process: its shutdown sequence), and
    /// this returns when the connection task has finished.
    pub async fn close(&self) {
        self.shared.closing.set();
        let task = self.shared.task.lock().take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }

    /// The ready connection, or why there is none.
    pub(crate) fn conn(&self) -> Result<Arc<LiveConnection>, Error> {
        self.shared.conn()
    }
}
