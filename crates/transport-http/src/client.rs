//! [`HttpClient`]: hyper's pooled client over our connector, the TLS
//! configuration, and the per-URL memory of the automatic fallback.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::USER_AGENT;
use http::{HeaderName, HeaderValue, Method, Request, Response, Uri};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use mcpwire_auth::Authorizer;
use mcpwire_transport::ConnectError;

use crate::config::{Http2, HttpConfig, ProxyConfig};
use crate::connector::Connector;
use crate::demand::{self, Demand, Open, ResponseBody};
use crate::error::Error;
use crate::mode::HttpMode;
use crate::proxy::ProxyRules;
use crate::resolve::Resolver;
use crate::tls_setup::TlsSetup;

/// A pooled HTTP client (HTTP/1.1 and HTTP/2, rustls) shared by transports.
///
/// Cheap to clone: clones share one connection pool, so every transport made
/// from the same client reuses keep-alive connections and skips the TCP and
/// TLS setup. It also remembers, per URL, which transport the automatic
/// fallback settled on and which URLs refused a `GET` stream with 405, and
/// keeps one authorization per URL (see
/// [`HttpConfig::auth`]). It is the [`HttpFetch`](mcpwire_auth::HttpFetch)
/// of its authorizers: their metadata, registration and token requests go
/// through the same pool, TLS roots and proxies.
///
/// Redirects are never followed: a 3xx answer is an [`Error::Status`]. This
/// keeps credentials from ever being sent to another origin.
#[derive(Clone)]
pub struct HttpClient {
    inner: Arc<Inner>,
}

struct Inner {
    hyper: Pool,
    /// The client of an authorizer's requests to URLs learned from a
    /// server: its own pool, whose connections go to public addresses only.
    guarded: Pool,
    proxy: Option<Arc<ProxyRules>>,
    config: HttpConfig,
    fallback: Mutex<HashMap<String, HttpMode>>,
    /// URLs whose `GET` was answered 405, and when.
    no_stream: Mutex<HashMap<String, Instant>>,
    authorizers: Mutex<HashMap<String, Option<Arc<dyn Authorizer>>>>,
}

/// hyper's pooled client, and its open requests and live connections.
#[derive(Clone)]
struct Pool {
    client: Client<Connector, Full<Bytes>>,
    demand: Arc<Demand>,
}

/// How long a 405 to `GET` is remembered for a URL. A server's endpoint
/// rarely gains a stream, but one redeployed with it is tried again after
/// this long.
pub(crate) const NO_STREAM_MEMORY: Duration = Duration::from_secs(600);

/// A handle on a client that does not keep it alive: what its authorizers
/// hold, since the client holds them.
#[derive(Clone)]
pub(crate) struct WeakClient(Weak<Inner>);

impl WeakClient {
    pub(crate) fn upgrade(&self) -> Option<HttpClient> {
        self.0.upgrade().map(|inner| HttpClient { inner })
    }
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client with `config`. Fails only on a bad TLS configuration: roots
    /// other than the default are loaded here, the default (Mozilla) roots
    /// at the first `https` connection, so a client of `http` URLs only
    /// never loads them.
    pub fn new(config: HttpConfig) -> Result<Self, Error> {
        let tls = TlsSetup::of(&config)?;
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
        let build = |resolver| {
            let connector =
                Connector::new(tls.clone(), config.connect_timeout, proxy.clone(), resolver);
            let client = Client::builder(TokioExecutor::new())
                .timer(TokioTimer::new())
                .pool_timer(TokioTimer::new())
                .pool_idle_timeout(config.pool_idle_timeout)
                .http2_only(config.http2 == Http2::PriorKnowledge)
                .http2_adaptive_window(true)
                .build(connector);
            Pool {
                client,
                demand: Arc::default(),
            }
        };
        let hyper = build(Resolver::any());
        let guarded = build(Resolver::public_only());
        Ok(Self {
            inner: Arc::new(Inner {
                hyper,
                guarded,
                proxy,
                config,
                fallback: Mutex::new(HashMap::new()),
                no_stream: Mutex::new(HashMap::new()),
                authorizers: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// A client that shares this one's connection pool, proxy rules and TLS
    /// configuration, and sends `headers` with every request as well (over
    /// configured headers of the same name): one pool for many servers that
    /// each need their own headers (an API key, a tenant). The fallback's
    /// per-URL memory and the authorizations per URL start empty: they are
    /// the new client's own.
    pub fn with_headers<I>(&self, headers: I) -> HttpClient
    where
        I: IntoIterator<Item = (HeaderName, HeaderValue)>,
    {
        let mut config = self.inner.config.clone();
        for (name, value) in headers {
            config.headers.insert(name, value);
        }
        Self {
            inner: Arc::new(Inner {
                hyper: self.inner.hyper.clone(),
                guarded: self.inner.guarded.clone(),
                proxy: self.inner.proxy.clone(),
                config,
                fallback: Mutex::new(HashMap::new()),
                no_stream: Mutex::new(HashMap::new()),
                authorizers: Mutex::new(HashMap::new()),
            }),
        }
    }

    pub(crate) fn downgrade(&self) -> WeakClient {
        WeakClient(Arc::downgrade(&self.inner))
    }

    /// The authorizer of the requests to `url`, made from
    /// [`HttpConfig::auth`] on first use and shared by every transport this
    /// client makes for `url` afterwards; `None` with
    /// [`Auth::None`](mcpwire_auth::Auth::None).
    pub fn authorizer(&self, url: &str) -> Result<Option<Arc<dyn Authorizer>>, Error> {
        let mut map = self
            .inner
            .authorizers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(a) = map.get(url) {
            return Ok(a.clone());
        }
        let made = self
            .inner
            .config
            .auth
            .authorizer(url, self.fetcher())
            .map_err(|e| Error::AuthorizationFailed {
                required: None,
                source: e,
            })?;
        map.insert(url.to_owned(), made.clone());
        Ok(made)
    }

    /// This client as the [`HttpFetch`](mcpwire_auth::HttpFetch) of an
    /// authorizer of one's own (it does not keep the client alive).
    pub fn fetcher(&self) -> Arc<dyn mcpwire_auth::HttpFetch> {
        Arc::new(self.downgrade())
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

    /// Whether `url` answered a `GET` with 405 (the server offers no stream
    /// there) within [`NO_STREAM_MEMORY`]: a new session skips the `GET`.
    pub(crate) fn offers_no_stream(&self, url: &str) -> bool {
        self.inner
            .no_stream
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(url)
            .is_some_and(|at| at.elapsed() < NO_STREAM_MEMORY)
    }

    /// Remembers that `url` answered a `GET` with 405.
    pub(crate) fn remember_no_stream(&self, url: &str) {
        self.inner
            .no_stream
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(url.to_owned(), Instant::now());
    }

    /// A request with the configured headers and user agent: the base every
    /// request of `crate::request` starts from.
    pub(crate) fn request(&self, method: Method, uri: &Uri, body: Bytes) -> Request<Full<Bytes>> {
        let mut req = self.bare_request(method, uri, body);
        let headers = req.headers_mut();
        headers.reserve(self.inner.config.headers.len() + 2);
        for (name, value) in &self.inner.config.headers {
            headers.insert(name, value.clone());
        }
        req
    }

    /// A request with the user agent (and a forwarding proxy's credentials)
    /// but none of the configured headers: those are for the MCP server, and
    /// an authorizer's requests go to other servers.
    pub(crate) fn bare_request(
        &self,
        method: Method,
        uri: &Uri,
        body: Bytes,
    ) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = method;
        *req.uri_mut() = uri.clone();
        let headers = req.headers_mut();
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
    ) -> Result<Response<ResponseBody>, Error> {
        self.send_on(&self.inner.hyper, req).await
    }

    /// Like [`send`](Self::send), connecting to public addresses only (an
    /// authorizer's request to a URL learned from a server).
    pub(crate) async fn send_public_only(
        &self,
        req: Request<Full<Bytes>>,
    ) -> Result<Response<ResponseBody>, Error> {
        self.send_on(&self.inner.guarded, req).await
    }

    async fn send_on(
        &self,
        pool: &Pool,
        req: Request<Full<Bytes>>,
    ) -> Result<Response<ResponseBody>, Error> {
        // Open until the answer's body ends; a connect the pool starts for
        // it meanwhile may wait for a connection to come back (see
        // `crate::demand`).
        let open = pool.demand.open(req.uri());
        let fut = demand::SENDING.scope(open.as_ref().map(Open::waiting), pool.client.request(req));
        match tokio::time::timeout(self.inner.config.request_timeout, fut).await {
            Ok(Ok(resp)) => Ok(resp.map(|body| ResponseBody::new(body, open.map(Open::answered)))),
            Ok(Err(e)) => Err(classify_client_error(e)),
            Err(_) => Err(Error::Timeout),
        }
    }
}

/// Connect failures (a connect timeout included) are told apart: nothing
/// reached the server, so they are safe to retry.
fn classify_client_error(e: hyper_util::client::legacy::Error) -> Error {
    if e.is_connect() {
        return ConnectError::Unreachable(Box::new(e)).into();
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

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;
    use hyper::body::Body as _;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A keep-alive HTTP/1.1 server that answers every request `ok`.
    async fn ok_server() -> Uri {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut tcp, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut seen = Vec::new();
                    let mut buf = [0u8; 1024];
                    while let Ok(n @ 1..) = tcp.read(&mut buf).await {
                        seen.extend_from_slice(&buf[..n]);
                        while let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                            seen.drain(..end + 4);
                            let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                            if tcp.write_all(answer).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        uri.parse().unwrap()
    }

    #[tokio::test]
    async fn a_request_stays_open_until_its_answers_body_is_read() {
        let uri = ok_server().await;
        let client = HttpClient::new(HttpConfig::new()).unwrap();
        let demand = &client.inner.hyper.demand;
        let resp = client
            .send(client.request(Method::GET, &uri, Bytes::new()))
            .await
            .unwrap();
        assert_eq!(demand.counts(&uri), (1, 1));
        let mut body = resp.into_body();
        assert_eq!(body.size_hint().exact(), Some(2));
        assert!(!body.is_end_stream());
        let frame = body.frame().await.unwrap().unwrap();
        assert_eq!(&frame.into_data().unwrap()[..], b"ok");
        // The last frame ends the request: hyper gives the connection back
        // without another poll.
        assert!(body.is_end_stream());
        assert_eq!(demand.counts(&uri), (0, 1));
        assert!(body.frame().await.is_none());
        // An answer dropped unread closes its request too.
        let resp = client
            .send(client.request(Method::GET, &uri, Bytes::new()))
            .await
            .unwrap();
        assert_eq!(demand.counts(&uri).0, 1);
        drop(resp);
        assert_eq!(demand.counts(&uri).0, 0);
        // The guarded pool counts its own.
        assert_eq!(client.inner.guarded.demand.counts(&uri), (0, 0));
    }
}
