//! The HTTP client as an authorizer's HTTP stack (`src/fetch.rs`), over
//! real loopback HTTP, held here because mutation testing (`cargo xtask
//! mutants transport-http`) found parts of it unguarded: what kind of
//! failure an authorizer is told about, where the size bound of an answer
//! lies, the headers an authorizer sets, and the client used directly or
//! after it was dropped.

mod support;

use bytes::Bytes;
use mcpwire_http::HttpClient;
use mcpwire_http::auth::{FetchErrorKind, HttpFetch};
use support::*;

/// The size bound of an authorizer's answer: one mebibyte.
const MAX_BODY: usize = 1 << 20;

fn get(url: &str) -> http::Request<Bytes> {
    http::Request::get(url).body(Bytes::new()).unwrap()
}

/// A server answering with a JSON document of `size` bytes.
async fn document_server(size: usize) -> Server {
    Server::start(move |_| async move {
        let mut doc = vec![b' '; size];
        doc[0] = b'{';
        doc[size - 1] = b'}';
        Reply::new(200)
            .header("content-type", "application/json")
            .data(Bytes::from(doc))
    })
    .await
}

#[tokio::test]
async fn an_answer_of_exactly_the_bound_arrives_whole_and_one_byte_more_is_refused() {
    let at_bound = document_server(MAX_BODY).await;
    let client = client();
    let ok = client.fetcher().fetch(get(&at_bound.url("/doc"))).await;
    let ok = ok.unwrap_or_else(|e| panic!("an answer of exactly 1 MiB was refused: {e:?}"));
    assert_eq!(ok.body().len(), MAX_BODY);

    let over = document_server(MAX_BODY + 1).await;
    let err = client
        .fetcher()
        .fetch(get(&over.url("/doc")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), FetchErrorKind::Other);
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(cause.contains("1048576"), "{cause}");
}

#[tokio::test]
async fn a_refused_connection_is_reported_as_a_connect_failure() {
    // A port nothing listens on: bound, then closed.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client = client();
    let err = client
        .fetcher()
        .fetch(get(&format!("http://127.0.0.1:{port}/token")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), FetchErrorKind::Connect, "{err:?}");
    assert!(std::error::Error::source(&err).is_some(), "{err:?}");
}

#[tokio::test]
async fn the_client_itself_fetches_with_the_authorizers_headers_and_returns_the_answer() {
    let server = Server::start(|seen| async move {
        let accept = seen.header("accept").unwrap_or_default().to_owned();
        Reply::new(201)
            .header("content-type", "application/json")
            .header("x-seen-accept", &accept)
            .body(r#"{"token":"t"}"#)
    })
    .await;
    let client = client();
    let req = http::Request::post(server.url("/token"))
        .header("accept", "application/json")
        .body(Bytes::from_static(b"grant_type=x"))
        .unwrap();
    // The client as an `HttpFetch` of its own, not through `fetcher()`.
    let resp = HttpFetch::fetch(&client, req).await.unwrap();
    assert_eq!(resp.status(), 201);
    assert_eq!(resp.body().as_ref(), br#"{"token":"t"}"#);
    assert_eq!(resp.headers()["x-seen-accept"], "application/json");
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "POST");
}

#[tokio::test]
async fn the_fetcher_of_a_dropped_client_fails_without_sending() {
    let server = document_server(2).await;
    let client: HttpClient = client();
    let fetcher = client.fetcher();
    drop(client);
    let err = fetcher.fetch(get(&server.url("/doc"))).await.unwrap_err();
    assert_eq!(err.kind(), FetchErrorKind::Other);
    let cause = std::error::Error::source(&err).map(ToString::to_string);
    assert!(
        cause.as_deref().is_some_and(|c| c.contains("dropped")),
        "{err:?}"
    );
    assert!(server.seen().is_empty());
}
