//! The rules of sending one request (`src/request.rs`), over real loopback
//! HTTP, held here because mutation testing (`cargo xtask mutants
//! transport-http`) found them unguarded: how often a challenged request is
//! sent again for an authorizer that keeps asking for it.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use http::{Method, Uri};
use mcpwire_http::auth::{Auth, AuthError, AuthHeaders, AuthRound, Authorizer, Challenged};
use mcpwire_http::{HttpClient, HttpTransport};
use mcpwire_transport::{Transport, TransportError, TransportEvent};
use support::*;

/// A caller's authorizer that answers every challenge "send it again", as
/// a buggy or hostile one may: it cannot touch the [`AuthRound`] (its
/// counts are the crate's own), so only the transport can bound it.
#[derive(Default)]
struct AlwaysAgain {
    challenged: AtomicUsize,
}

impl Authorizer for AlwaysAgain {
    fn headers<'a>(
        &'a self,
        _method: &'a Method,
        _uri: &'a Uri,
    ) -> BoxFuture<'a, Result<AuthHeaders, AuthError>> {
        Box::pin(async { Ok(AuthHeaders::none()) })
    }

    fn challenged<'a>(
        &'a self,
        _answer: Challenged<'a>,
        _round: &'a mut AuthRound,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        self.challenged.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn a_request_challenged_again_and_again_is_sent_at_most_eight_more_times() {
    let server = Server::start(|_| async move {
        Reply::new(401).header("www-authenticate", r#"Bearer error="invalid_token""#)
    })
    .await;
    let authorizer = Arc::new(AlwaysAgain::default());
    let client = HttpClient::new(quick_config().auth(Auth::Custom(authorizer.clone()))).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Unauthorized(inner),
            ..
        } => {
            let e = inner.downcast_ref::<mcpwire_http::Error>().unwrap();
            assert_eq!(e.authorization().unwrap().status, 401, "{e}");
        }
        other => panic!("expected an undelivered request, got {other:?}"),
    }
    // The first request and eight more; each 401 was shown to the
    // authorizer, the last one too (its "again" is then refused).
    assert_eq!(server.seen().len(), 9);
    assert_eq!(authorizer.challenged.load(Ordering::SeqCst), 9);
}
