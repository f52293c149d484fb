use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use http::{HeaderValue, Uri};

use mcpwire_codec::jsonrpc::Id;
use mcpwire_transport::RequestAbort;

use crate::HttpMode;
use crate::abort::Aborts;

/// State shared by a transport's handle, its driver and its stream tasks.
///
/// Writers (initialize answers, a session expiry, a new legacy endpoint) are
/// rare; readers are every request. Readers keep a [`SessionSnapshot`] and
/// only take the lock when the generation counter moved, so the hot path is
/// one atomic load.
#[derive(Debug)]
pub(crate) struct SessionState {
    pub(crate) url: String,
    mode: AtomicU8,
    generation: AtomicU64,
    state: Mutex<SessionSnapshot>,
    /// The requests in flight that can be cancelled by closing their stream.
    pub(crate) aborts: std::sync::Arc<Aborts>,
    /// Shown every frame as it is sent, with its headers, and as it is
    /// delivered (see `HttpTransport::set_tap`).
    pub(crate) tap: std::sync::OnceLock<std::sync::Arc<dyn mcpwire_transport::Tap>>,
}

/// The per-session values every request carries.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionSnapshot {
    pub(crate) generation: u64,
    pub(crate) session_id: Option<HeaderValue>,
    pub(crate) protocol_version: Option<HeaderValue>,
    /// The legacy transport's POST endpoint, once announced.
    pub(crate) endpoint: Option<Uri>,
}

impl SessionState {
    pub(crate) fn new(url: String, mode: Option<HttpMode>) -> Self {
        Self {
            url,
            mode: AtomicU8::new(mode.map_or(0, HttpMode::code)),
            generation: AtomicU64::new(0),
            state: Mutex::new(SessionSnapshot::default()),
            aborts: Default::default(),
            tap: std::sync::OnceLock::new(),
        }
    }

    pub(crate) fn mode(&self) -> Option<HttpMode> {
        HttpMode::from_code(self.mode.load(Ordering::Acquire))
    }

    pub(crate) fn set_mode(&self, mode: HttpMode) {
        self.mode.store(mode.code(), Ordering::Release);
    }

    /// Brings `snap` up to date if anything changed since it was taken.
    pub(crate) fn refresh(&self, snap: &mut SessionSnapshot) {
        if self.generation.load(Ordering::Acquire) != snap.generation {
            *snap = self.snapshot();
        }
    }

    pub(crate) fn snapshot(&self) -> SessionSnapshot {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn update(&self, f: impl FnOnce(&mut SessionSnapshot)) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut state);
        state.generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
    }
}

/// Closing a request's answer stream cancels it in Streamable HTTP; the
/// legacy transport answers on its one stream, so it cannot.
impl RequestAbort for SessionState {
    fn abort(&self, id: &Id) -> bool {
        match self.mode() {
            Some(HttpMode::LegacySse | HttpMode::ReceiveOnlySse) => false,
            Some(HttpMode::StreamableHttp) | None => self.aborts.abort(id),
        }
    }
}

/// A session id is visible ASCII (0x21 to 0x7E) per the specification; any
/// other value is refused rather than echoed.
pub(crate) fn valid_session_id(value: &HeaderValue) -> bool {
    !value.is_empty() && value.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b))
}
