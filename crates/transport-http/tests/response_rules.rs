//! How an error answer is read (`src/response.rs`), over real loopback
//! HTTP, held here because mutation testing (`cargo xtask mutants
//! transport-http`) found it unguarded: the start of an error page is kept
//! for the report, and reading stops once that start is in, so a server
//! that holds its error page open does not hold the caller.

mod support;

use std::time::{Duration, Instant};

use mcpwire_http::HttpTransport;
use mcpwire_transport::{HttpStatus, Transport, TransportError, TransportEvent};
use support::*;

/// How much of an error page is kept (`ERROR_BODY_LIMIT`).
const KEPT: usize = 1024;

/// The HTTP status a refused request came back with.
fn refused_status(event: TransportEvent) -> HttpStatus {
    let error = match event {
        TransportEvent::Undelivered { error, .. } => error,
        other => panic!("expected the request back, undelivered, got {other:?}"),
    };
    match error {
        TransportError::Http(status) => *status,
        TransportError::Other(e) => e
            .downcast_ref::<mcpwire_http::Error>()
            .and_then(mcpwire_http::Error::status)
            .unwrap_or_else(|| panic!("not an HTTP status: {e:?}"))
            .clone(),
        other => panic!("not an HTTP status: {other:?}"),
    }
}

#[tokio::test]
async fn an_error_page_held_open_is_reported_once_its_start_is_in() {
    // The kept start at once, then a page that goes on a minute later.
    let server = Server::start(|_| async {
        Reply::new(400)
            .header("content-type", "text/html")
            .body(&"x".repeat(KEPT))
            .delay(60_000)
            .body("the rest of the page")
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    let started = Instant::now();
    t.sender().send(frame(LIST)).await.unwrap();
    let status = refused_status(next(&mut t).await);
    let took = started.elapsed();
    assert_eq!(status.status, 400);
    assert_eq!(status.body, "x".repeat(KEPT));
    // Reading on past the kept start would wait for the page's end, or
    // for the read's own 2 s bound: the report comes well before that.
    assert!(
        took < Duration::from_millis(1500),
        "the error was reported after {took:?}"
    );
}

#[tokio::test]
async fn only_the_start_of_a_long_error_page_is_kept() {
    let server = Server::start(|_| async {
        Reply::new(400)
            .header("content-type", "text/plain")
            .body(&"y".repeat(KEPT - 4))
            .body(&"z".repeat(3 * KEPT))
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    let status = refused_status(next(&mut t).await);
    assert_eq!(status.body, format!("{}zzzz", "y".repeat(KEPT - 4)));
}
