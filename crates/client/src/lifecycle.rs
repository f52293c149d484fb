//! Lifecycles: how an open transport becomes a usable session.
//!
//! The request engine does not know how a session starts; a lifecycle runs
//! over it like any caller. Today there is one, the stateful `initialize`
//! handshake of 2024-11-05 to 2025-11-25. The stateless revision (no
//! `initialize`, `server/discover`, `_meta` on every request) becomes a second
//! implementation of [`Lifecycle`] without touching the driver: its
//! `handshake` runs `server/discover`, and the `_meta` every request carries
//! is added where every request is encoded (`crate::engine::encode`). The
//! connection (`crate::connection`) runs whichever lifecycle the client was
//! built with, on the first connection and after a session expired.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use crate::config::ClientConfig;
use crate::engine::Engine;
use crate::error::Error;
use crate::options::{Replay, RequestOptions};
use crate::pending::Cancel;
use crate::types::{InitializeParams, InitializeResult};
use crate::version::{LATEST_VERSION, is_supported};

pub(crate) type HandshakeFuture<'a> =
    Pin<Box<dyn Future<Output = Result<InitializeResult, Error>> + Send + 'a>>;

/// Starts a session over a fresh engine (and again after the session
/// expired).
pub(crate) trait Lifecycle: Send + Sync + 'static {
    /// Runs the handshake; the result describes the server.
    fn handshake<'a>(&'a self, engine: &'a Engine) -> HandshakeFuture<'a>;
}

/// The `initialize` / `notifications/initialized` handshake with version
/// negotiation.
pub(crate) struct Initialize {
    pub(crate) config: ClientConfig,
}

impl Lifecycle for Initialize {
    fn handshake<'a>(&'a self, engine: &'a Engine) -> HandshakeFuture<'a> {
        Box::pin(async move {
            let params = InitializeParams {
                protocol_version: LATEST_VERSION.into(),
                capabilities: self.config.capabilities(),
                client_info: self.config.client_info.clone(),
                meta: None,
            };
            let opts = RequestOptions::new().timeout(self.config.init_timeout);
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
            if !is_supported(&result.protocol_version) {
                return Err(Error::unsupported_version(result.protocol_version));
            }
            engine
                .notify::<()>("notifications/initialized", None)
                .await?;
            Ok(result)
        })
    }
}
