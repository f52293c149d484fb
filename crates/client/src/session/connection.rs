//! The life of one connection: open a transport, start the driver, run the
//! lifecycle's handshake, serve while ready (keepalive, re-initializing an
//! expired session), and end, failing whatever still waits. The supervisor
//! (`crate::session::supervisor`) runs one connection after another.

use std::borrow::Cow;
use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use mcpwire_codec::jsonrpc::{Id, Message};
use mcpwire_transport::{CloseReason, Outgoing, Transport};
use tracing::Instrument as _;

use crate::base::boxed::unbox;
use crate::base::error::Error;
use crate::base::handler::BoxFuture;
use crate::base::options::{Replay, RequestOptions};
use crate::base::signal::{CloseRequest, SIGNAL_SESSION};
use crate::base::state::ConnectionState;
use crate::base::version::Era;
use crate::config::Keepalive;
use crate::observe::labels::Peer;
use crate::observe::metrics::Count;
use crate::observe::telemetry::SESSION_TARGET;
use crate::requests::engine::Engine;
use crate::requests::pending::Cancel;
use crate::session::client_core::ClientCore;
use crate::session::driver::{self, DriverExit};
use crate::session::era_cache;
use crate::session::lifecycle::{self, Session, Target};
use crate::session::listen;
use crate::session::live::LiveConnection;

/// Makes a new transport for each (re)connection attempt. An error here
/// should say why the transport could not be opened:
/// [`Error::connect`].
pub type TransportFactory =
    Box<dyn FnMut() -> BoxFuture<Result<Box<dyn Transport>, Error>> + Send + 'static>;

/// How one connection ended.
pub(crate) enum Ended {
    /// Closed on the user's request.
    Local,
    /// Failed or closed unexpectedly; `ready` says whether it got that far.
    Failed { error: Error, ready: bool },
}

/// Runs one connection from open to close. A server that exits at the era
/// probe (a stdio server of the `initialize` era that does not take unknown
/// methods well) is spawned once more and initialized directly.
pub(crate) async fn run(shared: &Arc<ClientCore>, factory: &mut Option<TransportFactory>) -> Ended {
    let mut skip_probe = false;
    loop {
        match attempt(shared, factory, skip_probe).await {
            Attempt::Ended(ended) => return ended,
            Attempt::ProbeKilled(key, error) => {
                if skip_probe {
                    return Ended::Failed {
                        error,
                        ready: false,
                    };
                }
                tracing::info!(error = %error, "the server closed at the server/discover probe: starting it again for initialize");
                if let Some(key) = key {
                    era_cache::remember(&key, Era::Legacy, shared.config.era_cache_file.as_deref());
                }
                skip_probe = true;
            }
        }
    }
}

/// How one attempt at a connection ended.
enum Attempt {
    Ended(Ended),
    /// The transport closed while the era probe waited: the server's key
    /// and the close.
    ProbeKilled(Option<String>, Error),
}

async fn attempt(
    shared: &Arc<ClientCore>,
    factory: &mut Option<TransportFactory>,
    skip_probe: bool,
) -> Attempt {
    let Some(open) = factory.as_mut() else {
        return Attempt::Ended(Ended::Failed {
            error: Error::not_reopenable(),
            ready: false,
        });
    };
    let transport = tokio::select! {
        t = open() => t,
        () = shared.closing.wait() => return Attempt::Ended(Ended::Local),
    };
    let transport = match transport {
        Ok(t) => t,
        Err(error) => {
            return Attempt::Ended(Ended::Failed {
                error,
                ready: false,
            });
        }
    };
    // Before the engine takes the transport's sender, so every frame of
    // the connection is shown.
    let transport = match &shared.config.tap {
        Some(tap) => mcpwire_transport::tap_transport(transport, tap.clone()),
        None => transport,
    };
    let info = transport.info();
    let key = era_cache::key(&info);
    // No connection is ready now: nothing reads the cache's server under way.
    shared.inbox.cache.set_server(key.as_deref());
    let target = Arc::new(Target {
        key,
        skip_probe,
        inbox: Some(shared.inbox.clone()),
        ..Target::default()
    });
    let engine = Engine::new(
        transport.sender(),
        shared.next_id.clone(),
        shared.config.request_timeout,
        Arc::new(Peer::from_info(&info, shared.config.server_label.clone())),
        shared.metrics.clone(),
    );
    let conn = Arc::new(LiveConnection::new(engine));
    let window = NonZeroU32::new(shared.config.grant_window).unwrap_or(NonZeroU32::MIN);
    let driver = driver::run(
        transport,
        conn.clone(),
        shared.inbox.clone(),
        shared.dispatcher.clone(),
        window,
    );
    tokio::pin!(driver);
    shared.state.send_replace(ConnectionState::Initializing);
    // Boxed, and the session too: both are large and live only while the
    // connection starts, and would otherwise be part of every idle
    // session's task for its whole life.
    match Box::pin(handshake(shared, &conn, driver.as_mut(), &target)).await {
        Ok(session) => {
            if shared.config.reconnect.is_none() {
                // No connection follows this one.
                *factory = None;
            }
            Attempt::Ended(serve(shared, conn, Box::new(session), driver, target).await)
        }
        Err(Ended::Failed { error, .. }) if target.probing.load(Ordering::Acquire) => {
            Attempt::ProbeKilled(target.key.clone(), error)
        }
        Err(ended) => Attempt::Ended(ended),
    }
}

/// Runs the lifecycle's handshake while the driver reads its answers.
async fn handshake<D: Future<Output = DriverExit>>(
    shared: &ClientCore,
    conn: &LiveConnection,
    mut driver: Pin<&mut D>,
    target: &Target,
) -> Result<Session, Ended> {
    let outcome = tokio::select! {
        r = lifecycle::handshake(&shared.config, &conn.engine, target) => r,
        exit = driver.as_mut() => {
            let error = closed_error(conn, exit);
            finish(conn, &error);
            return Err(Ended::Failed { error, ready: false });
        }
        () = shared.closing.wait() => {
            conn.engine.signal.request_close(CloseRequest::User);
            let exit = driver.await;
            finish(conn, &closed_error(conn, exit));
            return Err(Ended::Local);
        }
    };
    match outcome {
        Ok(init) => Ok(init),
        Err(error) => {
            conn.engine
                .signal
                .request_close(CloseRequest::HandshakeFailed);
            driver.await;
            finish(conn, &error);
            Err(Ended::Failed {
                error,
                ready: false,
            })
        }
    }
}

/// Serves the ready connection until it closes.
async fn serve<D: Future<Output = DriverExit>>(
    shared: &Arc<ClientCore>,
    conn: Arc<LiveConnection>,
    session: Box<Session>,
    mut driver: Pin<&mut D>,
    target: Arc<Target>,
) -> Ended {
    let era = session.era;
    let peer = conn.engine.peer();
    peer.set_version(&session.result.protocol_version);
    conn.engine.signal.raise(SIGNAL_SESSION);
    let span = session_span(&session, peer);
    span.in_scope(|| tracing::info!("session ready"));
    let started = std::time::Instant::now();
    shared.set_session(unbox(session));
    // Ready once the driver has read the transport's session for the
    // spans (SIGNAL_SESSION, raised above): the first call names it too.
    let mut ready = false;
    // The stateless era's notification stream; in the other era, the
    // subscriptions the old session held are asked for again.
    let listener = match era {
        Era::Modern => Some(tokio::spawn(listen::run(shared.clone(), conn.clone()))),
        _ if !shared.wanted.uris().is_empty() => Some(tokio::spawn(listen::resubscribe(
            shared.clone(),
            conn.clone(),
        ))),
        _ => None,
    };

    let keepalive = shared
        .config
        .keepalive
        .clone()
        .map(|k| tokio::spawn(keepalive(conn.clone(), k, era)));
    let mut user_closing = false;
    // Made once: the loop polls it on every wake-up.
    let close_asked = shared.closing.wait();
    tokio::pin!(close_asked);
    let exit = loop {
        // Biased, driver first: every answer wakes this task, and the driver
        // completes its caller before the rarely-ready branches are polled
        // (each poll of those takes a lock); no random branch order either.
        tokio::select! {
            biased;
            exit = driver.as_mut() => break exit,
            () = conn.session_read.notified(), if !ready => {
                ready = true;
                shared.set_conn(Some(conn.clone()));
                shared.state.send_replace(ConnectionState::Ready);
            }
            () = &mut close_asked, if !user_closing => {
                user_closing = true;
                shared.state.send_replace(ConnectionState::Closing);
                conn.engine.signal.request_close(CloseRequest::User);
            }
            () = conn.reinit.notified() => {
                tokio::spawn(
                    reinitialize(shared.clone(), conn.clone(), target.clone())
                        .instrument(span.clone()),
                );
            }
        }
    };
    if let Some(k) = keepalive {
        k.abort();
    }
    if let Some(l) = listener {
        l.abort();
    }
    shared.set_conn(None);
    let local = exit.local == Some(CloseRequest::User);
    let error = closed_error(&conn, exit);
    finish(&conn, &error);
    let how = if local { "closed" } else { "lost" };
    span.record("mcpwire.session.end", how);
    span.in_scope(|| tracing::info!(end = how, "session ended"));
    conn.engine.metrics().session_ended(
        started.elapsed().as_secs_f64(),
        (!local).then_some("closed"),
        peer,
    );
    if local {
        Ended::Local
    } else {
        Ended::Failed { error, ready: true }
    }
}

/// The span of one session, from ready to its end: its era, version,
/// transport and server, and how it ended (`mcpwire.session.end`:
/// `closed` by the user or `lost`).
fn session_span(session: &Session, peer: &Peer) -> tracing::Span {
    let info = &session.result.server_info;
    tracing::info_span!(
        target: SESSION_TARGET,
        "mcp session",
        otel.name = "mcp session",
        otel.kind = "client",
        mcp.protocol.version = %session.result.protocol_version,
        mcpwire.era = %session.era,
        network.transport = peer.transport,
        network.protocol.name = peer.protocol,
        server.address = peer.address.as_ref().map(|(h, _)| &**h),
        mcpwire.server.name = %info.name,
        mcpwire.server.version = %info.version,
        mcpwire.session.end = tracing::field::Empty,
    )
}

/// Fails every request still waiting and stops every server-request handler.
fn finish(conn: &LiveConnection, error: &Error) {
    conn.engine.close_all(error.clone());
    conn.running.abort_all();
}

fn closed_error(conn: &LiveConnection, exit: DriverExit) -> Error {
    let tail = match &exit.reason {
        Some(CloseReason::Exited(info)) if !info.stderr_tail.is_empty() => info.stderr_tail.clone(),
        _ => conn.stderr_tail(),
    };
    Error::closed(exit.local, exit.reason, tail)
}

/// Checks the server is alive every interval (`ping`, or the stateless
/// era's `server/discover`); closes the connection after too many failures.
async fn keepalive(conn: Arc<LiveConnection>, k: Keepalive, era: Era) {
    let engine = &conn.engine;
    let opts = RequestOptions::new().timeout(k.timeout);
    let mut failures = 0u32;
    loop {
        tokio::time::sleep(k.interval).await;
        let ping = engine.call::<()>(
            Cow::Borrowed(era.liveness_method()),
            None,
            &opts,
            Replay::Allow,
            Cancel::Notify,
        );
        match ping.await {
            Ok(_) => failures = 0,
            Err(e) if e.is_closed() => return,
            Err(e) => {
                failures += 1;
                tracing::warn!(failures, error = %e, "keepalive ping failed");
                if failures >= k.max_failures {
                    engine
                        .signal
                        .request_close(CloseRequest::Keepalive { failures });
                    return;
                }
            }
        }
    }
}

/// The session expired under some requests: initialize again, then send
/// again what is safe and fail the rest with `OutcomeUnknown`.
async fn reinitialize(shared: Arc<ClientCore>, conn: Arc<LiveConnection>, target: Arc<Target>) {
    let engine = &conn.engine;
    engine.metrics().count(Count::SessionExpired, engine.peer());
    tracing::info!("the server expired the session: initializing again");
    let result = lifecycle::handshake(&shared.config, engine, &target).await;
    let frames = conn.take_expired();
    if let Ok(session) = &result {
        engine.peer().set_version(&session.result.protocol_version);
        engine.signal.raise(SIGNAL_SESSION);
        shared.set_session(session.clone());
    }
    for (frame, cause) in frames {
        let Ok(Message::Request(req)) = Message::parse(frame.clone()) else {
            continue;
        };
        let Id::Number(id) = req.id else {
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
                engine.metrics().count(Count::Replay, engine.peer());
                tracing::debug!(id, %method, "sent again on the new session");
                let out = Outgoing::request(frame, Id::Number(id), method);
                if let Err(e) = engine.sender().send(out).await {
                    engine.complete(id, Err(Error::send(e)));
                }
            }
            Ok(_) => {
                engine.complete(id, Err(Error::outcome_unknown(&method, cause)));
            }
        }
    }
}
