use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_TYPE, RETRY_AFTER, USER_AGENT, WWW_AUTHENTICATE};
use http::{HeaderMap, Method, Request, Response, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use mcpwire_transport::HttpStatus;

use hyper_util::client::proxy::matcher::Matcher;

use crate::config::ProxyConfig;
use crate::connector::Connector;
use crate::proxy::ProxyRules;
use crate::{Error, HttpConfig, HttpMode};

/// How much of an error answer's body is kept for diagnostics.
const ERROR_BODY_LIMIT: usize = 1024;

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
            .http2_only(config.http2_prior_knowledge)
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

    /// A request with the configured headers and user agent.
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
    /// timeout. Any status comes back as `Ok`: see [`status_error`].
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
    tls.alpn_protocols = if config.http2_prior_knowledge {
        vec![b"h2".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    Ok(tls)
}

/// Turns an error answer into [`Error::Status`]: status first, then the
/// headers a caller acts on, then the start of the body for diagnostics. The
/// body is never parsed, so a non-JSON answer cannot turn into a parse error.
pub(crate) async fn status_error(resp: Response<Incoming>) -> Error {
    let status = resp.status().as_u16();
    let mut out = HttpStatus::new(status);
    out.www_authenticate = resp
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    out.retry_after = retry_after(resp.headers());
    let mut body = resp.into_body();
    let mut kept = BytesMut::new();
    // The body read is bounded in size and in time: a server that sends an
    // endless error page must not hold the caller.
    let read = async {
        while kept.len() < ERROR_BODY_LIMIT {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        let room = ERROR_BODY_LIMIT - kept.len();
                        kept.extend_from_slice(&data[..data.len().min(room)]);
                    }
                }
                _ => break,
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), read).await;
    out.body = String::from_utf8_lossy(&kept).into_owned();
    Error::Status(Box::new(out))
}

/// `Retry-After` as delta-seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

/// An answer's media type, as far as a POST's answer cares.
pub(crate) enum Media {
    Json,
    EventStream,
    /// Anything else, lowercased, for the error.
    Other(String),
}

impl Media {
    /// The answer's media type, parameters aside, in any case; allocates
    /// only for a type it does not know.
    pub(crate) fn of(headers: &HeaderMap) -> Media {
        let value = headers.get(CONTENT_TYPE).map_or(&b""[..], |v| v.as_bytes());
        let end = value.iter().position(|b| *b == b';').unwrap_or(value.len());
        let media = value[..end].trim_ascii();
        if media.eq_ignore_ascii_case(b"application/json") {
            Media::Json
        } else if media.eq_ignore_ascii_case(b"text/event-stream") {
            Media::EventStream
        } else {
            Media::Other(media_type(headers))
        }
    }
}

/// The media type of an answer, lowercased, without parameters.
pub(crate) fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Reads a whole body of at most `max` bytes within `timeout`. A body that
/// arrives as one data frame (most answers) is returned as that frame, with
/// no copy; trailers are ignored.
pub(crate) async fn read_body(
    mut body: Incoming,
    max: usize,
    timeout: Duration,
) -> Result<Bytes, Error> {
    let read = async {
        let mut first: Option<Bytes> = None;
        let mut rest = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| Error::Request(Box::new(e)))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let len = first.as_ref().map_or(0, Bytes::len) + rest.len() + data.len();
            if len > max {
                return Err(Error::BodyTooLarge { max });
            }
            if let Some(first) = first.take() {
                rest.extend_from_slice(&first);
                rest.extend_from_slice(&data);
            } else if rest.is_empty() {
                first = Some(data);
            } else {
                rest.extend_from_slice(&data);
            }
        }
        Ok(first.unwrap_or_else(|| rest.freeze()))
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(Error::Timeout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_takes_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        let later = std::time::SystemTime::now() + Duration::from_secs(120);
        h.insert(RETRY_AFTER, httpdate::fmt_http_date(later).parse().unwrap());
        let d = retry_after(&h).unwrap();
        assert!(d > Duration::from_secs(100) && d <= Duration::from_secs(120));
        h.insert(RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn media_type_ignores_parameters_and_case() {
        let mut h = HeaderMap::new();
        h.insert(
            CONTENT_TYPE,
            "Text/Event-Stream; charset=utf-8".parse().unwrap(),
        );
        assert_eq!(media_type(&h), "text/event-stream");
        assert!(matches!(Media::of(&h), Media::EventStream));
        h.insert(CONTENT_TYPE, " application/JSON ;x=y".parse().unwrap());
        assert!(matches!(Media::of(&h), Media::Json));
        h.insert(CONTENT_TYPE, "text/html".parse().unwrap());
        assert!(matches!(Media::of(&h), Media::Other(m) if m == "text/html"));
        assert!(matches!(Media::of(&HeaderMap::new()), Media::Other(m) if m.is_empty()));
    }
}
