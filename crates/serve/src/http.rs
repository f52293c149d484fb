//! Streamable HTTP on a loopback listener, in both eras on one endpoint.
//!
//! The `initialize` era (2025 revisions): every client gets its own
//! [`Session`] behind an `Mcp-Session-Id`. A POSTed request is answered on
//! its own response: an SSE stream with the request's progress and then
//! its answer (or the answer alone as JSON, for a client that does not
//! accept SSE). A notification or a response gets `202 Accepted`. GET
//! opens the session's stream for what belongs to no request
//! (`list_changed`, log messages); DELETE ends the session.
//!
//! The stateless era (2026-07-28): a request whose `_meta` declares the
//! revision is served on its own (`crate::stateless`), whatever session
//! header it carries: no session is made or named, none of the session
//! bound is used.
//!
//! Every request must carry `Authorization: Bearer <token>` (compared in
//! constant time) and, from a browser, an `Origin` and `Host` on the
//! loopback: a page elsewhere cannot reach the fleet through the user's
//! browser (DNS rebinding). Bodies, sessions and every queue are bounded.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject, Id, Message};
use mcpwire_transport::{FrameKind, FrameSender, Outgoing};
use serde::Deserialize;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::AbortHandle;

use crate::body::{Answer, Events, rpc_error, sse, status, whole_answer};
use crate::methods;
use crate::requests;
use crate::session::{Server, Session};
use crate::stateless;
use crate::wire;

/// The header naming a session.
const SESSION_HEADER: &str = "mcp-session-id";
/// How many frames wait for one response stream, or the session's GET
/// stream, before more are dropped (progress, logs) or waited for (answers).
const STREAM_QUEUE: usize = 32;

/// How [`Server::serve_http`] serves.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    token: String,
    max_sessions: usize,
    max_stateless: usize,
    idle: Duration,
    max_body: usize,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a secret: never in a `Debug`.
        f.debug_struct("HttpOptions")
            .field("token", &"<redacted>")
            .field("max_sessions", &self.max_sessions)
            .field("max_stateless", &self.max_stateless)
            .field("idle", &self.idle)
            .field("max_body", &self.max_body)
            .finish()
    }
}

impl HttpOptions {
    /// Requests must carry `Authorization: Bearer {token}`. At most 64
    /// sessions, each ended after 10 minutes without a request or an open
    /// stream; at most 256 stateless requests running at once; bodies up
    /// to 4 MiB.
    pub fn new(token: impl Into<String>) -> Self {
        Self {
            token: token.into(),
            max_sessions: 64,
            max_stateless: 256,
            idle: Duration::from_secs(600),
            max_body: 4 << 20,
        }
    }

    /// How many sessions may be open at once (at least one); one more
    /// `initialize` is answered `503 Service Unavailable`.
    #[must_use]
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// How many requests of the stateless era may run at once over the
    /// whole endpoint (at least one); one more is answered `503 Service
    /// Unavailable`. They hold no session, so this is their only bound.
    #[must_use]
    pub fn max_stateless_requests(mut self, n: usize) -> Self {
        self.max_stateless = n.max(1);
        self
    }

    /// How long a session without requests and without an open stream is
    /// kept before it is ended.
    #[must_use]
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle = idle;
        self
    }

    /// The largest request body accepted (`413` beyond).
    #[must_use]
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }
}

/// A random secret of 32 bytes as 64 hex digits, from the operating
/// system's generator: a bearer token, or a session id.
///
/// # Panics
///
/// If the operating system's random generator fails: no secret can be made
/// safely without it.
pub fn generate_token() -> String {
    use ring::rand::SecureRandom as _;
    let mut bytes = [0u8; 32];
    // The system generator failing is the platform's fault, and nothing
    // safe can be made without it.
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .expect("the operating system's random generator works");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Server {
    /// Serves Streamable HTTP at `/mcp` on `listener` (bind it to a
    /// loopback address) until the listener fails. Each client's session
    /// ends with its DELETE, its idle timeout, or this future being dropped.
    pub async fn serve_http(
        &self,
        listener: TcpListener,
        options: HttpOptions,
    ) -> std::io::Result<()> {
        let endpoint = Arc::new(Endpoint {
            server: self.clone(),
            expected: format!("Bearer {}", options.token).into_bytes(),
            stateless: Arc::new(Semaphore::new(options.max_stateless)),
            options,
            sessions: Mutex::new(HashMap::new()),
        });
        // Ends every session when serving ends (this future dropped).
        let _ending = Ending(endpoint.clone());
        let sweeper = tokio::spawn(sweep(Arc::downgrade(&endpoint)));
        let _sweeper = Abort(sweeper.abort_handle());
        loop {
            let (stream, _) = listener.accept().await?;
            let endpoint = endpoint.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| handle(endpoint.clone(), req));
                // A connection's error ends that connection only.
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }
}

/// Aborts a task when dropped.
struct Abort(AbortHandle);

impl Drop for Abort {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Ends every session when dropped.
struct Ending(Arc<Endpoint>);

impl Drop for Ending {
    fn drop(&mut self) {
        for (_, session) in self.0.sessions().drain() {
            session.end();
        }
    }
}

struct Endpoint {
    server: Server,
    options: HttpOptions,
    /// `Bearer {token}`, as the header must read.
    expected: Vec<u8>,
    /// The places of the stateless requests running.
    stateless: Arc<Semaphore>,
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
}

impl Endpoint {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Ends the sessions idle longer than the endpoint's timeout, until the
/// endpoint is gone.
async fn sweep(endpoint: std::sync::Weak<Endpoint>) {
    loop {
        let every = match endpoint.upgrade() {
            Some(e) => (e.options.idle / 4).max(Duration::from_millis(100)),
            None => return,
        };
        tokio::time::sleep(every).await;
        let Some(endpoint) = endpoint.upgrade() else {
            return;
        };
        let idle = endpoint.options.idle;
        let ended: Vec<Arc<HttpSession>> = {
            let mut sessions = endpoint.sessions();
            let stale: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.is_idle(idle))
                .map(|(id, _)| id.clone())
                .collect();
            stale.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in ended {
            session.end();
        }
    }
}

/// One client's session, and where its outgoing frames go.
struct HttpSession {
    session: Arc<Session>,
    routes: Arc<Mutex<Routes>>,
    router: AbortHandle,
    last_used: Mutex<Instant>,
}

/// Where each outgoing frame goes: a request's answer and progress to the
/// stream of the POST that carried it, anything else to the GET stream.
#[derive(Default)]
struct Routes {
    requests: HashMap<Id, mpsc::Sender<Outgoing>>,
    /// Progress tokens (as JSON text) to the request that carried them.
    tokens: HashMap<String, Id>,
    standalone: Option<mpsc::Sender<Outgoing>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl HttpSession {
    fn start(server: &Server) -> Arc<Self> {
        let (sender, outgoing) = FrameSender::channel(STREAM_QUEUE);
        let session = Session::start(server, sender);
        let routes = Arc::new(Mutex::new(Routes::default()));
        let router = tokio::spawn(route(outgoing, routes.clone())).abort_handle();
        Arc::new(Self {
            session,
            routes,
            router,
            last_used: Mutex::new(Instant::now()),
        })
    }

    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// Idle: no request waiting, no open GET stream, and nothing asked
    /// for longer than `idle`.
    fn is_idle(&self, idle: Duration) -> bool {
        let routes = lock(&self.routes);
        let streaming = routes.standalone.as_ref().is_some_and(|s| !s.is_closed());
        routes.requests.is_empty() && !streaming && lock(&self.last_used).elapsed() >= idle
    }

    fn end(&self) {
        self.router.abort();
        self.session.end();
    }
}

/// Sends each outgoing frame of a session where it belongs. An answer
/// waits for room on its stream (it must arrive); progress and other
/// notifications are dropped when their stream is full or gone. What a
/// frame is comes with it; only a progress notification is read, for its
/// token.
async fn route(mut outgoing: mpsc::Receiver<Outgoing>, routes: Arc<Mutex<Routes>>) {
    while let Some(out) = outgoing.recv().await {
        match out.kind.clone() {
            FrameKind::Response { id } => {
                let stream = {
                    let mut routes = lock(&routes);
                    routes.tokens.retain(|_, request| *request != id);
                    routes.requests.remove(&id)
                };
                if let Some(stream) = stream {
                    let _ = stream.send(out).await;
                }
            }
            FrameKind::Notification { method } => {
                let routes = lock(&routes);
                let stream = if method == "notifications/progress" {
                    progress_token_of(&out.frame)
                        .and_then(|t| routes.tokens.get(&t))
                        .and_then(|id| routes.requests.get(id))
                } else {
                    routes.standalone.as_ref()
                };
                if let Some(stream) = stream {
                    let _ = stream.try_send(out);
                }
            }
            // A server's request relayed to the client: on the stream of
            // the call it belongs to, as the spec asks, else on the GET
            // stream. It must arrive, so it waits for room.
            FrameKind::Request { .. } => {
                let stream = {
                    let routes = lock(&routes);
                    requests::related(out.meta.as_deref())
                        .and_then(|id| routes.requests.get(&id))
                        .or(routes.standalone.as_ref())
                        .cloned()
                };
                if let Some(stream) = stream {
                    let _ = stream.send(out).await;
                }
            }
            // Every frame a session sends says what it is (an answer to no
            // id has no stream to go to).
            _ => {}
        }
    }
}

/// The `progressToken` of a progress notification's frame, as JSON text:
/// only the token is decoded, the rest skipped.
fn progress_token_of(frame: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Note {
        params: Params,
    }
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "progressToken")]
        token: Value,
    }
    // Whatever it is, it finds only a token a request registered.
    Some(
        serde_json::from_slice::<Note>(frame)
            .ok()?
            .params
            .token
            .to_string(),
    )
}

/// The `progressToken` of a request's `_meta` or of a progress
/// notification's params, as JSON text.
fn progress_token(params: Option<&mcpwire_codec::jsonrpc::Payload>) -> Option<String> {
    let value: Value = params?.deserialize().ok()?;
    let token = value
        .get("progressToken")
        .or_else(|| value.get("_meta")?.get("progressToken"))?;
    (token.is_string() || token.is_i64() || token.is_u64()).then(|| token.to_string())
}

/// True if `value` (a `Host` or an `Origin`) names the loopback: the
/// hosts a page on another site cannot have.
fn is_loopback(value: &str, with_scheme: bool) -> bool {
    let rest = if with_scheme {
        match value.split_once("://") {
            Some(("http" | "https", rest)) => rest,
            _ => return false,
        }
    } else {
        value
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        match v6.split_once(']') {
            Some((host, port)) if port.is_empty() || port.starts_with(':') => host,
            _ => return false,
        }
    } else {
        rest.split(':').next().unwrap_or_default()
    };
    matches!(host, "127.0.0.1" | "localhost" | "::1")
}

/// Compares without stopping at the first difference, so the time taken
/// says nothing of how much of a guessed token was right.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

fn header_str(req: &Request<Incoming>, name: impl header::AsHeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

async fn handle(
    endpoint: Arc<Endpoint>,
    req: Request<Incoming>,
) -> Result<Response<Answer>, Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(status(StatusCode::NOT_FOUND));
    }
    let host_ok = header_str(&req, header::HOST).is_none_or(|h| is_loopback(h, false));
    let origin_ok = header_str(&req, header::ORIGIN).is_none_or(|o| is_loopback(o, true));
    if !host_ok || !origin_ok {
        return Ok(status(StatusCode::FORBIDDEN));
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes)
        .unwrap_or_default();
    if !same_secret(given, &endpoint.expected) {
        let mut response = status(StatusCode::UNAUTHORIZED);
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return Ok(response);
    }
    let id = header_str(&req, SESSION_HEADER).map(str::to_owned);
    if req.method() == Method::POST {
        // The body says which era the message is of, and so whether the
        // session header matters.
        return Ok(post(&endpoint, req, id).await);
    }
    let session = id.as_ref().map(|id| endpoint.sessions().get(id).cloned());
    Ok(match (req.method().clone(), session) {
        (_, None) => status(StatusCode::BAD_REQUEST),
        (_, Some(None)) => status(StatusCode::NOT_FOUND),
        (Method::GET, Some(Some(session))) => get(&req, &session),
        (Method::DELETE, Some(Some(session))) => {
            if let Some(id) = id {
                endpoint.sessions().remove(&id);
            }
            session.end();
            status(StatusCode::OK)
        }
        (_, Some(Some(_))) => {
            let mut response = status(StatusCode::METHOD_NOT_ALLOWED);
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            response
        }
    })
}

/// GET: the session's stream for what belongs to no request. One at a time.
fn get(req: &Request<Incoming>, session: &HttpSession) -> Response<Answer> {
    if !header_str(req, header::ACCEPT).is_some_and(|a| a.contains("text/event-stream")) {
        return status(StatusCode::NOT_ACCEPTABLE);
    }
    session.touch();
    let mut routes = lock(&session.routes);
    if routes.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
        return status(StatusCode::CONFLICT);
    }
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    routes.standalone = Some(tx);
    sse(Events::new(rx, None))
}

/// What the `MCP-Protocol-Version` header says of a POST.
enum VersionHeader {
    /// No header (a 2025 client before `initialize`, or of 2025-03-26).
    Absent,
    /// A revision of the `initialize` era we speak.
    Legacy,
    /// A stateless revision we speak.
    Stateless,
    /// A revision we do not speak, or not a text value: the spec of both
    /// eras asks for a `400`.
    Unspoken(Value),
}

fn version_header(req: &Request<Incoming>) -> VersionHeader {
    let Some(raw) = req.headers().get("mcp-protocol-version") else {
        return VersionHeader::Absent;
    };
    let Ok(text) = raw.to_str() else {
        return VersionHeader::Unspoken(Value::String(
            String::from_utf8_lossy(raw.as_bytes()).into_owned(),
        ));
    };
    if methods::modern_version(text).is_some() {
        VersionHeader::Stateless
    } else if methods::SUPPORTED_VERSIONS.contains(&text) {
        VersionHeader::Legacy
    } else {
        VersionHeader::Unspoken(Value::String(text.to_owned()))
    }
}

/// POST: one message. A request declaring a stateless revision is served
/// on its own; anything else belongs to the session `id` names (or, for
/// `initialize`, to a new one).
async fn post(endpoint: &Endpoint, req: Request<Incoming>, id: Option<String>) -> Response<Answer> {
    let wants_sse =
        header_str(&req, header::ACCEPT).is_some_and(|a| a.contains("text/event-stream"));
    let version = version_header(&req);
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, endpoint.options.max_body)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(_) => return status(StatusCode::PAYLOAD_TOO_LARGE),
    };
    let message = match Message::parse(body.clone()) {
        Ok(message) => message,
        Err(e) => {
            let error = ErrorObject::new(ErrorCode::PARSE_ERROR, wire::chain(&e));
            return rpc_error(StatusCode::BAD_REQUEST, None, error);
        }
    };
    if let VersionHeader::Unspoken(asked) = &version {
        let id = match &message {
            Message::Request(request) => Some(&request.id),
            _ => None,
        };
        return rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            methods::unsupported_version(asked),
        );
    }
    let stateless_header = matches!(version, VersionHeader::Stateless);
    if let Message::Request(request) = &message {
        match methods::era_of(&request.method, request.params.as_ref()) {
            Ok(Some(version)) => {
                return stateless::serve(
                    &endpoint.server,
                    &endpoint.stateless,
                    &parts.headers,
                    wants_sse,
                    request,
                    body,
                    version,
                )
                .await;
            }
            Err(error) => return rpc_error(StatusCode::BAD_REQUEST, Some(&request.id), error),
            // `initialize` selects the 2025 era whatever the header says.
            Ok(None) if stateless_header && id.is_none() && request.method != "initialize" => {
                let error = ErrorObject::new(
                    methods::HEADER_MISMATCH,
                    "header mismatch: MCP-Protocol-Version names a stateless revision, the body's _meta none",
                );
                return rpc_error(StatusCode::BAD_REQUEST, Some(&request.id), error);
            }
            Ok(None) => {}
        }
    }
    if id.is_none() && stateless_header && matches!(message, Message::Notification(_)) {
        // A stateless client's notification belongs to no session, and the
        // revision gives it nothing to do over HTTP (a closed stream, not a
        // notification, cancels a request).
        return status(StatusCode::ACCEPTED);
    }
    let is_initialize = matches!(&message, Message::Request(r) if r.method == "initialize");
    let session = id.as_ref().map(|id| endpoint.sessions().get(id).cloned());
    let (new_id, session) = match (session, is_initialize) {
        (None, true) => {
            let mut sessions = endpoint.sessions();
            if sessions.len() >= endpoint.options.max_sessions {
                return status(StatusCode::SERVICE_UNAVAILABLE);
            }
            let id = generate_token();
            let session = HttpSession::start(&endpoint.server);
            sessions.insert(id.clone(), session.clone());
            (Some(id), session)
        }
        (None, false) => {
            let error = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "no Mcp-Session-Id: initialize first",
            );
            return rpc_error(StatusCode::BAD_REQUEST, None, error);
        }
        (Some(None), _) => return status(StatusCode::NOT_FOUND),
        (Some(Some(session)), _) => (None, session),
    };
    session.touch();
    let mut response = match message {
        Message::Request(request) => {
            let (tx, rx) = mpsc::channel(STREAM_QUEUE);
            {
                let mut routes = lock(&session.routes);
                if routes.requests.contains_key(&request.id) {
                    let error = ErrorObject::new(
                        ErrorCode::INVALID_REQUEST,
                        format!("request id {} is already in use", request.id),
                    );
                    return rpc_error(StatusCode::OK, Some(&request.id), error);
                }
                routes.requests.insert(request.id.clone(), tx);
                if let Some(token) = progress_token(request.params.as_ref()) {
                    routes.tokens.insert(token, request.id.clone());
                }
            }
            session.session.on_frame(body).await;
            if wants_sse {
                sse(Events::new(rx, None))
            } else {
                whole_answer(rx, None).await
            }
        }
        Message::Notification(n) => {
            if n.method == "notifications/cancelled"
                && let Some(id) = n
                    .params
                    .as_ref()
                    .and_then(|p| p.deserialize::<Value>().ok())
                    .and_then(|v| serde_json::from_value::<Id>(v["requestId"].clone()).ok())
            {
                // No answer will come: end that request's stream.
                let mut routes = lock(&session.routes);
                routes.requests.remove(&id);
                routes.tokens.retain(|_, request| *request != id);
            }
            session.session.on_frame(body).await;
            status(StatusCode::ACCEPTED)
        }
        Message::Response(_) => {
            session.session.on_frame(body).await;
            status(StatusCode::ACCEPTED)
        }
    };
    if let Some(id) = new_id
        && let Ok(value) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_and_origins_pass() {
        assert!(is_loopback("127.0.0.1:8080", false));
        assert!(is_loopback("localhost", false));
        assert!(is_loopback("[::1]:80", false));
        assert!(!is_loopback("evil.example:8080", false));
        assert!(!is_loopback("127.0.0.1.evil.example", false));
        assert!(is_loopback("http://localhost:3000", true));
        assert!(is_loopback("https://127.0.0.1", true));
        assert!(!is_loopback("http://evil.example", true));
        assert!(!is_loopback("null", true));
        assert!(!is_loopback("http://[::1]evil", true));
    }

    #[test]
    fn a_secret_matches_only_itself() {
        assert!(same_secret(b"Bearer abc", b"Bearer abc"));
        assert!(!same_secret(b"Bearer abd", b"Bearer abc"));
        assert!(!same_secret(b"Bearer ab", b"Bearer abc"));
        assert!(!same_secret(b"", b"Bearer abc"));
        // Two differences that would cancel out under another fold.
        assert!(!same_secret(b"ab", b"ba"));
    }

    #[test]
    fn generated_tokens_are_long_and_differ() {
        let (a, b) = (generate_token(), generate_token());
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn a_progress_token_is_found_in_meta_or_params() {
        let meta = mcpwire_codec::jsonrpc::Payload::from_value(
            &serde_json::json!({"_meta": {"progressToken": "t"}}),
        )
        .unwrap();
        assert_eq!(progress_token(Some(&meta)).as_deref(), Some("\"t\""));
        let note =
            mcpwire_codec::jsonrpc::Payload::from_value(&serde_json::json!({"progressToken": 4}))
                .unwrap();
        assert_eq!(progress_token(Some(&note)).as_deref(), Some("4"));
        let none =
            mcpwire_codec::jsonrpc::Payload::from_value(&serde_json::json!({"name": "x"})).unwrap();
        assert_eq!(progress_token(Some(&none)), None);
    }

    #[test]
    fn options_never_show_the_token() {
        let shown = format!("{:?}", HttpOptions::new("s3cret-token"));
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("max_sessions: 64"), "{shown}");
    }
}
