//! Streamable HTTP with JSON answers, sessions, statuses, TLS and HTTP/2,
//! against the scripted test server.

mod support;

use std::time::Duration;

use mcpwire_http::{Http2, HttpClient, HttpMode, HttpTransport, RetryPolicy};
use mcpwire_test_support::http::{TestCert, TestTls};
use mcpwire_transport::{CloseReason, Transport, TransportError, TransportEvent, TransportExt};
use support::*;

/// A server that answers initialize with a session id, 202s notifications,
/// answers tools/list, and has no GET stream.
async fn session_server() -> Server {
    Server::start(|seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("initialize")) => {
                Reply::json(&init_result(0)).header("mcp-session-id", "sess-1")
            }
            ("POST", Some("notifications/initialized")) => Reply::new(202),
            ("POST", Some("tools/list")) => Reply::json(&result(1, r#"{"tools":[]}"#)),
            ("GET", _) => Reply::new(405),
            ("DELETE", _) => Reply::new(200),
            _ => Reply::new(500).body("unexpected"),
        }
    })
    .await
}

#[tokio::test]
async fn json_answers_carry_the_session_id_and_protocol_version_afterwards() {
    let server = session_server().await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    let init = next_frame(&mut t).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(t.session_id().as_deref(), Some("sess-1"));
    assert_eq!(t.protocol_version().as_deref(), Some("2025-06-18"));
    tx.send(frame(INITIALIZED)).await.unwrap();
    tx.send(frame(LIST)).await.unwrap();
    let list = next_frame(&mut t).await;
    assert_eq!(list["id"], 1);
    // The GET stream is tried after `initialized`; its 405 is quiet.
    let seen = wait_seen(&server, |s| s.iter().any(|r| r.method == "GET")).await;
    let posts: Vec<_> = seen.iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 3);
    for post in &posts {
        assert_eq!(
            post.header("accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(post.header("content-type"), Some("application/json"));
        assert!(post.header("user-agent").unwrap().starts_with("mcpwire/"));
    }
    assert_eq!(posts[0].header("mcp-session-id"), None);
    assert_eq!(posts[0].header("mcp-protocol-version"), None);
    for later in &posts[1..] {
        assert_eq!(later.header("mcp-session-id"), Some("sess-1"));
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-06-18"));
    }
    // `initialized` reached the server before the request queued after it.
    assert_eq!(
        posts[1].rpc_method().as_deref(),
        Some("notifications/initialized")
    );
    let get = seen.iter().find(|r| r.method == "GET").unwrap();
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(t.info().kind, "streamable-http");

    t.close().await;
    match next(&mut t).await {
        TransportEvent::Closed(CloseReason::Local) => {}
        other => panic!("expected Closed(Local), got {other:?}"),
    }
    assert!(t.next_event().await.is_none());
    let seen = server.seen();
    let delete = seen
        .iter()
        .find(|r| r.method == "DELETE")
        .expect("DELETE on close");
    assert_eq!(delete.header("mcp-session-id"), Some("sess-1"));
}

#[tokio::test]
async fn a_non_json_500_is_a_typed_status_with_the_body_start() {
    let server = Server::start(|_| async {
        Reply::new(500)
            .header("content-type", "text/html")
            .header("www-authenticate", "Bearer realm=\"x\"")
            .body("<html>oops</html>")
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            frame: f,
            error: TransportError::Http(status),
        } => {
            assert_eq!(f, LIST);
            assert_eq!(status.status, 500);
            assert_eq!(status.body, "<html>oops</html>");
            assert_eq!(
                status.www_authenticate.as_deref(),
                Some("Bearer realm=\"x\"")
            );
        }
        other => panic!("expected an undelivered 500, got {other:?}"),
    }
}

#[tokio::test]
async fn a_401_or_403_is_an_authorization_error_with_every_challenge() {
    for status in [401u16, 403] {
        let server = Server::start(move |_| async move {
            Reply::new(status)
                .header("www-authenticate", "Basic realm=\"old\"")
                .header(
                    "www-authenticate",
                    r#"Bearer resource_metadata="https://as.example/.well-known/oauth-protected-resource", scope="files:read", error="invalid_token""#,
                )
                .body("nope")
        })
        .await;
        // No authorizer: the challenge is the error (with one, see auth.rs).
        let plain = HttpClient::new(quick_config().auth(mcpwire_http::auth::Auth::None)).unwrap();
        let mut t = HttpTransport::streamable(&plain, &server.url("/mcp")).unwrap();
        t.sender().send(frame(LIST)).await.unwrap();
        let inner = match next(&mut t).await {
            TransportEvent::Undelivered {
                frame: f,
                error: TransportError::Unauthorized(inner),
            } => {
                assert_eq!(f, LIST);
                inner
            }
            other => panic!("expected an undelivered request, got {other:?}"),
        };
        let e = inner
            .downcast_ref::<mcpwire_http::Error>()
            .expect("the HTTP error");
        let auth = e.authorization().expect("an authorization error");
        assert_eq!(auth.status, status);
        assert_eq!(auth.body, "nope");
        let schemes: Vec<&str> = auth.challenges.iter().map(|c| c.scheme()).collect();
        assert_eq!(schemes, ["Basic", "Bearer"]);
        let bearer = auth.bearer().expect("a Bearer challenge");
        assert_eq!(
            bearer.resource_metadata(),
            Some("https://as.example/.well-known/oauth-protected-resource")
        );
        assert_eq!(bearer.scope(), Some("files:read"));
        assert_eq!(bearer.error(), Some("invalid_token"));
        // The message says what the server wants; the transport error shows
        // the HTTP error's message.
        let text = e.to_string();
        assert!(text.contains("requires authorization"), "{text}");
        assert!(
            text.contains(&status.to_string()) && text.contains("files:read"),
            "{text}"
        );
        assert_eq!(inner.to_string(), text);
        // Credentials do not come by waiting: it was asked once.
        assert_eq!(server.seen().len(), 1);
    }
}

#[tokio::test]
async fn a_404_with_a_session_expires_it_and_the_next_request_goes_without() {
    for (status, body) in [(404, "gone"), (400, "Bad Request: Session not found")] {
        let server = Server::start(move |seen| async move {
            match (seen.rpc_method().as_deref(), seen.header("mcp-session-id")) {
                (Some("initialize"), _) => {
                    Reply::json(&init_result(0)).header("mcp-session-id", "old")
                }
                (Some("tools/list"), Some("old")) => Reply::new(status).body(body),
                (Some("tools/list"), None) => Reply::new(400).body("Bad Request: missing session"),
                _ => Reply::new(202),
            }
        })
        .await;
        let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
        let tx = t.sender();
        tx.send(frame(INIT)).await.unwrap();
        next_frame(&mut t).await;
        tx.send(frame(LIST)).await.unwrap();
        match next(&mut t).await {
            TransportEvent::Undelivered {
                frame: f,
                error: TransportError::SessionExpired,
            } => assert_eq!(f, LIST),
            other => panic!("expected SessionExpired for {status}, got {other:?}"),
        }
        assert_eq!(t.session_id(), None);
        // Without a session, a 400 is only a 400: not an expiry.
        tx.send(frame(LIST)).await.unwrap();
        match next(&mut t).await {
            TransportEvent::Undelivered {
                error: TransportError::Http(s),
                ..
            } => assert_eq!(s.status, 400),
            other => panic!("expected a plain 400, got {other:?}"),
        }
        let seen = server.seen();
        assert_eq!(seen.last().unwrap().header("mcp-session-id"), None);
    }
}

#[tokio::test]
async fn get_stream_refusals_degrade_quietly() {
    for status in [404u16, 405, 406] {
        let server = Server::start(move |seen| async move {
            match (seen.method.as_str(), seen.rpc_method().as_deref()) {
                ("GET", _) => Reply::new(status),
                (_, Some("initialize")) => {
                    Reply::json(&init_result(0)).header("mcp-session-id", "s")
                }
                (_, Some("tools/list")) => Reply::json(&result(1, "{}")),
                _ => Reply::new(202),
            }
        })
        .await;
        let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
        let tx = t.sender();
        tx.send(frame(INIT)).await.unwrap();
        next_frame(&mut t).await;
        tx.send(frame(INITIALIZED)).await.unwrap();
        wait_seen(&server, |s| s.iter().any(|r| r.method == "GET")).await;
        // Request traffic is untouched, and no error event precedes the frame.
        tx.send(frame(LIST)).await.unwrap();
        assert_eq!(next_frame(&mut t).await["id"], 1);
        tokio::time::sleep(Duration::from_millis(200)).await;
        let gets = server.seen().iter().filter(|r| r.method == "GET").count();
        assert_eq!(gets, 1, "a {status} GET must not be retried");
    }
}

#[tokio::test]
async fn busy_503_is_retried_after_retry_after() {
    let first = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let server = Server::start(move |_| {
        let first = first.clone();
        async move {
            if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
                Reply::new(503).header("retry-after", "1").body("busy")
            } else {
                Reply::json(&result(1, "{}"))
            }
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen[1].at - seen[0].at >= Duration::from_millis(990));
}

#[tokio::test]
async fn a_retry_after_past_the_budget_gives_the_frame_back_with_the_status() {
    let server = Server::start(|_| async { Reply::new(429).header("retry-after", "3600") }).await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Http(s),
            ..
        } => {
            assert_eq!(s.status, 429);
            assert_eq!(s.retry_after, Some(Duration::from_secs(3600)));
        }
        other => panic!("expected an undelivered 429, got {other:?}"),
    }
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_given_back() {
    // Bind then drop a listener: the port is (almost certainly) closed.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let config = quick_config().retry(
        RetryPolicy::default()
            .initial_delay(Duration::from_millis(10))
            .max_attempts(2),
    );
    let client = HttpClient::new(config).unwrap();
    let mut t =
        HttpTransport::streamable(&client, &format!("http://127.0.0.1:{port}/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered { frame: f, error } => {
            assert_eq!(f, LIST);
            // Nothing reached the server, on either attempt.
            assert!(matches!(error, TransportError::Unreachable(_)), "{error:?}");
        }
        other => panic!("expected undelivered, got {other:?}"),
    }
}

#[tokio::test]
async fn requests_reuse_one_keep_alive_connection() {
    let server = Server::start(|seen| async move {
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        Reply::json(&result(v["id"].as_u64().unwrap(), "{}"))
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    for i in 0..10 {
        let req = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
        t.sender().send(frame(&req)).await.unwrap();
        assert_eq!(next_frame(&mut t).await["id"], i);
    }
    // The pool may open a second connection if a request races the return
    // of the first one; one connection per request would be ten.
    assert!(
        server.connections() <= 3,
        "{} connections",
        server.connections()
    );
}

#[tokio::test]
async fn an_idle_connection_is_closed_after_the_pool_idle_timeout_and_the_next_request_reconnects()
{
    let echo = |seen: Seen| async move {
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        Reply::json(&result(v["id"].as_u64().unwrap(), "{}"))
    };
    let (quiet, kept) = (Server::start(echo).await, Server::start(echo).await);
    let short = HttpClient::new(quick_config().pool_idle_timeout(Duration::from_millis(100)));
    let mut t = HttpTransport::streamable(&short.unwrap(), &quiet.url("/mcp")).unwrap();
    // The default keeps its idle connection (90 s): the control.
    let mut u = HttpTransport::streamable(&client(), &kept.url("/mcp")).unwrap();
    for (t, id) in [(&mut t, 1), (&mut u, 1)] {
        let req = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        t.sender().send(frame(&req)).await.unwrap();
        assert_eq!(next_frame(t).await["id"], id);
    }
    assert_eq!(quiet.connections(), 1);
    // Past the quiet period the client closes its idle connection, and the
    // server sees it go; the default client's stays open.
    tokio::time::timeout(WAIT, async {
        while quiet.open_connections() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the idle connection was closed");
    assert_eq!(kept.open_connections(), 1, "the default keeps it");
    // The next request connects again and is answered.
    t.sender()
        .send(frame(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#))
        .await
        .unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 2);
    assert_eq!(quiet.connections(), 2, "a new connection");
}

#[tokio::test]
async fn tls_with_a_test_ca_negotiates_http2() {
    let server = Server::start_tls(|_| async { Reply::json(&result(1, "{}")) }).await;
    let config = quick_config()
        .webpki_roots(false)
        .add_root_certificate(server.ca_der.clone().unwrap());
    let client = HttpClient::new(config).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    assert_eq!(server.seen()[0].version, http::Version::HTTP_2);

    // Without the CA, the handshake fails and the frame comes back.
    let mut t = HttpTransport::streamable(&support::client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Undelivered { .. }
    ));
}

#[tokio::test]
async fn http2_prior_knowledge_over_cleartext() {
    let server = Server::start(|_| async { Reply::json(&result(1, "{}")) }).await;
    let client = HttpClient::new(quick_config().http2(Http2::PriorKnowledge)).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    assert_eq!(server.seen()[0].version, http::Version::HTTP_2);
    assert_eq!(t.mode(), Some(HttpMode::StreamableHttp));
}

#[tokio::test]
async fn close_tolerates_a_405_delete_and_reports_closed_once() {
    let server = Server::start(|seen| async move {
        match seen.method.as_str() {
            "DELETE" => Reply::new(405),
            _ => Reply::json(&init_result(0)).header("mcp-session-id", "s9"),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    tokio::time::timeout(WAIT, t.close()).await.unwrap();
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Closed(CloseReason::Local)
    ));
    assert!(t.next_event().await.is_none());
    assert!(t.sender().is_closed());
    assert!(server.seen().iter().any(|r| r.method == "DELETE"));
}

#[tokio::test]
async fn in_flight_requests_are_bounded_and_senders_then_see_busy() {
    let server = Server::start(|_| async {
        Reply::new(200)
            .header("content-type", "application/json")
            .delay(60_000)
    })
    .await;
    let config = quick_config().max_in_flight(1).queue_capacity(1);
    let client = HttpClient::new(config).unwrap();
    let t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    let tx = t.sender();
    tx.send(frame(LIST)).await.unwrap();
    wait_seen(&server, |s| s.len() == 1).await;
    // The driver holds the second frame waiting for a permit; the third
    // fills the queue; the fourth is refused.
    tx.send(frame(LIST)).await.unwrap();
    tx.send(frame(LIST)).await.unwrap();
    assert!(matches!(
        tx.try_send(frame(LIST)),
        Err(mcpwire_transport::SendError::Busy(_))
    ));
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn an_empty_200_accepts_a_notification_but_a_text_answer_to_a_request_is_refused() {
    let server = Server::start(|seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("GET", _) => Reply::new(405),
            (_, Some("notifications/initialized")) => Reply::new(200),
            _ => Reply::new(200)
                .header("content-type", "text/plain")
                .body("OK"),
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(INITIALIZED)).await.unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered { frame: f, error } => {
            assert_eq!(f, LIST);
            assert!(
                format!("{error:?}").contains("UnexpectedContentType"),
                "{error:?}"
            );
        }
        other => panic!("expected the request back, got {other:?}"),
    }
}

/// Needs the platform's certificate store: without one the handshake
/// fails whatever the roots, and the test would hold nothing, so a missing
/// store is a failure saying what to install, not a silent pass.
#[tokio::test]
async fn platform_roots_load_and_do_not_trust_a_private_ca() {
    let bundles = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
    ];
    let has_system_store = std::env::var_os("SSL_CERT_FILE")
        .is_some_and(|p| std::path::Path::new(&p).exists())
        || bundles.iter().any(|p| std::path::Path::new(p).exists());
    assert!(
        has_system_store,
        "no system certificate bundle ({}, or SSL_CERT_FILE): install the \
         ca-certificates package to run this test",
        bundles.join(", ")
    );
    let server = Server::start_tls(|_| async { Reply::json(&result(1, "{}")) }).await;
    let config = quick_config().webpki_roots(false).native_roots(true);
    let client = HttpClient::new(config).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert!(matches!(
        next(&mut t).await,
        TransportEvent::Undelivered { .. }
    ));
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn custom_headers_go_on_every_request() {
    let server = Server::start(|seen| async move {
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("initialize")) => {
                Reply::json(&init_result(0)).header("mcp-session-id", "h")
            }
            ("POST", _) => Reply::new(202),
            ("GET", _) => Reply::new(405),
            _ => Reply::new(204),
        }
    })
    .await;
    let config = quick_config().header(
        http::header::AUTHORIZATION,
        http::HeaderValue::from_static("Bearer t0ken"),
    );
    let mut t =
        HttpTransport::streamable(&HttpClient::new(config).unwrap(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    t.sender().send(frame(INITIALIZED)).await.unwrap();
    wait_seen(&server, |s| s.iter().any(|r| r.method == "GET")).await;
    t.close().await;
    let seen = server.seen();
    let methods: Vec<_> = seen.iter().map(|r| r.method.as_str()).collect();
    assert!(methods.contains(&"DELETE"), "{methods:?}");
    for r in &seen {
        assert_eq!(
            r.header("authorization"),
            Some("Bearer t0ken"),
            "{} {}",
            r.method,
            r.path
        );
    }
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    // Accepts TCP, then says nothing: a TLS handshake that never completes,
    // or an HTTP request that never gets headers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let _holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    // Each timeout far shorter than the other, so that which one fires
    // does not depend on how loaded the machine is.
    let config = quick_config()
        .connect_timeout(Duration::from_millis(300))
        .request_timeout(Duration::from_secs(15))
        .retry(RetryPolicy::never());
    let client = HttpClient::new(config).unwrap();

    let mut t =
        HttpTransport::streamable(&client, &format!("https://127.0.0.1:{port}/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered { error, .. } => {
            // The handshake never ended: no connection was made.
            assert!(matches!(error, TransportError::Unreachable(_)), "{error:?}");
        }
        other => panic!("expected a connect failure, got {other:?}"),
    }

    let config = quick_config()
        .connect_timeout(Duration::from_secs(15))
        .request_timeout(Duration::from_millis(300))
        .retry(RetryPolicy::never());
    let client = HttpClient::new(config).unwrap();
    let mut t =
        HttpTransport::streamable(&client, &format!("http://127.0.0.1:{port}/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Timeout,
            ..
        } => {}
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn a_json_answer_in_several_chunks_is_one_frame_and_an_oversized_one_is_refused() {
    let answer = result(1, r#"{"tools":[{"name":"a-tool-with-a-longish-name"}]}"#);
    let (head, tail) = answer.split_at(answer.len() / 2);
    let (head, tail) = (head.to_owned(), tail.to_owned());
    let server = Server::start(move |_| {
        let (head, tail) = (head.clone(), tail.clone());
        async move {
            Reply::json(&head)
                .delay(30)
                .body(&tail[..4])
                .delay(30)
                .body(&tail[4..])
        }
    })
    .await;
    let mut t = HttpTransport::streamable(&client(), &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    let got = next_frame(&mut t).await;
    assert_eq!(
        got,
        serde_json::from_str::<serde_json::Value>(&answer).unwrap()
    );

    // The same answer against a limit below its length: undelivered, typed.
    let small = HttpClient::new(quick_config().max_frame_len(answer.len() - 1)).unwrap();
    let mut t = HttpTransport::streamable(&small, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    match next(&mut t).await {
        TransportEvent::Undelivered {
            frame: f,
            error: TransportError::Other(e),
        } => {
            assert_eq!(f, LIST);
            assert!(e.to_string().contains("limit"), "{e}");
        }
        other => panic!("expected an undelivered oversized answer, got {other:?}"),
    }
}

#[tokio::test]
async fn clients_with_their_own_headers_share_one_pool() {
    let server = Server::start(|seen| async move {
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        Reply::json(&result(v["id"].as_u64().unwrap(), "{}"))
    })
    .await;
    let base = HttpClient::new(quick_config().header(
        http::HeaderName::from_static("x-region"),
        http::HeaderValue::from_static("eu"),
    ))
    .unwrap();
    let key = |v: &'static str| {
        (
            http::HeaderName::from_static("x-api-key"),
            http::HeaderValue::from_static(v),
        )
    };
    let one = base.with_headers([key("one")]);
    let two = base.with_headers([key("two")]);
    for (i, client) in [&one, &two, &one, &two].into_iter().enumerate() {
        let mut t = HttpTransport::streamable(client, &server.url("/mcp")).unwrap();
        let req = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
        t.sender().send(frame(&req)).await.unwrap();
        assert_eq!(next_frame(&mut t).await["id"], i);
    }
    let keys: Vec<_> = server
        .seen()
        .iter()
        .map(|s| {
            (
                s.header("x-api-key").map(str::to_owned),
                s.header("x-region").map(str::to_owned),
            )
        })
        .collect();
    let eu = Some("eu".to_owned());
    assert_eq!(
        keys,
        [
            (Some("one".to_owned()), eu.clone()),
            (Some("two".to_owned()), eu.clone()),
            (Some("one".to_owned()), eu.clone()),
            (Some("two".to_owned()), eu),
        ]
    );
    // One pool: the connection is reused across the clients (a race may
    // open a second one; four clients of their own would open four).
    assert!(
        server.connections() <= 2,
        "{} connections",
        server.connections()
    );
}

/// A certificate the client rejects (unknown CA, expired) will be rejected
/// again: it is reported after one attempt, not retried like a refused
/// connection (with the default policy that would take half a minute).
#[tokio::test]
async fn a_rejected_certificate_is_not_retried() {
    for cert in [TestCert::Valid, TestCert::Expired] {
        let tls = TestTls::new(cert);
        let ca = tls.ca_der.clone();
        let server = Server::start_with_tls(tls, |_| async { Reply::json(&result(1, "{}")) }).await;
        // The expired one is signed by a CA the client trusts; the valid
        // one by a CA it does not know.
        let mut config = quick_config().webpki_roots(false);
        if cert == TestCert::Expired {
            config = config.add_root_certificate(ca);
        }
        let client = HttpClient::new(config).unwrap();
        let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
        t.sender().send(frame(LIST)).await.unwrap();
        match next(&mut t).await {
            TransportEvent::Undelivered { error, .. } => {
                let text = chain_text(&error);
                assert!(!text.contains("retry budget"), "{cert:?}: retried: {text}");
                assert!(text.contains("certificate"), "{cert:?}: {text}");
            }
            other => panic!("{cert:?}: expected the frame back, got {other:?}"),
        }
        assert_eq!(server.connections(), 1, "{cert:?}: one attempt");
    }
}

fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        parts.push(s.to_string());
        cur = s.source();
    }
    parts.join(": ")
}

/// Opens a session on `client` (initialize, initialized, one request) and
/// closes it.
async fn one_session(client: &HttpClient, url: &str) {
    let mut t = HttpTransport::streamable(client, url).unwrap();
    let tx = t.sender();
    tx.send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    tx.send(frame(INITIALIZED)).await.unwrap();
    tx.send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    t.close().await;
}

#[tokio::test]
async fn a_405_to_get_is_remembered_by_the_client_for_its_later_sessions() {
    for status in [405u16, 404] {
        let server = Server::start(move |seen| async move {
            match (seen.method.as_str(), seen.rpc_method().as_deref()) {
                ("GET", _) => Reply::new(status),
                (_, Some("initialize")) => Reply::json(&init_result(0)),
                (_, Some("tools/list")) => Reply::json(&result(1, "{}")),
                _ => Reply::new(202),
            }
        })
        .await;
        let url = server.url("/mcp");
        let gets = || server.seen().iter().filter(|r| r.method == "GET").count();
        let shared = client();
        one_session(&shared, &url).await;
        assert_eq!(gets(), 1, "the first session tries the GET stream");
        one_session(&shared, &url).await;
        one_session(&shared, &url).await;
        // Only 405 says "no stream at this endpoint"; a 404 is tried again.
        let expected = if status == 405 { 1 } else { 3 };
        assert_eq!(gets(), expected, "after a {status}");
        // Another client has not seen the 405: it tries once.
        one_session(&client(), &url).await;
        assert_eq!(gets(), expected + 1, "a new client, after a {status}");
    }
}
