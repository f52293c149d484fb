//! The `Client` handle and the connection supervisor.

use std::borrow::Cow;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, RwLock};

use mcpwire_codec::jsonrpc::{Message, Payload};
use mcpwire_transport::{CloseReason, Transport};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::{ClientConfig, Keepalive};
use crate::dispatch::Dispatcher;
use crate::driver::{self, DriverExit};
use crate::engine::{Engine, RequestOptions};
use crate::handler::BoxFuture;
use crate::lifecycle::{Initialize, Lifecycle};
use crate::notify::Hub;
use crate::state::ConnectionState;
use crate::types::{Implementation, InitializeResult, ServerCapabilities};
use crate::{Error, ErrorKind};

/// Makes a new transport for each (re)connection attempt.
pub type TransportFactory =
    Box<dyn FnMut() -> BoxFuture<Result<Box<dyn Transport>, Error>> + Send + 'static>;

const CLOSED_BY_USER: &str = "closed by the client";

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
    pub(crate) inner: Arc<Inner>,
    _owner: Arc<Owner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("state", &*self.inner.state.borrow())
            .finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub(crate) config: ClientConfig,
    conn: RwLock<Option<Arc<Engine>>>,
    session: RwLock<Option<Arc<InitializeResult>>>,
    state: watch::Sender<ConnectionState>,
    pub(crate) hub: Arc<Hub>,
    dispatcher: Arc<Dispatcher>,
    lifecycle: Arc<dyn Lifecycle>,
    closing: watch::Sender<bool>,
    next_id: Arc<AtomicI64>,
    task: std::sync::Mutex<Option<JoinHandle<()>>>,
}

/// Dropped with the last `Client` clone: closes the connection.
struct Owner {
    closing: watch::Sender<bool>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.closing.send_replace(true);
    }
}

impl Client {
    /// Connects over `transport`: spawns the connection task, runs the
    /// handshake and returns once the connection is ready (or failed).
    /// Reconnection needs a factory: see [`connect_with`](Self::connect_with).
    pub async fn connect<T: Transport>(transport: T, config: ClientConfig) -> Result<Self, Error> {
        let mut slot = Some(Box::new(transport) as Box<dyn Transport>);
        let factory: TransportFactory = Box::new(move || {
            let t = slot.take();
            Box::pin(async move {
                t.ok_or_else(|| Error::closed("the transport cannot be reopened", None, Vec::new()))
            })
        });
        Self::connect_with(factory, config).await
    }

    /// Connects with a transport `factory`, called for the first connection
    /// and for each reconnection (see [`ClientConfig::reconnect`]).
    pub async fn connect_with(
        factory: TransportFactory,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        let client = Self::start(factory, config);
        let mut states = client.watch_state();
        let outcome = states
            .wait_for(|s| matches!(s, ConnectionState::Ready | ConnectionState::Closed(_)))
            .await
            .map(|s| s.clone());
        match outcome {
            Ok(ConnectionState::Ready) => Ok(client),
            Ok(ConnectionState::Closed(Some(e))) => Err(e),
            _ => Err(Error::closed("connection closed", None, Vec::new())),
        }
    }

    /// Starts connecting in the background and returns at once; watch
    /// [`watch_state`](Self::watch_state) for readiness.
    pub fn start(factory: TransportFactory, config: ClientConfig) -> Self {
        let closing = watch::channel(false).0;
        let inner = Arc::new(Inner {
            hub: Arc::new(Hub::new(config.notification_capacity)),
            dispatcher: Arc::new(Dispatcher::new(config.clone())),
            lifecycle: Arc::new(Initialize {
                config: config.clone(),
            }),
            config,
            conn: RwLock::new(None),
            session: RwLock::new(None),
            state: watch::channel(ConnectionState::Connecting { attempt: 0 }).0,
            closing: closing.clone(),
            next_id: Arc::new(AtomicI64::new(0)),
            task: std::sync::Mutex::new(None),
        });
        let task = tokio::spawn(supervise(inner.clone(), factory));
        *inner.task.lock().expect("task lock") = Some(task);
        Client {
            inner,
            _owner: Arc::new(Owner { closing }),
        }
    }

    /// The current state.
    pub fn state(&self) -> ConnectionState {
        self.inner.state.borrow().clone()
    }

    /// A receiver that sees every state transition.
    pub fn watch_state(&self) -> watch::Receiver<ConnectionState> {
        self.inner.state.subscribe()
    }

    /// The server's `initialize` result for the current session.
    pub fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        self.inner.session.read().expect("session lock").clone()
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

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> Option<String> {
        self.initialize_result().map(|r| r.protocol_version.clone())
    }

    /// Requests in flight on the current connection.
    pub fn in_flight(&self) -> usize {
        self.engine().map_or(0, |e| e.in_flight())
    }

    /// Closes the connection: in-flight requests fail with a `Closed` error,
    /// the transport is closed (for a process: its shutdown sequence), and
    /// this returns when the connection task has finished.
    pub async fn close(&self) {
        self.inner.closing.send_replace(true);
        let task = self.inner.task.lock().expect("task lock").take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }

    pub(crate) fn engine(&self) -> Result<Arc<Engine>, Error> {
        match &*self.inner.conn.read().expect("conn lock") {
            Some(e) => Ok(e.clone()),
            None => Err(match &*self.inner.state.borrow() {
                ConnectionState::Closed(Some(e)) => e.clone(),
                ConnectionState::Backoff { cause, .. } => cause.clone(),
                _ => Error::closed("not connected", None, Vec::new()),
            }),
        }
    }

    /// Sends any request and returns its raw result. `replay` says whether
    /// it may be sent again after a session expiry.
    pub(crate) async fn call_raw<P: Serialize + ?Sized>(
        &self,
        method: &'static str,
        params: Option<&P>,
        opts: &RequestOptions,
        replay: bool,
    ) -> Result<Payload, Error> {
        let engine = self.engine()?;
        engine
            .call(Cow::Borrowed(method), params, opts, replay)
            .await
    }

    /// Sends any request (a method this crate has no typed call for) and
    /// parses its result as `R`.
    pub async fn request<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<&P>,
        opts: &RequestOptions,
    ) -> Result<R, Error> {
        let engine = self.engine()?;
        let payload = engine
            .call(Cow::Owned(method.to_owned()), params, opts, false)
            .await?;
        payload
            .deserialize()
            .map_err(|e| Error::decode("result", e))
    }

    /// Sends a notification.
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        self.engine()?.notify(method, params).await
    }
}

/// How one connection ended.
enum Ended {
    /// Closed on the user's request.
    Local,
    /// Failed or closed unexpectedly; `ready` says whether it got that far.
    Failed { error: Error, ready: bool },
}

async fn supervise(inner: Arc<Inner>, mut factory: TransportFactory) {
    let mut attempt = 0u32;
    let mut closing = inner.closing.subscribe();
    loop {
        inner
            .state
            .send_replace(ConnectionState::Connecting { attempt });
        let cause = match connection(&inner, &mut factory, &mut closing).await {
            Ended::Local => {
                inner.state.send_replace(ConnectionState::Closed(None));
                return;
            }
            Ended::Failed { error, ready } => {
                if ready {
                    attempt = 0;
                }
                error
            }
        };
        let retry = inner.config.reconnect.clone().filter(|p| {
            attempt < p.max_attempts
                && cause.kind() != ErrorKind::UnsupportedVersion
                && !*closing.borrow()
        });
        let Some(policy) = retry else {
            inner
                .state
                .send_replace(ConnectionState::Closed(Some(cause)));
            return;
        };
        attempt += 1;
        let delay = policy.delay(attempt);
        tracing::info!(attempt, ?delay, error = %cause, "reconnecting");
        inner.state.send_replace(ConnectionState::Backoff {
            attempt,
            delay,
            cause,
        });
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = until_true(&mut closing) => {
                inner.state.send_replace(ConnectionState::Closed(None));
                return;
            }
        }
    }
}

/// Runs one transport session from open to close.
async fn connection(
    inner: &Arc<Inner>,
    factory: &mut TransportFactory,
    closing: &mut watch::Receiver<bool>,
) -> Ended {
    let transport = tokio::select! {
        t = factory() => t,
        () = until_true(closing) => return Ended::Local,
    };
    let transport = match transport {
        Ok(t) => t,
        Err(error) => {
            return Ended::Failed {
                error,
                ready: false,
            };
        }
    };
    let engine = Arc::new(Engine::new(
        transport.sender(),
        inner.next_id.clone(),
        inner.config.request_timeout,
    ));
    let driver = driver::run(
        transport,
        engine.clone(),
        inner.hub.clone(),
        inner.dispatcher.clone(),
        inner.config.grant_window,
    );
    tokio::pin!(driver);
    inner.state.send_replace(ConnectionState::Initializing);

    let handshake = inner.lifecycle.handshake(&engine);
    let init = tokio::select! {
        r = handshake => r,
        exit = &mut driver => {
            let error = closed_error(&engine, exit);
            engine.close_all(error.clone());
            return Ended::Failed { error, ready: false };
        }
        () = until_true(closing) => {
            engine.request_close(CLOSED_BY_USER);
            let exit = (&mut driver).await;
            engine.close_all(closed_error(&engine, exit));
            return Ended::Local;
        }
    };
    let init = match init {
        Ok(init) => init,
        Err(error) => {
            engine.request_close(format!("handshake failed: {error}"));
            (&mut driver).await;
            engine.close_all(error.clone());
            return Ended::Failed {
                error,
                ready: false,
            };
        }
    };
    tracing::debug!(version = %init.protocol_version, server = %init.server_info.name, "session ready");
    *inner.session.write().expect("session lock") = Some(Arc::new(init));
    *inner.conn.write().expect("conn lock") = Some(engine.clone());
    inner.state.send_replace(ConnectionState::Ready);

    let keepalive = inner
        .config
        .keepalive
        .clone()
        .map(|k| tokio::spawn(keepalive(engine.clone(), k)));
    let mut user_closing = false;
    let exit = loop {
        // Biased, driver first: every answer wakes this task, and the driver
        // completes its caller before the rarely-ready branches are polled
        // (each poll of those takes a lock); no random branch order either.
        tokio::select! {
            biased;
            exit = &mut driver => break exit,
            () = until_true(closing), if !user_closing => {
                user_closing = true;
                inner.state.send_replace(ConnectionState::Closing);
                engine.request_close(CLOSED_BY_USER);
            }
            () = engine.reinit.notified() => {
                tokio::spawn(reinitialize(inner.clone(), engine.clone()));
            }
        }
    };
    if let Some(k) = keepalive {
        k.abort();
    }
    *inner.conn.write().expect("conn lock") = None;
    let local = exit.local.as_deref() == Some(CLOSED_BY_USER);
    let error = closed_error(&engine, exit);
    engine.close_all(error.clone());
    if local {
        Ended::Local
    } else {
        Ended::Failed { error, ready: true }
    }
}

fn closed_error(engine: &Engine, exit: DriverExit) -> Error {
    let tail = match &exit.reason {
        Some(CloseReason::Exited(info)) if !info.stderr_tail.is_empty() => info.stderr_tail.clone(),
        _ => engine.stderr_tail(),
    };
    let why = exit.local.unwrap_or_else(|| "connection closed".into());
    Error::closed(why, exit.reason, tail)
}

/// Pings every interval; closes the connection after too many failures.
async fn keepalive(engine: Arc<Engine>, k: Keepalive) {
    let opts = RequestOptions::new().timeout(k.timeout);
    let mut failures = 0u32;
    loop {
        tokio::time::sleep(k.interval).await;
        match engine
            .call::<()>(Cow::Borrowed("ping"), None, &opts, true)
            .await
        {
            Ok(_) => failures = 0,
            Err(e) if e.is_closed() => return,
            Err(e) => {
                failures += 1;
                tracing::warn!(failures, error = %e, "keepalive ping failed");
                if failures >= k.max_failures {
                    engine.request_close(format!("keepalive failed {failures} times in a row"));
                    return;
                }
            }
        }
    }
}

/// The session expired under some requests: initialize again, then send
/// again what is safe and fail the rest with `OutcomeUnknown`.
async fn reinitialize(inner: Arc<Inner>, engine: Arc<Engine>) {
    let result = inner.lifecycle.handshake(&engine).await;
    let frames = engine
        .expired
        .lock()
        .expect("expired lock")
        .take()
        .unwrap_or_default();
    if let Ok(init) = &result {
        *inner.session.write().expect("session lock") = Some(Arc::new(init.clone()));
    }
    for (frame, cause) in frames {
        let Ok(Message::Request(req)) = Message::parse(frame.clone()) else {
            continue;
        };
        let mcpwire_codec::jsonrpc::Id::Number(id) = req.id else {
            continue;
        };
        let Some((replay, method)) = engine.replay_info(id) else {
            continue;
        };
        match &result {
            Err(e) => {
                engine.complete(id, Err(e.clone()));
            }
            Ok(_) if replay => {
                if let Err(e) = engine.sender().send(frame).await {
                    engine.complete(id, Err(Error::send(e)));
                }
            }
            Ok(_) => {
                engine.complete(id, Err(Error::outcome_unknown(&method, cause)));
            }
        }
    }
}

/// Waits until `rx` holds `true` (or its sender is gone). Returns `()` so no
/// watch guard is held across an await.
async fn until_true(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|c| *c).await;
}
