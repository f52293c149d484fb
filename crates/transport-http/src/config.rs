use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

use crate::RetryPolicy;

/// The configuration of an [`HttpClient`](crate::HttpClient) and of every
/// transport made from it.
///
/// All fields are private; each setter is named after its field and states its
/// default. Limits say what they protect against.
///
/// Its `Debug` output shows header names but never their values (an
/// `Authorization` token), nor the credentials of a proxy URL.
#[derive(Clone)]
pub struct HttpConfig {
    pub(crate) headers: HeaderMap,
    pub(crate) user_agent: HeaderValue,
    pub(crate) connect_timeout: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) close_timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) webpki_roots: bool,
    pub(crate) native_roots: bool,
    pub(crate) extra_roots: Vec<Vec<u8>>,
    pub(crate) http2: Http2,
    pub(crate) read_ahead: usize,
    pub(crate) queue_capacity: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) max_frame_len: usize,
    pub(crate) listen: bool,
    pub(crate) pool_idle_timeout: Duration,
    pub(crate) proxy: ProxyConfig,
    pub(crate) auth: mcpwire_auth::Auth,
}

/// How HTTP/2 is chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Http2 {
    /// HTTP/2 when TLS ALPN selects it, HTTP/1.1 otherwise (and over
    /// cleartext). The default.
    #[default]
    Negotiated,
    /// HTTP/2 without negotiation, also over cleartext (h2c prior
    /// knowledge): for a server known to speak it.
    PriorKnowledge,
}

/// Where an [`HttpClient`](crate::HttpClient)'s proxy settings come from:
/// [`Proxy::from_env`] (the default), [`Proxy::none`], or one proxy for
/// every URL, [`Proxy::url`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxy(pub(crate) ProxyConfig);

impl Proxy {
    /// `HTTPS_PROXY` for https URLs (tunnelled with `CONNECT`), `HTTP_PROXY`
    /// for http URLs (forwarded), `ALL_PROXY` for both, `NO_PROXY` for
    /// exceptions (or their lowercase forms), read when the client is
    /// built. Loopback destinations (`localhost`, 127.0.0.0/8, `::1`) never
    /// go through them.
    pub fn from_env() -> Self {
        Proxy(ProxyConfig::Env)
    }

    /// No proxy at all.
    pub fn none() -> Self {
        Proxy(ProxyConfig::Off)
    }

    /// Every request through the `http://` proxy at `url` (credentials in
    /// the URL become `Proxy-Authorization`), loopback destinations
    /// included unless [`no_proxy`](Self::no_proxy) says otherwise.
    pub fn url(url: impl Into<String>) -> Self {
        Proxy(ProxyConfig::Explicit {
            url: url.into(),
            no_proxy: String::new(),
        })
    }

    /// Hosts that bypass a [`Proxy::url`] proxy, in the `NO_PROXY` syntax
    /// (comma-separated hosts, domains and IP ranges). No effect on the
    /// other kinds.
    #[must_use]
    pub fn no_proxy(mut self, hosts: impl Into<String>) -> Self {
        if let ProxyConfig::Explicit { no_proxy, .. } = &mut self.0 {
            *no_proxy = hosts.into();
        }
        self
    }
}

/// Where proxy settings come from.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum ProxyConfig {
    /// `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` (or their
    /// lowercase forms), read when the client is built.
    Env,
    /// No proxy at all.
    Off,
    /// One proxy for every URL except those `no_proxy` matches.
    Explicit { url: String, no_proxy: String },
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            headers: HeaderMap::new(),
            user_agent: HeaderValue::from_static(concat!("mcpwire/", env!("CARGO_PKG_VERSION"))),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            close_timeout: Duration::from_secs(3),
            retry: RetryPolicy::default(),
            webpki_roots: true,
            native_roots: false,
            extra_roots: Vec::new(),
            http2: Http2::Negotiated,
            read_ahead: 4,
            queue_capacity: 32,
            max_in_flight: 32,
            max_frame_len: mcpwire_codec::DEFAULT_MAX_FRAME_LEN,
            listen: true,
            pool_idle_timeout: Duration::from_secs(90),
            proxy: ProxyConfig::Env,
            auth: mcpwire_auth::Auth::default(),
        }
    }
}

impl HttpConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a header sent on every request (an `Authorization` token, say).
    /// Default: none. A header of the same name is replaced.
    #[must_use]
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// The `User-Agent` header. Default: `mcpwire/<version>`.
    #[must_use]
    pub fn user_agent(mut self, value: HeaderValue) -> Self {
        self.user_agent = value;
        self
    }

    /// How long a TCP connect plus TLS handshake may take. Default: 10 s.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long a request may wait for the answer's headers, and a JSON
    /// answer for its body. An SSE answer's stream is not bounded by it: a
    /// long tool call may stream for as long as it needs. Default: 60 s.
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long closing may take: flushing queued frames and the session
    /// `DELETE`. Default: 3 s.
    #[must_use]
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// The retry policy shared by SSE reconnects and retryable POSTs.
    /// Default: [`RetryPolicy::default`].
    #[must_use]
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Whether the Mozilla root store (webpki-roots) is trusted. Default: true.
    #[must_use]
    pub fn webpki_roots(mut self, enabled: bool) -> Self {
        self.webpki_roots = enabled;
        self
    }

    /// Whether the platform's root store is trusted too (on Linux the system
    /// bundle, honouring `SSL_CERT_FILE` and `SSL_CERT_DIR`), read when the
    /// client is built. Default: false. Certificates that fail to parse are
    /// skipped; finding none at all is an error.
    #[must_use]
    pub fn native_roots(mut self, enabled: bool) -> Self {
        self.native_roots = enabled;
        self
    }

    /// Trusts one more root certificate, DER-encoded (a private CA, a test CA).
    #[must_use]
    pub fn add_root_certificate(mut self, der: Vec<u8>) -> Self {
        self.extra_roots.push(der);
        self
    }

    /// How HTTP/2 is chosen. Default: [`Http2::Negotiated`] (when TLS ALPN
    /// selects it).
    #[must_use]
    pub fn http2(mut self, http2: Http2) -> Self {
        self.http2 = http2;
        self
    }

    /// How many inbound frames may wait for a grant before the transport stops
    /// reading response bodies (so TCP pushes the server back). Default: 4.
    /// Memory held while paused is about this many frames plus one read buffer
    /// per open stream.
    #[must_use]
    pub fn read_ahead(mut self, frames: usize) -> Self {
        self.read_ahead = frames.max(1);
        self
    }

    /// The capacity of the outbound queue behind
    /// [`FrameSender`](mcpwire_transport::FrameSender). Default: 32.
    #[must_use]
    pub fn queue_capacity(mut self, frames: usize) -> Self {
        self.queue_capacity = frames.max(1);
        self
    }

    /// How many Streamable HTTP requests may await their answers at once.
    /// Default: 32. Past it, requests wait in the transport's queue (senders
    /// see `Busy` once that is full), while answers to the server's own
    /// requests queued behind them still go at once, as the requests in
    /// flight may be waiting for them (a notification keeps its place, and
    /// so does what is queued after it). Over HTTP/1.1 each request in
    /// flight holds a connection, so this bounds the connections (and their
    /// buffers) one transport holds.
    #[must_use]
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.max(1);
        self
    }

    /// The longest frame sent or received (a JSON body, one SSE event).
    /// Default: 16 MiB. It bounds what one server can make us buffer.
    #[must_use]
    pub fn max_frame_len(mut self, bytes: usize) -> Self {
        self.max_frame_len = bytes;
        self
    }

    /// Whether Streamable HTTP opens the GET stream for server-initiated
    /// messages after initialization. Default: true.
    #[must_use]
    pub fn listen(mut self, enabled: bool) -> Self {
        self.listen = enabled;
        self
    }

    /// How long an idle pooled connection is kept. Default: 90 s.
    #[must_use]
    pub fn pool_idle_timeout(mut self, timeout: Duration) -> Self {
        self.pool_idle_timeout = timeout;
        self
    }

    /// Where proxy settings come from. Default: [`Proxy::from_env`].
    #[must_use]
    pub fn proxy(mut self, proxy: Proxy) -> Self {
        self.proxy = proxy.0;
        self
    }

    /// How requests are authorized (see `docs/auth.md`). Default: OAuth,
    /// idle until a server answers `401`, then the authorization code flow
    /// through the user's browser where a terminal is attached. One
    /// authorization is kept per server URL and shared by every transport
    /// this client makes for it (so it survives reconnects).
    /// [`Auth::None`](mcpwire_auth::Auth::None) turns it off: a `401` is
    /// then an [`Error::Authorization`](crate::Error::Authorization).
    #[must_use]
    pub fn auth(mut self, auth: mcpwire_auth::Auth) -> Self {
        self.auth = auth;
        self
    }
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values are secrets as often as not: names only.
        let headers: Vec<&str> = self.headers.keys().map(HeaderName::as_str).collect();
        f.debug_struct("HttpConfig")
            .field("headers", &headers)
            .field("user_agent", &self.user_agent)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("close_timeout", &self.close_timeout)
            .field("retry", &self.retry)
            .field("webpki_roots", &self.webpki_roots)
            .field("native_roots", &self.native_roots)
            .field("extra_roots", &self.extra_roots.len())
            .field("http2", &self.http2)
            .field("read_ahead", &self.read_ahead)
            .field("queue_capacity", &self.queue_capacity)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_frame_len", &self.max_frame_len)
            .field("listen", &self.listen)
            .field("pool_idle_timeout", &self.pool_idle_timeout)
            .field("proxy", &self.proxy)
            .field("auth", &self.auth)
            .finish()
    }
}

impl std::fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxyConfig::Env => f.write_str("Env"),
            ProxyConfig::Off => f.write_str("Off"),
            ProxyConfig::Explicit { url, no_proxy } => f
                .debug_struct("Explicit")
                .field("url", &without_credentials(url))
                .field("no_proxy", no_proxy)
                .finish(),
        }
    }
}

/// `url` with the `user:password@` of its authority, if any, replaced by
/// `***@`.
fn without_credentials(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (&url[..scheme.len() + 3], rest),
        None => ("", url),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}***@{host}{path}"),
        None => url.to_owned(),
    }
}
