//! [`HttpFetch`]: how this crate makes its own HTTP requests (metadata,
//! registration, token requests), so it rides on the caller's HTTP client
//! (its connection pool, TLS roots and proxy settings) instead of a second
//! HTTP stack.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Request, Response};

use crate::address::{PublicAddressesOnly, literal_address};
use crate::error::{AuthError, FetchError, FetchErrorKind};

/// Sends one HTTP request and returns the whole answer.
///
/// The contract an implementation keeps:
/// - **no redirects are followed**: a `3xx` is returned as it is (the flows
///   here treat it as a failure, or read `Location` themselves), so a token
///   or a secret is never replayed to a URL the server chose;
/// - any status is `Ok`; `Err` means no answer was read;
/// - the body is read whole but bounded (1 MiB is plenty for every document
///   of these flows), and the wait is bounded;
/// - a request carrying the [`PublicAddressesOnly`] extension (a URL learned
///   from a server) connects only to an address that passes
///   [`PublicAddressesOnly::check`], from the one lookup of its name. An
///   address written in the URL was checked before the request was made.
///
/// `mcpwire_http::HttpClient` implements it; tests implement it in process.
pub trait HttpFetch: Send + Sync {
    /// Sends `request`.
    fn fetch(&self, request: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>>;
}

impl<T: HttpFetch + ?Sized> HttpFetch for Arc<T> {
    fn fetch(&self, request: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>> {
        (**self).fetch(request)
    }
}

/// The fetcher the flows use: an [`HttpFetch`] with a time bound on every
/// request, and, when `guard` is on, the address policy for URLs learned
/// from a server (see [`crate::address`]).
#[derive(Clone)]
pub(crate) struct Fetcher {
    inner: Arc<dyn HttpFetch>,
    timeout: Duration,
    guard: bool,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("timeout", &self.timeout)
            .field("guard", &self.guard)
            .finish_non_exhaustive()
    }
}

impl Fetcher {
    pub(crate) fn new(inner: Arc<dyn HttpFetch>, timeout: Duration) -> Self {
        Self {
            inner,
            timeout,
            guard: false,
        }
    }

    /// This fetcher with the address policy on (`true`) or off.
    pub(crate) fn guarded(mut self, guard: bool) -> Self {
        self.guard = guard;
        self
    }

    /// This fetcher without the address policy, for URLs the user
    /// configured (an enterprise identity provider's token endpoint).
    pub(crate) fn unguarded(&self) -> Self {
        self.clone().guarded(false)
    }

    /// Refuses `url` now when the address policy is on and its host is
    /// written as an address the policy refuses (a name is checked when it
    /// is resolved): for the endpoints of a metadata document, so that
    /// nothing is registered or authorized before one of them is found
    /// unusable.
    pub(crate) fn check_learned(&self, url: &str) -> Result<(), AuthError> {
        let Some(host) = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
        else {
            return Ok(());
        };
        match literal_address(&host) {
            Some(ip) if self.guard => PublicAddressesOnly
                .check(&host, ip)
                .map_err(|e| AuthError::fetch(url, FetchError::new(FetchErrorKind::Connect, e))),
            _ => Ok(()),
        }
    }

    /// Sends `request` within the time bound. The error names the URL (never
    /// its query, which may carry a code).
    pub(crate) async fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, AuthError> {
        let url = without_query(request.uri());
        self.send_raw(request)
            .await
            .map_err(|e| AuthError::fetch(url, e))
    }

    /// Like [`send`](Self::send), with the bare [`FetchError`].
    pub(crate) async fn send_raw(
        &self,
        mut request: Request<Bytes>,
    ) -> Result<Response<Bytes>, FetchError> {
        if self.guard {
            // An address written in the URL is refused here; a name is
            // left to the fetch, which resolves it once and checks the
            // addresses it connects to.
            let host = request.uri().host().unwrap_or_default();
            if let Some(ip) = literal_address(host) {
                PublicAddressesOnly
                    .check(host, ip)
                    .map_err(|e| FetchError::new(FetchErrorKind::Connect, e))?;
            }
            request.extensions_mut().insert(PublicAddressesOnly);
        }
        match tokio::time::timeout(self.timeout, self.inner.fetch(request)).await {
            Ok(r) => r,
            Err(_) => Err(FetchError::timeout()),
        }
    }

    /// A `GET` asking for JSON.
    pub(crate) fn get(url: &str) -> Result<Request<Bytes>, AuthError> {
        Request::get(url)
            .header(http::header::ACCEPT, "application/json")
            .body(Bytes::new())
            .map_err(|e| AuthError::Config(format!("unusable URL {url:?}: {e}")))
    }
}

/// `uri` without its query and fragment, for messages and logs.
pub(crate) fn without_query(uri: &http::Uri) -> String {
    let mut s = String::new();
    if let Some(scheme) = uri.scheme_str() {
        s.push_str(scheme);
        s.push_str("://");
    }
    if let Some(a) = uri.authority() {
        s.push_str(a.as_str());
    }
    s.push_str(uri.path());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_messages_drop_the_query() {
        let uri: http::Uri = "https://as.example/cb?code=secret&state=x".parse().unwrap();
        assert_eq!(without_query(&uri), "https://as.example/cb");
    }

    /// An `HttpFetch` that is never called.
    struct Unused;

    impl HttpFetch for Unused {
        fn fetch(&self, _: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>> {
            unreachable!("not called")
        }
    }

    #[test]
    fn a_fetchers_debug_shows_its_bound_and_policy() {
        let fetcher = Fetcher::new(Arc::new(Unused), Duration::from_secs(3));
        let shown = format!("{:?}", fetcher.guarded(true));
        assert!(
            shown.contains("timeout: 3s") && shown.contains("guard: true"),
            "{shown}"
        );
    }
}
