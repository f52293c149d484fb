//! The HTTP client as the [`HttpFetch`] of authorizers: metadata,
//! registration and token requests over the same pool, TLS roots and
//! proxies as the MCP traffic, without the headers configured for the MCP
//! server, never following a redirect, bounded in time and size. A request
//! to a URL learned from a server (marked
//! [`PublicAddressesOnly`](mcpwire_auth::PublicAddressesOnly)) goes through
//! a pool whose connections reach public addresses only.

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Request, Response};
use mcpwire_auth::{FetchError, FetchErrorKind, HttpFetch, PublicAddressesOnly};

use crate::client::{HttpClient, WeakClient};
use mcpwire_transport::ConnectError;

use crate::error::Error;
use crate::response::read_body;

/// The largest answer an authorization request reads (metadata documents
/// and token responses are a few kilobytes).
const MAX_BODY: usize = 1 << 20;

impl HttpFetch for HttpClient {
    fn fetch(&self, request: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>> {
        let client = self.clone();
        Box::pin(async move { fetch(&client, request).await })
    }
}

impl HttpFetch for WeakClient {
    fn fetch(&self, request: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>> {
        let client = self.upgrade();
        Box::pin(async move {
            match client {
                Some(c) => fetch(&c, request).await,
                None => Err(FetchError::new(
                    FetchErrorKind::Other,
                    "the HTTP client was dropped",
                )),
            }
        })
    }
}

async fn fetch(
    client: &HttpClient,
    request: Request<Bytes>,
) -> Result<Response<Bytes>, FetchError> {
    let (parts, body) = request.into_parts();
    let mut req = client.bare_request(parts.method, &parts.uri, body);
    for (name, value) in &parts.headers {
        req.headers_mut().insert(name, value.clone());
    }
    // A URL learned from a server: its name is resolved once, and only a
    // public address it resolves to is connected to.
    let resp = if parts.extensions.get::<PublicAddressesOnly>().is_some() {
        client.send_public_only(req).await
    } else {
        client.send(req).await
    }
    .map_err(fetch_error)?;
    let (head, body) = resp.into_parts();
    let body = read_body(body, MAX_BODY, client.config().request_timeout)
        .await
        .map_err(fetch_error)?;
    Ok(Response::from_parts(head, body))
}

fn fetch_error(e: Error) -> FetchError {
    let kind = match e {
        Error::Connect(ConnectError::Unreachable(_)) => FetchErrorKind::Connect,
        Error::Timeout => FetchErrorKind::Timeout,
        _ => FetchErrorKind::Other,
    };
    FetchError::new(kind, e)
}
