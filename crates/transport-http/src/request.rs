//! Every HTTP request of the transports is built and sent here: the MCP
//! header names, one builder per kind of request ([`Build`]), sending, and
//! the one retry loop (which builds each attempt with the builder of the
//! first). An answer of 401 or 403 becomes [`Error::Authorization`] here
//! and nowhere else.
//!
//! Authorization happens in [`send`]: the authorizer's credentials are
//! added to every request there, and every 401 or 403 is handed to it
//! there, the request then built again by its [`Build`].

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::Full;
use mcpwire_auth::{AuthRound, Challenged};
use mcpwire_transport::{
    ConnectError, Direction, FrameMeta, REDACTED, Tapped, is_credential_header,
};

use crate::context::Link;
use crate::demand::ResponseBody;
use crate::error::Error;
use crate::outbound::Outbound;
use crate::response::{authorization_error, authorization_required, retry_after, status_error};
use crate::session::SessionSnapshot;

pub(crate) const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
pub(crate) const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(crate) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const ACCEPT_POST: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// One kind of request and what it carries. A retried request is built
/// again from the same `Build`, with the session as it is by then.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Build<'a> {
    /// A frame POSTed to the MCP endpoint (Streamable HTTP). An `initialize`
    /// request starts a new session, so it carries neither the old session
    /// id nor a protocol version.
    Post {
        frame: &'a Bytes,
        kind: &'a Outbound,
    },
    /// A frame POSTed to the endpoint a legacy SSE stream announced.
    LegacyPost { endpoint: &'a Uri, frame: &'a Bytes },
    /// A GET on the URL for an SSE stream, resuming after an event id.
    Stream { last_event_id: Option<&'a str> },
    /// The DELETE that ends a Streamable HTTP session.
    EndSession,
}

impl Build<'_> {
    /// The request, with the session headers of `snap`.
    pub(crate) fn request(self, link: &Link, snap: &SessionSnapshot) -> Request<Full<Bytes>> {
        match self {
            Build::Post { frame, kind } => {
                let mut req = link.client.request(Method::POST, &link.url, frame.clone());
                let headers = req.headers_mut();
                headers.insert(ACCEPT, ACCEPT_POST);
                headers.insert(CONTENT_TYPE, JSON);
                if !kind.is_initialize() {
                    session_headers(headers, snap);
                }
                if let Outbound::Request {
                    meta: Some(meta), ..
                } = kind
                {
                    meta_headers(headers, meta);
                }
                req
            }
            Build::LegacyPost { endpoint, frame } => {
                let mut req = link.client.request(Method::POST, endpoint, frame.clone());
                let headers = req.headers_mut();
                headers.insert(ACCEPT, ACCEPT_POST);
                headers.insert(CONTENT_TYPE, JSON);
                req
            }
            Build::Stream { last_event_id } => {
                let mut req = link.client.request(Method::GET, &link.url, Bytes::new());
                let headers = req.headers_mut();
                headers.insert(ACCEPT, ACCEPT_SSE);
                session_headers(headers, snap);
                if let Some(value) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
                    headers.insert(LAST_EVENT_ID, value);
                }
                req
            }
            Build::EndSession => {
                let mut req = link.client.request(Method::DELETE, &link.url, Bytes::new());
                session_headers(req.headers_mut(), snap);
                req
            }
        }
    }
}

/// The client's header fields for this request (the `FrameMeta` it was sent with),
/// after the session's: a `MCP-Protocol-Version` among them replaces the
/// session's. A field that is not a valid header is dropped, with a debug
/// line; the request still goes.
fn meta_headers(headers: &mut HeaderMap, meta: &FrameMeta) {
    for (name, value) in meta.headers() {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(name), Ok(value)) => {
                headers.insert(name, value);
            }
            _ => tracing::debug!(name, "dropping a header field that is not valid HTTP"),
        }
    }
}

fn session_headers(headers: &mut HeaderMap, snap: &SessionSnapshot) {
    if let Some(id) = &snap.session_id {
        headers.insert(MCP_SESSION_ID, id.clone());
    }
    if let Some(v) = &snap.protocol_version {
        headers.insert(MCP_PROTOCOL_VERSION, v.clone());
    }
}

/// How many times one request may be sent again after a challenge (the
/// authorizer bounds itself; this bounds an authorizer of the caller's).
const MAX_AUTH_RETRIES: u32 = 8;

/// Sends a request built by `build` (`req` is its first build) and waits
/// for its answer's headers. Any status but 401 and 403 comes back as `Ok`
/// for the caller to judge.
///
/// This is where authorization happens, for every request of the
/// transports: the authorizer's headers are added, and after a 401 or 403
/// it decides: the request is built again and resent (new credentials, more
/// scope, a DPoP nonce), or it fails with
/// [`Error::AuthorizationFailed`]. No lock is held meanwhile. Without an
/// authorizer, a 401 or 403 is [`Error::Authorization`], with the server's
/// challenges.
pub(crate) async fn send(
    link: &Link,
    build: Build<'_>,
    req: Request<Full<Bytes>>,
) -> Result<Response<ResponseBody>, Error> {
    let Some(auth) = link.auth.as_deref() else {
        tap_sent(link, build, &req);
        let resp = link.client.send(req).await?;
        if is_challenge(resp.status()) {
            return Err(authorization_error(resp).await);
        }
        return Ok(resp);
    };
    let mut round = AuthRound::default();
    // Counted here, not from `round`: an authorizer of the caller's cannot
    // count in it (its counts are the auth crate's), and one that always
    // says "again" must not resend forever.
    let mut sent_again = 0;
    let mut req = req;
    loop {
        let sent = auth
            .headers(req.method(), req.uri())
            .await
            .map_err(|source| Error::AuthorizationFailed {
                required: None,
                source,
            })?;
        sent.apply(req.headers_mut());
        let (method, uri) = (req.method().clone(), req.uri().clone());
        tap_sent(link, build, &req);
        let resp = link.client.send(req).await?;
        let status = resp.status();
        if !is_challenge(status) {
            return Ok(resp);
        }
        let (required, nonce) = authorization_required(resp).await;
        let answer = Challenged::new(
            status,
            &required.challenges,
            nonce.as_deref(),
            &method,
            &uri,
            &sent,
        );
        match auth.challenged(answer, &mut round).await {
            Ok(()) if sent_again < MAX_AUTH_RETRIES => {
                sent_again += 1;
                tracing::debug!(status = status.as_u16(), "sending again after a challenge");
                req = build.request(link, &link.session.snapshot());
            }
            Ok(()) => return Err(Error::Authorization(Box::new(required))),
            Err(source) => {
                return Err(Error::AuthorizationFailed {
                    required: Some(Box::new(required)),
                    source,
                });
            }
        }
    }
}

/// Shows the transport's tap, if it has one, the frame `req` carries with
/// the header fields it is sent with (credentials redacted). Requests that
/// carry no frame (a GET, a DELETE) are not shown.
fn tap_sent(link: &Link, build: Build<'_>, req: &Request<Full<Bytes>>) {
    let Some(tap) = link.session.tap.get() else {
        return;
    };
    let frame = match build {
        Build::Post { frame, .. } | Build::LegacyPost { frame, .. } => frame,
        Build::Stream { .. } | Build::EndSession => return,
    };
    let headers: Vec<(&str, &str)> = req
        .headers()
        .iter()
        .map(|(name, value)| {
            let shown = if is_credential_header(name.as_str()) {
                REDACTED
            } else {
                value.to_str().unwrap_or("(not text)")
            };
            (name.as_str(), shown)
        })
        .collect();
    tap.frame(&Tapped::new(Direction::Sent, frame).with_headers(&headers));
}

fn is_challenge(status: StatusCode) -> bool {
    matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
}

/// Sends `first` (built from `build`), retrying what is safe to retry under
/// the retry policy: a failed connect (nothing reached the server; but not
/// a certificate we rejected, which would be rejected again) and 429/503
/// (the server said it did not take the request), honouring
/// `Retry-After`. Each retry is built from `build` again. When the budget
/// runs out, the last failure comes back inside
/// [`Error::RetriesExhausted`] (as itself if the policy allows no retry).
pub(crate) async fn send_with_retry(
    link: &Link,
    build: Build<'_>,
    first: Request<Full<Bytes>>,
) -> Result<Response<ResponseBody>, Error> {
    let mut backoff = link.client.config().retry.backoff();
    let mut req = first;
    let mut retried = false;
    loop {
        let result = send(link, build, req).await;
        let floor = match &result {
            Ok(resp) if is_busy(resp.status()) => retry_after(resp.headers()),
            Err(Error::Connect(ConnectError::Unreachable(e)))
                if !certificate_rejected(e.as_ref()) =>
            {
                None
            }
            _ => return result,
        };
        let Some(delay) = backoff.next_delay(floor) else {
            let last = match result {
                Ok(resp) => status_error(resp).await,
                Err(e) => e,
            };
            // With no retry allowed at all, the failure is just itself.
            return Err(if retried {
                Error::RetriesExhausted(Box::new(last))
            } else {
                last
            });
        };
        retried = true;
        drop(result);
        tracing::debug!(?delay, "retrying a request");
        tokio::time::sleep(delay).await;
        req = build.request(link, &link.session.snapshot());
    }
}

/// True if the connect failed because we rejected the server's certificate
/// (unknown issuer, expired, wrong name...) or could agree on no protocol
/// with it: the same handshake would fail the same way, so retrying only
/// delays the error (by half a minute under the default policy).
fn certificate_rejected(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(e) = cur {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return matches!(
                tls,
                rustls::Error::InvalidCertificate(_)
                    | rustls::Error::NoCertificatesPresented
                    | rustls::Error::PeerIncompatible(_)
            );
        }
        cur = e.source();
    }
    false
}

/// True for the statuses that mean "busy, come back later".
pub(crate) fn is_busy(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE
}
