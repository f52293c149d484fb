//! [`Authorizer`]: what the HTTP transport calls. Before each request it
//! asks for the headers to add; after a `401` or `403` it reports the
//! challenge and either retries the request or fails it with the error.
//!
//! The transport's side of the contract, per request:
//!
//! ```text
//! let mut round = AuthRound::default();
//! loop {
//!     let auth = authorizer.headers(&method, &uri).await?;     // add auth to the request
//!     let answer = send(request + auth).await;
//!     if answer is 401 or 403 {
//!         authorizer.challenged(Challenged { .., sent: &auth }, &mut round).await?;  // Err: fail
//!         continue;                                             // Ok: retry
//!     }
//!     return answer;
//! }
//! ```
//!
//! The authorizer bounds the retries (`round` counts them); the transport
//! holds no lock while it waits, and none across a long-lived answer stream.

use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};

use crate::error::AuthError;
use crate::www_authenticate::Challenge;

/// The headers an [`Authorizer`] adds to one request (`Authorization`, and
/// `DPoP` for DPoP-bound tokens). Their values are marked sensitive, so
/// hyper's `Debug` hides them and HTTP/2 never indexes them.
#[derive(Debug, Clone, Default)]
pub struct AuthHeaders {
    headers: Vec<(HeaderName, HeaderValue)>,
    generation: u64,
}

impl AuthHeaders {
    /// No headers.
    pub fn none() -> Self {
        Self::default()
    }

    /// Headers made from credentials of `generation` (an authorizer's own
    /// counter, so it can tell a stale answer from a fresh one).
    pub fn new(generation: u64) -> Self {
        Self {
            headers: Vec::with_capacity(2),
            generation,
        }
    }

    /// Adds `name: value`, marked sensitive.
    pub fn push(&mut self, name: HeaderName, mut value: HeaderValue) {
        value.set_sensitive(true);
        self.headers.push((name, value));
    }

    /// Whether there is nothing to add.
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
    }

    /// The headers.
    pub fn iter(&self) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
        self.headers.iter().map(|(n, v)| (n, v))
    }

    /// Inserts the headers into `map`, replacing any of the same name.
    pub fn apply(&self, map: &mut HeaderMap) {
        for (n, v) in &self.headers {
            map.insert(n.clone(), v.clone());
        }
    }

    /// The generation of the credentials.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// A `401` or `403` answer, as an [`Authorizer`] needs it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Challenged<'a> {
    /// The status.
    pub status: StatusCode,
    /// The parsed `WWW-Authenticate` challenges.
    pub challenges: &'a [Challenge],
    /// The answer's `DPoP-Nonce` header.
    pub dpop_nonce: Option<&'a str>,
    /// The request's method.
    pub method: &'a Method,
    /// The request's URL.
    pub uri: &'a Uri,
    /// What the request carried.
    pub sent: &'a AuthHeaders,
}

impl<'a> Challenged<'a> {
    /// A challenged answer.
    pub fn new(
        status: StatusCode,
        challenges: &'a [Challenge],
        dpop_nonce: Option<&'a str>,
        method: &'a Method,
        uri: &'a Uri,
        sent: &'a AuthHeaders,
    ) -> Self {
        Self {
            status,
            challenges,
            dpop_nonce,
            method,
            uri,
            sent,
        }
    }
}

/// What one request has been through, kept by the transport for the
/// request's life and updated by the authorizer, which bounds the retries
/// with it.
#[derive(Debug, Default, Clone)]
pub struct AuthRound {
    pub(crate) authorizations: u32,
    pub(crate) refreshed: bool,
    pub(crate) free_retries: u32,
}

impl AuthRound {
    /// How many times the request was retried after a challenge.
    pub fn retries(&self) -> u32 {
        self.authorizations + u32::from(self.refreshed) + self.free_retries
    }
}

/// Supplies the credentials of HTTP requests and reacts to challenges.
pub trait Authorizer: Send + Sync {
    /// The headers to add to a `method` request to `uri` (none for a URL on
    /// another origin than the server's).
    fn headers<'a>(
        &'a self,
        method: &'a Method,
        uri: &'a Uri,
    ) -> BoxFuture<'a, Result<AuthHeaders, AuthError>>;

    /// The server answered `401` or `403`. `Ok(())`: new credentials are in
    /// place (a refresh, an authorization, a step-up, a DPoP nonce), retry
    /// the request. `Err`: fail it with this error.
    fn challenged<'a>(
        &'a self,
        answer: Challenged<'a>,
        round: &'a mut AuthRound,
    ) -> BoxFuture<'a, Result<(), AuthError>>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::AUTHORIZATION;

    #[test]
    fn headers_are_sensitive_and_replace_what_the_request_had() {
        let mut h = AuthHeaders::new(7);
        assert!(h.is_empty());
        h.push(AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        assert!(!h.is_empty());
        assert_eq!(h.generation(), 7);
        let mut map = HeaderMap::new();
        map.insert(AUTHORIZATION, HeaderValue::from_static("Basic old"));
        h.apply(&mut map);
        assert_eq!(map.get_all(AUTHORIZATION).iter().count(), 1);
        assert_eq!(map[AUTHORIZATION], "Bearer t");
        assert!(map[AUTHORIZATION].is_sensitive());
        let none = AuthHeaders::none();
        assert!(none.is_empty());
        assert_eq!(none.generation(), 0);
    }

    #[test]
    fn a_round_counts_every_kind_of_retry() {
        let mut round = AuthRound::default();
        assert_eq!(round.retries(), 0);
        round.authorizations = 2;
        assert_eq!(round.retries(), 2);
        round.refreshed = true;
        assert_eq!(round.retries(), 3);
        round.free_retries = 4;
        assert_eq!(round.retries(), 7);
    }
}
