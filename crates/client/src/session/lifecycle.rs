//! Lifecycles: how an open transport becomes a usable session, in either
//! era.
//!
//! The request engine does not know how a session starts; a lifecycle runs
//! over it like any caller, and leaves on it the [`Stamp`] every later
//! request carries. Three of them:
//!
//! - [`Initialize`]: the stateful `initialize` handshake of 2024-11-05 to
//!   2025-11-25 (empty stamp).
//! - [`Discover`]: the stateless revision (2026-07-28): `server/discover`
//!   with the `_meta` stamp, one retry at a version the server names in an
//!   unsupported-version error (`-32022`).
//! - [`Auto`]: the probe. `server/discover`, bounded in time; a stateless
//!   answer (or a `-32022`) keeps the stateless era, anything else falls back
//!   to `initialize`. The outcome is cached per server (`crate::session::era_cache`).
//!
//! The connection (`crate::session::connection`) runs whichever lifecycle the client
//! was built with, on the first connection and after a session expired, and
//! spawns a stdio server again if the probe made it exit.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcpwire_codec::jsonrpc::{ErrorCode, Payload};
use mcpwire_transport::TransportError;
use serde_json::{Value, json};

use crate::base::error::{Error, ErrorKind};
use crate::base::options::{Replay, RequestOptions};
use crate::base::stamp::Stamp;
use crate::base::version::{
    Era, EraChoice, LATEST_VERSION, MODERN_VERSION, is_modern, is_supported,
};
use crate::cache::view::Lifetime;
use crate::config::ClientConfig;
use crate::notify::inbox::Inbox;
use crate::requests::engine::Engine;
use crate::requests::pending::Cancel;
use crate::session::era_cache;
use crate::types::{DiscoverResult, InitializeParams, InitializeResult};

/// The code of `UnsupportedProtocolVersionError` (2026-07-28).
pub(crate) const UNSUPPORTED_VERSION: ErrorCode = ErrorCode(-32022);

/// What a handshake found: the server, and the era it speaks.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) result: InitializeResult,
    pub(crate) era: Era,
}

pub(crate) type HandshakeFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Session, Error>> + Send + 'a>>;

/// What a lifecycle knows of the server it starts a session with.
#[derive(Default)]
pub(crate) struct Target {
    /// The era cache's key for the server, if its transport names one.
    pub(crate) key: Option<String>,
    /// The probe is under way: if the transport dies now, the server is one
    /// of the `initialize` era that exited at the probe.
    pub(crate) probing: AtomicBool,
    /// Go straight to `initialize` (the probe already killed a server).
    pub(crate) skip_probe: bool,
    /// The client's notification inbox, whose response cache may hold a
    /// fresh `server/discover` answer of this server.
    pub(crate) inbox: Option<Arc<Inbox>>,
}

/// Runs the handshake of the lifecycle `config` asks for over `engine`
/// (on a fresh engine, and again after the session expired); the result
/// describes the server. The lifecycle borrows the client's configuration
/// and lives in the returned future only: an idle session keeps no copy.
pub(crate) fn handshake<'a>(
    config: &'a ClientConfig,
    engine: &'a Engine,
    target: &'a Target,
) -> HandshakeFuture<'a> {
    match &config.era {
        EraChoice::Auto => Box::pin(async move { Auto { config }.run(engine, target).await }),
        EraChoice::Legacy => Box::pin(async move {
            Initialize::new(config, LATEST_VERSION, false)
                .run(engine)
                .await
        }),
        EraChoice::Modern => Box::pin(async move {
            Discover::new(config, MODERN_VERSION)
                .run(engine, target, config.init_timeout)
                .await
        }),
        EraChoice::Version(v) if is_modern(v) || !is_supported(v) => Box::pin(async move {
            Discover::new(config, v)
                .run(engine, target, config.init_timeout)
                .await
        }),
        EraChoice::Version(v) => {
            Box::pin(async move { Initialize::new(config, v, true).run(engine).await })
        }
    }
}

/// The `initialize` / `notifications/initialized` handshake with version
/// negotiation.
pub(crate) struct Initialize<'c> {
    config: &'c ClientConfig,
    /// The version offered.
    version: &'c str,
    /// Refuse any other version the server picks.
    exact: bool,
    /// How long `initialize` may take.
    timeout: Duration,
}

impl<'c> Initialize<'c> {
    fn new(config: &'c ClientConfig, version: &'c str, exact: bool) -> Self {
        Self {
            config,
            version,
            exact,
            timeout: config.init_timeout,
        }
    }

    async fn run(&self, engine: &Engine) -> Result<Session, Error> {
        engine.set_stamp(Stamp::none());
        let params = InitializeParams {
            protocol_version: self.version.to_owned(),
            capabilities: self.config.capabilities(),
            client_info: self.config.client_info.clone(),
            meta: None,
        };
        let opts = RequestOptions::new().timeout(self.timeout);
        // `initialize` is never cancelled, as the specification asks,
        // nor sent twice.
        let payload = engine
            .call(
                Cow::Borrowed("initialize"),
                Some(&params),
                &opts,
                Replay::ByMethod,
                Cancel::Silent,
            )
            .await?;
        let result: InitializeResult = payload
            .deserialize()
            .map_err(|e| Error::decode("initialize result", e))?;
        // The server answers with our version or one it prefers; if we
        // do not speak it we must disconnect.
        if !is_supported(&result.protocol_version)
            || (self.exact && result.protocol_version != self.version)
        {
            return Err(Error::unsupported_version(result.protocol_version));
        }
        engine
            .notify::<()>("notifications/initialized", None)
            .await?;
        Ok(Session {
            result,
            era: Era::Legacy,
        })
    }
}

/// The stateless revision: `server/discover`, and `_meta` on every request.
pub(crate) struct Discover<'c> {
    config: &'c ClientConfig,
    /// The version tried first.
    version: &'c str,
}

impl<'c> Discover<'c> {
    fn new(config: &'c ClientConfig, version: &'c str) -> Self {
        Self { config, version }
    }

    /// Discovers the server within `timeout`; on `-32022`, once more at a
    /// version from the server's list. A fresh cached answer (SEP-2549
    /// hints) stands for the request.
    async fn run(
        &self,
        engine: &Engine,
        target: &Target,
        timeout: Duration,
    ) -> Result<Session, Error> {
        let mut stamp = Stamp::modern(
            self.version,
            serde_json::to_value(self.config.capabilities()).unwrap_or_else(|_| json!({})),
            serde_json::to_value(&self.config.client_info).unwrap_or_else(|_| json!({})),
            self.config
                .log_level
                .and_then(|l| serde_json::to_value(l).ok()),
        );
        let opts = RequestOptions::new().timeout(timeout);
        let cache = target
            .inbox
            .as_ref()
            .map(|h| &h.cache)
            .filter(|c| c.enabled());
        let mut retried = false;
        loop {
            engine.set_stamp(stamp.clone());
            let version = stamp.version().unwrap_or(MODERN_VERSION).to_owned();
            if let Some(payload) = cache.and_then(|c| c.lookup(DISCOVER, Some(&version))) {
                return self.session(engine, &stamp, &payload, version);
            }
            let generation = cache.and_then(|c| c.begin());
            let outcome = engine
                .call::<Value>(
                    Cow::Borrowed("server/discover"),
                    None,
                    &opts,
                    Replay::Allow,
                    Cancel::Silent,
                )
                .await;
            let payload = match outcome {
                Ok(p) => p,
                Err(e) if !retried => match supported_instead(&e) {
                    Some(other) => {
                        tracing::debug!(from = %version, to = %other, "the server asked for another protocol version");
                        stamp = stamp.at_version(&other);
                        retried = true;
                        continue;
                    }
                    None => return Err(e),
                },
                Err(e) => return Err(e),
            };
            let session = self.session(engine, &stamp, &payload, version.clone())?;
            if let (Some(cache), Some(generation)) = (cache, generation) {
                cache.keep(
                    DISCOVER,
                    Some(&version),
                    &payload,
                    Lifetime::Hinted,
                    generation,
                );
            }
            return Ok(session);
        }
    }

    /// The session a `server/discover` answer to a request at `version`
    /// describes.
    fn session(
        &self,
        engine: &Engine,
        stamp: &Stamp,
        payload: &Payload,
        version: String,
    ) -> Result<Session, Error> {
        let result: DiscoverResult = payload
            .deserialize()
            .map_err(|e| Error::decode("server/discover result", e))?;
        // Keep our version if the server lists it; else the newest one
        // of its list that we speak.
        let chosen = if result.supported_versions.contains(&version) {
            version
        } else {
            match result.supported_versions.iter().find(|v| is_modern(v)) {
                Some(v) => {
                    engine.set_stamp(stamp.at_version(v));
                    v.clone()
                }
                None => {
                    return Err(Error::unsupported_version(
                        result.supported_versions.join(", "),
                    ));
                }
            }
        };
        Ok(Session {
            result: result.into_session(&chosen),
            era: Era::Modern,
        })
    }
}

/// The method whose answer describes a stateless server.
const DISCOVER: &str = "server/discover";

/// The stateless version to retry at after `error`, if it is an
/// unsupported-version error listing one this client speaks.
fn supported_instead(error: &Error) -> Option<String> {
    let obj = error.server_error()?;
    if obj.code != UNSUPPORTED_VERSION {
        return None;
    }
    let data: Value = obj.data.as_ref()?.deserialize().ok()?;
    data.get("supported")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|v| is_modern(v))
        .map(str::to_owned)
}

/// The era chosen by probing (see the module docs).
pub(crate) struct Auto<'c> {
    config: &'c ClientConfig,
}

impl Auto<'_> {
    async fn run(&self, engine: &Engine, target: &Target) -> Result<Session, Error> {
        let file = self.config.era_cache_file.as_deref();
        let cached = target
            .key
            .as_deref()
            .and_then(|k| era_cache::lookup(k, file));
        let legacy = Initialize::new(self.config, LATEST_VERSION, false);
        let modern = Discover::new(self.config, MODERN_VERSION);
        if target.skip_probe {
            return legacy.run(engine).await;
        }
        match cached {
            Some(Era::Legacy) => return self.cached_legacy(engine, target, legacy, modern).await,
            Some(Era::Modern) => return self.cached_modern(engine, target, legacy, modern).await,
            None => {}
        }
        // `init_timeout` bounds the whole handshake: the probe takes at
        // most half of it, `initialize` after it what is left.
        let started = tokio::time::Instant::now();
        let init_timeout = self.config.init_timeout;
        target.probing.store(true, Ordering::Release);
        let probe_timeout = self.config.probe_timeout.min(init_timeout / 2);
        let probe = modern.run(engine, target, probe_timeout).await;
        // A closed connection is the connection's to handle: `probing` stays
        // set, and a server that exited at the probe is spawned again.
        if matches!(&probe, Err(e) if e.kind() == ErrorKind::Closed) {
            return probe;
        }
        target.probing.store(false, Ordering::Release);
        let session = match probe {
            Ok(session) => session,
            Err(e) => match next_step(&e) {
                Step::GiveUp => return Err(e),
                Step::Initialize => {
                    tracing::debug!(error = %e, "no stateless answer to server/discover: falling back to initialize");
                    let timeout = init_timeout.saturating_sub(started.elapsed());
                    match (Initialize { timeout, ..legacy }).run(engine).await {
                        // A server slow to start answers the probe after
                        // its timeout, and from then on serves the
                        // stateless era only: it refuses `initialize` with
                        // that era's unsupported-version error.
                        Err(e) if e.code() == Some(UNSUPPORTED_VERSION) => {
                            tracing::debug!(error = %e, "initialize refused by a server of the stateless era: discovering it");
                            let timeout = init_timeout.saturating_sub(started.elapsed());
                            modern.run(engine, target, timeout).await?
                        }
                        outcome => outcome?,
                    }
                }
            },
        };
        if let Some(key) = &target.key {
            era_cache::remember(key, session.era, file);
        }
        Ok(session)
    }

    /// The cache says the server is stateless. If it no longer is (it
    /// refuses `server/discover`, or, over stdio, exits at it), the entry
    /// is dropped and the server initialized now.
    async fn cached_modern(
        &self,
        engine: &Engine,
        target: &Target,
        legacy: Initialize<'_>,
        modern: Discover<'_>,
    ) -> Result<Session, Error> {
        // A server that exits here is spawned again and initialized
        // directly, as at the probe (see `crate::session::connection`), which also
        // corrects the cache.
        // As at the probe, half of `init_timeout` at most, so that the
        // fallback has the rest.
        let started = tokio::time::Instant::now();
        let init_timeout = self.config.init_timeout;
        target.probing.store(true, Ordering::Release);
        let outcome = modern.run(engine, target, init_timeout / 2).await;
        if matches!(&outcome, Err(e) if e.kind() == ErrorKind::Closed) {
            return outcome;
        }
        target.probing.store(false, Ordering::Release);
        match outcome {
            Err(e) if next_step(&e) == Step::Initialize => {
                tracing::info!(error = %e, "the server no longer answers as the cached stateless era: falling back to initialize");
                self.forget(target);
                let timeout = init_timeout.saturating_sub(started.elapsed());
                let session = Initialize { timeout, ..legacy }.run(engine).await?;
                self.remember(target, &session);
                Ok(session)
            }
            outcome => outcome,
        }
    }

    /// The cache says the server initializes. If `initialize` is refused
    /// as an unknown request (the server moved to the stateless era), the
    /// entry is dropped and the server discovered now.
    async fn cached_legacy(
        &self,
        engine: &Engine,
        target: &Target,
        legacy: Initialize<'_>,
        modern: Discover<'_>,
    ) -> Result<Session, Error> {
        match legacy.run(engine).await {
            Err(e) if refused_as_unknown(&e) => {
                tracing::info!(error = %e, "the server refused initialize: the cached era is stale, trying the stateless era");
                self.forget(target);
                let session = modern.run(engine, target, self.config.init_timeout).await?;
                self.remember(target, &session);
                Ok(session)
            }
            outcome => outcome,
        }
    }

    fn forget(&self, target: &Target) {
        if let Some(key) = &target.key {
            era_cache::forget(key, self.config.era_cache_file.as_deref());
        }
    }

    fn remember(&self, target: &Target, session: &Session) {
        if let Some(key) = &target.key {
            era_cache::remember(key, session.era, self.config.era_cache_file.as_deref());
        }
    }
}

/// What follows a failed `server/discover` (besides a closed connection,
/// which the connection handles): the era decision table of
/// `docs/eras.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The server speaks the `initialize` era: initialize now.
    Initialize,
    /// The failure is not about the era: report it.
    GiveUp,
}

/// The next step after `server/discover` failed with `error`. Every refusal
/// (a JSON-RPC error of any code, an HTTP 4xx or 5xx, a non-JSON answer, a
/// timeout) means "this server initializes", as the fallback is never keyed
/// to one code. Reported as they are: a refusal for want of credentials
/// (`initialize` would be refused the same way, after asking the user to
/// authorize a second time), and a probe that reached no server (one that
/// came up meanwhile would take `initialize` and the session would be of
/// the wrong era for a server of both).
pub(crate) fn next_step(error: &Error) -> Step {
    if error.is_unreachable() {
        return Step::GiveUp;
    }
    match error.kind() {
        ErrorKind::Authorization | ErrorKind::Cancelled => Step::GiveUp,
        _ => Step::Initialize,
    }
}

/// True if `initialize` was refused as a request the server does not know
/// (a JSON-RPC "method not found" or "invalid request", the stateless
/// era's "unsupported version", or an HTTP 4xx that carried no JSON-RPC
/// answer), as a server of the stateless era may.
fn refused_as_unknown(error: &Error) -> bool {
    if let Some(obj) = error.server_error() {
        return [
            ErrorCode::METHOD_NOT_FOUND,
            ErrorCode::INVALID_REQUEST,
            UNSUPPORTED_VERSION,
        ]
        .contains(&obj.code);
    }
    error.kind() == ErrorKind::Transport
        && http_status(error).is_some_and(|s| (400..500).contains(&s) && !matches!(s, 401 | 403))
}

/// The HTTP status of the transport's refusal behind `error`, if any.
fn http_status(error: &Error) -> Option<u16> {
    let mut cause = std::error::Error::source(error);
    while let Some(c) = cause {
        if let Some(TransportError::Http(status)) = c.downcast_ref::<TransportError>() {
            return Some(status.status);
        }
        cause = c.source();
    }
    None
}
