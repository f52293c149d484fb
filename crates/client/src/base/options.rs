//! Per-request options: timeout, progress, cancellation, replay. Every typed
//! request takes them (see [`Call`](crate::Call)); the client's
//! configuration gives the defaults.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::types::Progress;

/// A progress callback.
pub type ProgressCallback = Arc<dyn Fn(&Progress) + Send + Sync>;

/// When a request's timeout runs out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Deadline {
    /// The timeout counts from when the request was sent. The default.
    #[default]
    Fixed,
    /// Each progress notification starts the timeout again (a progress
    /// token is attached), bounded by
    /// [`max_total`](RequestOptions::max_total) when set.
    ResetOnProgress,
}

/// Whether a request may be sent again when its delivery failed because the
/// session expired (the client initializes a new session first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Replay {
    /// The method decides: reads (`*/list`, `resources/read`, `prompts/get`,
    /// `ping`, `completion/complete`) are sent again; `tools/call` only for
    /// tools annotated read-only or idempotent; anything else fails with
    /// [`ErrorKind::OutcomeUnknown`](crate::ErrorKind::OutcomeUnknown). The
    /// default.
    #[default]
    ByMethod,
    /// Send it again: the caller knows repeating it is harmless.
    Allow,
}

/// W3C trace context carried in a request's `_meta` (`traceparent`,
/// `tracestate`, as SEP-414 names them), so a server can join the caller's
/// trace. The values are passed as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub(crate) traceparent: String,
    pub(crate) tracestate: Option<String>,
}

impl TraceContext {
    /// A `traceparent` (`00-<trace id>-<span id>-<flags>`).
    pub fn new(traceparent: impl Into<String>) -> Self {
        Self {
            traceparent: traceparent.into(),
            tracestate: None,
        }
    }

    /// With a `tracestate`.
    #[must_use]
    pub fn tracestate(mut self, tracestate: impl Into<String>) -> Self {
        self.tracestate = Some(tracestate.into());
        self
    }
}

/// How a cacheable request (`tools/list`, `prompts/list`,
/// `resources/list`, `resources/templates/list`, one page each, and
/// `resources/read`) uses the client's response cache: see
/// [`ResponseCache`](crate::ResponseCache) and `docs/eras.md`, "The cache".
/// Other requests ignore it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheMode {
    /// Answer from the cache while its entry is fresh; otherwise ask and
    /// store. The default.
    #[default]
    Use,
    /// Ask the server and store the answer, whatever the cache holds.
    Refresh,
    /// Ask the server; neither read nor write the cache.
    Bypass,
}

/// Per-request options: timeout, progress, cancellation, replay.
#[derive(Clone, Default)]
#[must_use]
pub struct RequestOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_total: Option<Duration>,
    pub(crate) deadline: Deadline,
    pub(crate) on_progress: Option<ProgressCallback>,
    pub(crate) replay: Replay,
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) trace: Option<TraceContext>,
    pub(crate) cache: CacheMode,
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("max_total", &self.max_total)
            .field("deadline", &self.deadline)
            .field("on_progress", &self.on_progress.is_some())
            .field("replay", &self.replay)
            .field("cancel", &self.cancel.is_some())
            .field("trace", &self.trace)
            .field("cache", &self.cache)
            .finish()
    }
}

impl RequestOptions {
    /// The defaults: the client's timeout, a fixed deadline, no progress,
    /// replay by method.
    pub fn new() -> Self {
        Self::default()
    }

    /// This request's timeout (instead of the client's, 60 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// When the timeout runs out. Default: [`Deadline::Fixed`].
    pub fn deadline(mut self, deadline: Deadline) -> Self {
        self.deadline = deadline;
        self
    }

    /// The longest the request may take in total, progress or not.
    pub fn max_total(mut self, max: Duration) -> Self {
        self.max_total = Some(max);
        self
    }

    /// Call `f` with each progress notification (a progress token is
    /// attached). It runs on the caller's task, never on the reader; progress
    /// that arrives faster than the caller polls is coalesced to the latest.
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Whether the request may be sent again after its session expired.
    /// Default: [`Replay::ByMethod`].
    pub fn replay(mut self, replay: Replay) -> Self {
        self.replay = replay;
        self
    }

    /// Cancel the request when `token` is cancelled: the call returns an
    /// [`ErrorKind::Cancelled`](crate::ErrorKind) error and the server gets
    /// `notifications/cancelled`.
    pub fn cancel_token(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Carry this trace context in the request's `_meta`.
    pub fn trace_context(mut self, trace: TraceContext) -> Self {
        self.trace = Some(trace);
        self
    }

    /// How the request uses the client's cache. Default: [`CacheMode::Use`].
    pub fn cache(mut self, mode: CacheMode) -> Self {
        self.cache = mode;
        self
    }

    /// A progress token is attached to the request.
    pub(crate) fn wants_progress(&self) -> bool {
        self.deadline == Deadline::ResetOnProgress || self.on_progress.is_some()
    }
}
