//! [`HttpClient`]: hyper's pooled client over our connector, the TLS
//! configuration, and the per-URL memory of the automatic fallback.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::USER_AGENT;
use http::{Method, Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use crate::config::{Http2, HttpConfig, ProxyConfig};
use crate::connector::Connector;
use crate::error::Error;
use crate::mode::HttpMode;
use crate::proxy::ProxyRules;

/// A pooled HTTP client (HTTP/1.1 and HTTP/2, rustls) shared by transports.
///
/// Cheap to clone: clones share one connection pool, so every transport made
/// from the same client reuses keep-alive connections and skips the TCP and
/// TLS setup. It also remembers, per URL, which transport the automatic
/// fallback settled on.
///
/// Redirects are never followed: a 3xx answer is an [`Error::Status`]. This
/// keeps credentials from ever being sent to another origin.
#[derive(Clone)]
pub struct HttpClient {
    inner: Arc<Inner>,
}

struct Inner {
    hyper: Client<Connector, Full<Bytes>>,
    proxy: Option<Arc<ProxyRules>>,
    config: HttpConfig,
    fallback: Mutex<HashMap<String, HttpMode>>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client with `config`. Fails only on a bad TLS configuration.
    pub fn new(config: HttpConfig) -> Result<Self, Error> {
        let tls = tls_config(&config)?;
        let proxy = match &config.proxy {
            ProxyConfig::Env => Some(ProxyRules::from_env()),
            ProxyConfig::Off => None,
            ProxyConfig::Explicit { url, no_proxy } => Some(ProxyRules::new(
                Matcher::builder()
                    .all(url.clone())
                    .no(no_proxy.clone())
                    .build(),
                false,
            )),
        }
        .map(Arc::new);
        let connector = Connector::new(Arc::new(tls), config.connect_timeout, proxy.clone());
        let hyper = Client::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(config.pool_idle_timeout)
            .http2_only(config.http2 == Http2::PriorKnowledge)
            .http2_adaptive_window(true)
            .build(connector);
        Ok(Self {
            inner: Arc::new(Inner {
                hyper,
                proxy,
                config,
                fallback: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &HttpConfig {
        &self.inner.config
    }

    /// What the automatic fallback found for `url` earlier, if anything.
    pub fn cached_mode(&self, url: &str) -> Option<HttpMode> {
        self.inner
            .fallback
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(url)
            .copied()
    }

    pub(crate) fn remember_mode(&self, url: &str, mode: HttpMode) {
        self.inner
            .fallback
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(url.to_owned(), mode);
    }

    /// A request with the configured headers and user agent: the base every
    /// request of `crate::request` starts from.
    pub(crate) fn request(&self, method: Method, uri: &Uri, body: Bytes) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = method;
        *req.uri_mut() = uri.clone();
        let headers = req.headers_mut();
        headers.reserve(self.inner.config.headers.len() + 4);
        for (name, value) in &self.inner.config.headers {
            headers.insert(name, value.clone());
        }
        headers.insert(USER_AGENT, self.inner.config.user_agent.clone());
        // A forwarding proxy (plain http) reads its credentials from each
        // request; a tunnel got them once, in CONNECT.
        if uri.scheme() == Some(&http::uri::Scheme::HTTP) {
            let auth = self.inner.proxy.as_ref().and_then(|m| m.intercept(uri));
            if let Some(auth) = auth.as_ref().and_then(|i| i.basic_auth()) {
                headers.insert(http::header::PROXY_AUTHORIZATION, auth.clone());
            }
        }
        req
    }

    /// Sends `req` and waits for the answer's headers within the request
    /// timeout. Any status comes back as `Ok`; `crate::request::send` sorts
    /// them.
    pub(crate) async fn send(
        &self,
        req: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, Error> {
        let fut = self.inner.hyper.request(req);
        match tokio::time::timeout(self.inner.config.request_timeout, fut).await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(e)) => Err(classify_client_error(e)),
            Err(_) => Err(Error::Timeout),
        }
    }
}

/// Connect failures (a connect timeout included) are told apart: nothing
/// reached the server, so they are safe to retry.
fn classify_client_error(e: hyper_util::client::legacy::Error) -> Error {
    if e.is_connect() {
        return Error::Connect(Box::new(e));
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(s) = source {
        if s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return Error::Timeout;
        }
        source = s.source();
    }
    Error::Request(Box::new(e))
}

fn tls_config(config: &HttpConfig) -> Result<rustls::ClientConfig, Error> {
    let mut roots = rustls::RootCertStore::empty();
    if config.webpki_roots {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    if config.native_roots {
        let found = rustls_native_certs::load_native_certs();
        let (added, _ignored) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            let why = found
                .errors
                .first()
                .map_or_else(|| "no certificates found".to_owned(), ToString::to_string);
            return Err(Error::Tls(
                format!("platform root store unusable: {why}").into(),
            ));
        }
    }
    for der in &config.extra_roots {
        roots
            .add(rustls::pki_types::CertificateDer::from(der.clone()))
            .map_err(|e| Error::Tls(Box::new(e)))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(Box::new(e)))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = if config.http2 == Http2::PriorKnowledge {
        vec![b"h2".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    Ok(tls)
}
