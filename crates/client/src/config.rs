//! Client configuration: identity, timeouts, limits, handlers, reconnection.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::base::handler::{ElicitationHandler, RootsHandler, SamplingHandler};
use crate::base::version::EraChoice;
use crate::cache::store::{
    CredentialId, DEFAULT_CACHE_BYTES, DEFAULT_CACHE_ENTRIES, ResponseCache,
};
use crate::types::{ClientCapabilities, Extra, Implementation, ListCapability, LoggingLevel};
use mcpwire_transport::{Backoff, Jitter, Tap};
use serde_json::Value;

/// The tasks extension's identifier (`io.modelcontextprotocol/tasks`).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The MCP Apps extension's identifier (`io.modelcontextprotocol/ui`).
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an MCP Apps view: an HTML document a host shows in a
/// sandboxed frame.
pub const APP_HTML_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// How the client behaves. Private fields, chainable setters; every default is
/// documented on its setter.
#[derive(Clone)]
#[must_use]
pub struct ClientConfig {
    pub(crate) client_info: Implementation,
    pub(crate) request_timeout: Duration,
    pub(crate) init_timeout: Duration,
    pub(crate) grant_window: u32,
    pub(crate) max_concurrent_handlers: usize,
    pub(crate) max_queued_handlers: usize,
    pub(crate) notification_capacity: usize,
    pub(crate) reconnect: Option<Reconnect>,
    pub(crate) keepalive: Option<Keepalive>,
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) roots: Option<Arc<dyn RootsHandler>>,
    pub(crate) roots_list_changed: bool,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) elicitation_url: bool,
    pub(crate) elicitation_defaults: ElicitationDefaults,
    pub(crate) era: EraChoice,
    pub(crate) probe_timeout: Duration,
    pub(crate) era_cache_file: Option<PathBuf>,
    pub(crate) max_input_rounds: u32,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) tasks: bool,
    pub(crate) apps: bool,
    pub(crate) response_cache: Option<ResponseCache>,
    pub(crate) response_cache_size: (usize, usize),
    pub(crate) credential_id: Option<CredentialId>,
    pub(crate) tap: Option<Arc<dyn Tap>>,
    pub(crate) server_label: Option<Arc<str>>,
    /// Where the client's metrics go (the `otel` feature).
    #[cfg(feature = "otel")]
    pub(crate) meter: Option<opentelemetry::metrics::Meter>,
}

/// What happens to the fields an accepted elicitation form left out that
/// the requested schema gives defaults for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElicitationDefaults {
    /// They get the schema's defaults
    /// ([`ElicitResult::fill_defaults`](crate::types::ElicitResult::fill_defaults)),
    /// as SEP-1034 asks of clients. The default.
    #[default]
    Fill,
    /// They stay out: the handler applies defaults itself, or must be able
    /// to omit a field that has one.
    Leave,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("client_info", &self.client_info)
            .field("request_timeout", &self.request_timeout)
            .field("reconnect", &self.reconnect)
            .field("keepalive", &self.keepalive)
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("era", &self.era)
            .field("probe_timeout", &self.probe_timeout)
            .field("response_cache_size", &self.response_cache_size)
            .field("credential_id", &self.credential_id)
            .field("tap", &self.tap.is_some())
            .field("server_label", &self.server_label)
            .finish_non_exhaustive()
    }
}

impl ClientConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self {
            client_info: Implementation::new("mcpwire", env!("CARGO_PKG_VERSION")),
            request_timeout: Duration::from_secs(60),
            init_timeout: Duration::from_secs(30),
            grant_window: 64,
            max_concurrent_handlers: 16,
            max_queued_handlers: 256,
            notification_capacity: 1024,
            reconnect: None,
            keepalive: None,
            sampling: None,
            roots: None,
            roots_list_changed: false,
            elicitation: None,
            elicitation_url: false,
            elicitation_defaults: ElicitationDefaults::Fill,
            era: EraChoice::Auto,
            probe_timeout: Duration::from_secs(3),
            era_cache_file: None,
            tap: None,
            server_label: None,
            #[cfg(feature = "otel")]
            meter: None,
            max_input_rounds: 8,
            log_level: None,
            tasks: false,
            apps: false,
            response_cache: None,
            response_cache_size: (DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_BYTES),
            credential_id: None,
        }
    }

    /// Bounds of the client's own response cache (see `docs/eras.md`,
    /// "The cache"): at most `max_entries` answers and `max_bytes` bytes of
    /// them, the least recently used evicted first. Either at zero turns
    /// the cache off. Default: 256 answers, 8 MiB. The cache is allocated
    /// when it first keeps an answer. Ignored when a shared
    /// [`response_cache`](Self::response_cache) is given.
    pub fn response_cache_size(mut self, max_entries: usize, max_bytes: usize) -> Self {
        self.response_cache_size = (max_entries, max_bytes);
        self
    }

    /// Keep answers in `cache`, shared with every client given a clone of
    /// it, instead of a cache of the client's own. Public answers of the
    /// same server (its command line or URL) are served to all of them;
    /// private ones only to clients with the same
    /// [`credential_id`](Self::credential_id).
    pub fn response_cache(mut self, cache: ResponseCache) -> Self {
        self.response_cache = Some(cache);
        self
    }

    /// Who this client acts for, for the response cache: answers the server
    /// marks `cacheScope: "private"` are kept for this identity and served
    /// only to clients that declare the same one. Without it (the default)
    /// private answers are kept for this client alone, never shared.
    pub fn credential_id(mut self, id: CredentialId) -> Self {
        self.credential_id = Some(id);
        self
    }

    /// Declare the tasks extension (`io.modelcontextprotocol/tasks` under
    /// `capabilities.extensions`), so a server may answer with tasks (see
    /// [`crate::tasks`]). Default: off.
    pub fn tasks(mut self, yes: bool) -> Self {
        self.tasks = yes;
        self
    }

    /// Declare the MCP Apps extension (`io.modelcontextprotocol/ui` under
    /// `capabilities.extensions`, with the one view type the extension
    /// defines, [`APP_HTML_MIME_TYPE`]): say so when this client's host can
    /// show a server's `ui://` views. Servers may then list tools that name
    /// a view, and tools meant for the view alone (see [`crate::apps`]).
    /// Default: off.
    pub fn apps(mut self, yes: bool) -> Self {
        self.apps = yes;
        self
    }

    /// Which era (and version) to speak. Default: [`EraChoice::Auto`]: probe
    /// with `server/discover`, fall back to `initialize`. See
    /// `docs/eras.md`.
    pub fn era(mut self, era: EraChoice) -> Self {
        self.era = era;
        self
    }

    /// How long the `server/discover` probe of [`EraChoice::Auto`] waits for
    /// an answer before taking the server for one of the `initialize` era.
    /// Default: 3 s, and at most half of
    /// [`init_timeout`](Self::init_timeout). It is paid once per server per
    /// process (the outcome is cached), and only by servers that stay
    /// silent.
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// Also keep the probe's outcomes in this file (a JSON object, server to
    /// era), so the next process skips the probe too. Default: memory only.
    /// The file names servers by command line or URL: keep it private if
    /// those carry secrets.
    pub fn era_cache_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.era_cache_file = Some(path.into());
        self
    }

    /// Shows `tap` every message of every connection, sent and received,
    /// with the header fields its transport sends it with (HTTP: the MCP
    /// headers, the session's, credentials redacted). It only observes: the
    /// bytes and headers on the wire are the same with and without it (see
    /// [`mcpwire_transport::Tap`]). Default: none.
    pub fn tap(mut self, tap: Arc<dyn Tap>) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Records the client's metrics (see `docs/observability.md`) with
    /// `meter`, instead of a meter of the global provider as it is when the
    /// client connects. Nothing is recorded until a meter provider with an
    /// exporter stands behind it.
    #[cfg(feature = "otel")]
    pub fn meter(mut self, meter: opentelemetry::metrics::Meter) -> Self {
        self.meter = Some(meter);
        self
    }

    /// Names the server in this client's spans and metrics
    /// (`mcpwire.server.name`), as a fleet names its servers: a bounded
    /// label, unlike its command line or URL. Default: none.
    pub fn server_label(mut self, name: impl Into<Arc<str>>) -> Self {
        self.server_label = Some(name.into());
        self
    }

    /// How many times a request of the stateless era is sent again with the
    /// input the server asked for (multi round-trip requests) before the
    /// call fails with [`ErrorKind::InputRequired`](crate::ErrorKind).
    /// Default: 8. Bounds how long a server can keep a caller asking.
    pub fn max_input_rounds(mut self, n: u32) -> Self {
        self.max_input_rounds = n;
        self
    }

    /// The log level every request of the stateless era asks for
    /// (`io.modelcontextprotocol/logLevel`; that era has no
    /// `logging/setLevel`). Default: none, so the server sends no log
    /// messages.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Who the client says it is in `initialize`. Default: `mcpwire` and this
    /// crate's version.
    pub fn client_info(mut self, info: Implementation) -> Self {
        self.client_info = info;
        self
    }

    /// The default timeout of every request. Default: 60 s. Per-request
    /// override: [`RequestOptions::timeout`](crate::RequestOptions::timeout)
    /// (or [`Call::timeout`](crate::Call::timeout)).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long the handshake may take (`initialize`, or `server/discover`;
    /// with [`EraChoice::Auto`](crate::EraChoice::Auto) the probe and the
    /// `initialize` after it together). Default: 30 s.
    pub fn init_timeout(mut self, timeout: Duration) -> Self {
        self.init_timeout = timeout;
        self
    }

    /// How many inbound frames the transport may deliver before the client
    /// grants more (it tops the window up when half is used). Default: 64.
    /// A larger window costs memory only in the transport's read buffer.
    pub fn grant_window(mut self, window: u32) -> Self {
        self.grant_window = window.max(1);
        self
    }

    /// How many server requests (sampling, roots, elicitation) run at once.
    /// Default: 16.
    pub fn max_concurrent_handlers(mut self, n: usize) -> Self {
        self.max_concurrent_handlers = n.max(1);
        self
    }

    /// How many more server requests may wait for a handler slot; beyond it
    /// they are answered with an error at once. Default: 256. Bounds what a
    /// misbehaving server can make us hold.
    pub fn max_queued_handlers(mut self, n: usize) -> Self {
        self.max_queued_handlers = n;
        self
    }

    /// Capacity of each notification queue (log messages, resource updates,
    /// other notifications). When a queue is full the oldest entry is dropped
    /// and counted. Default: 1024. A queue's memory (all its slots) is taken
    /// when it is first subscribed to, not before.
    pub fn notification_capacity(mut self, n: usize) -> Self {
        self.notification_capacity = n.max(1);
        self
    }

    /// Reconnect after an unexpected close (needs a transport factory, see
    /// [`Client::connect_with`](crate::Client::connect_with)). Default: off.
    pub fn reconnect(mut self, policy: Reconnect) -> Self {
        self.reconnect = Some(policy);
        self
    }

    /// Ping the server periodically and close after repeated failures.
    /// Default: off.
    pub fn keepalive(mut self, keepalive: Keepalive) -> Self {
        self.keepalive = Some(keepalive);
        self
    }

    /// Answer `sampling/createMessage` with `handler`; advertises `sampling`.
    pub fn sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.sampling = Some(Arc::new(handler));
        self
    }

    /// Answer `roots/list` with `handler`; advertises `roots`.
    pub fn roots(mut self, handler: impl RootsHandler) -> Self {
        self.roots = Some(Arc::new(handler));
        self
    }

    /// Whether we will send `notifications/roots/list_changed`. Default: false.
    pub fn roots_list_changed(mut self, yes: bool) -> Self {
        self.roots_list_changed = yes;
        self
    }

    /// Answer `elicitation/create` with `handler`; advertises `elicitation`
    /// with form mode.
    pub fn elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.elicitation = Some(Arc::new(handler));
        self
    }

    /// Also advertise URL-mode elicitation. Default: false.
    pub fn elicitation_url(mut self, yes: bool) -> Self {
        self.elicitation_url = yes;
        self
    }

    /// What an accepted form's missing fields get. Default:
    /// [`ElicitationDefaults::Fill`].
    pub fn elicitation_defaults(mut self, defaults: ElicitationDefaults) -> Self {
        self.elicitation_defaults = defaults;
        self
    }

    /// The capabilities sent in `initialize`, derived from the handlers.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.roots.is_some() {
            caps.roots = Some(ListCapability {
                list_changed: Some(self.roots_list_changed),
                ..Default::default()
            });
        }
        if self.sampling.is_some() {
            caps.sampling = Some(Extra::new());
        }
        if self.elicitation.is_some() {
            let mut e = Extra::new();
            e.insert("form".into(), serde_json::json!({}));
            if self.elicitation_url {
                e.insert("url".into(), serde_json::json!({}));
            }
            caps.elicitation = Some(e);
        }
        let mut extensions = Extra::new();
        if self.tasks {
            extensions.insert(TASKS_EXTENSION.into(), serde_json::json!({}));
        }
        if self.apps {
            extensions.insert(
                APPS_EXTENSION.into(),
                serde_json::json!({ "mimeTypes": [APP_HTML_MIME_TYPE] }),
            );
        }
        if !extensions.is_empty() {
            caps.extra
                .insert("extensions".into(), Value::Object(extensions));
        }
        caps
    }
}

/// Reconnection after an unexpected close: exponential backoff with jitter,
/// within a budget of attempts.
#[derive(Debug, Clone)]
#[must_use]
pub struct Reconnect {
    pub(crate) initial_delay: Duration,
    pub(crate) max_delay: Duration,
    pub(crate) max_attempts: u32,
    pub(crate) jitter: f64,
}

impl Default for Reconnect {
    fn default() -> Self {
        Self::new()
    }
}

impl Reconnect {
    /// The defaults: 250 ms doubling to at most 30 s, ±20 % jitter, 8
    /// attempts per outage.
    pub fn new() -> Self {
        Self {
            initial_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(30),
            max_attempts: 8,
            jitter: 0.2,
        }
    }

    /// The first delay. Default: 250 ms.
    pub fn initial_delay(mut self, d: Duration) -> Self {
        self.initial_delay = d;
        self
    }

    /// The longest delay. Default: 30 s.
    pub fn max_delay(mut self, d: Duration) -> Self {
        self.max_delay = d;
        self
    }

    /// Attempts per outage before giving up (the budget); the count starts
    /// again once a connection is ready. Default: 8.
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n;
        self
    }

    /// Random spread of each delay, as a fraction (0 to 1). Default: 0.2.
    pub fn jitter(mut self, fraction: f64) -> Self {
        self.jitter = fraction.clamp(0.0, 1.0);
        self
    }

    /// The delay before attempt `attempt` (1-based), on the schedule every
    /// retry of mcpwire shares ([`Backoff`]).
    pub(crate) fn delay(&self, attempt: u32) -> Duration {
        Backoff::new(
            self.initial_delay,
            self.max_delay,
            Jitter::around(self.jitter),
        )
        .delay(attempt.saturating_sub(1))
    }
}

/// Periodic `ping`, closing the connection after repeated failures.
#[derive(Debug, Clone)]
#[must_use]
pub struct Keepalive {
    pub(crate) interval: Duration,
    pub(crate) timeout: Duration,
    pub(crate) max_failures: u32,
}

impl Keepalive {
    /// Ping every `interval`; defaults: 10 s timeout, 3 failures in a row.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            timeout: Duration::from_secs(10),
            max_failures: 3,
        }
    }

    /// How long one ping may take. Default: 10 s.
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }

    /// Consecutive failures that close the connection. Default: 3.
    pub fn max_failures(mut self, n: u32) -> Self {
        self.max_failures = n.max(1);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_jittered_within_bounds() {
        let r = Reconnect::new()
            .initial_delay(Duration::from_millis(100))
            .max_delay(Duration::from_secs(1))
            .jitter(0.5);
        for _ in 0..100 {
            let d1 = r.delay(1).as_secs_f64();
            assert!((0.05..=0.15).contains(&d1), "{d1}");
            let d10 = r.delay(10).as_secs_f64();
            assert!((0.5..=1.5).contains(&d10), "{d10}");
        }
    }
}
