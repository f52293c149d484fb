//! Authorization through the transport, over real loopback HTTP: the
//! authorizer's headers on every request, a challenge handled and the
//! request sent again, a refusal reported with the server's challenge and
//! the authorizer's reason, and the client as the authorizer's HTTP stack
//! (without the headers configured for the MCP server).

mod support;

use mcpwire_http::auth::{Auth, AuthError, FollowLocation, OAuthConfig};
use mcpwire_http::{HttpClient, HttpTransport};
use mcpwire_transport::{Transport, TransportError, TransportEvent, TransportExt};
use serde_json::json;
use support::*;

fn base(seen: &Seen) -> String {
    format!("http://{}", seen.header("host").unwrap_or_default())
}

/// One loopback server playing the MCP server and its authorization server.
fn oauth_server(seen: Seen) -> Reply {
    let base = base(&seen);
    let path = seen.path.split('?').next().unwrap_or_default().to_owned();
    match (seen.method.as_str(), path.as_str()) {
        ("POST", "/mcp") => match seen.header("authorization") {
            Some("Bearer tok-1") => match seen.rpc_method().as_deref() {
                Some("initialize") => Reply::json(&init_result(0)),
                _ => Reply::new(202),
            },
            _ => Reply::new(401).header(
                "www-authenticate",
                &format!(r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp", scope="mcp""#),
            ),
        },
        ("GET", "/.well-known/oauth-protected-resource/mcp") => Reply::json(
            &json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}).to_string(),
        ),
        ("GET", "/.well-known/oauth-authorization-server") => Reply::json(
            &json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": true,
            })
            .to_string(),
        ),
        ("POST", "/register") => Reply::new(201)
            .header("content-type", "application/json")
            .body(&json!({"client_id": "c-1", "token_endpoint_auth_method": "none"}).to_string()),
        ("GET", "/authorize") => {
            let q: std::collections::HashMap<String, String> =
                url::form_urlencoded::parse(seen.path.split_once('?').unwrap().1.as_bytes()).into_owned().collect();
            let mut back = url::Url::parse(&q["redirect_uri"]).unwrap();
            back.query_pairs_mut()
                .append_pair("code", "code-1")
                .append_pair("state", &q["state"])
                .append_pair("iss", &base);
            Reply::new(302).header("location", back.as_str())
        }
        ("POST", "/token") => Reply::json(
            &json!({"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600}).to_string(),
        ),
        _ => Reply::new(404),
    }
}

#[tokio::test]
async fn an_oauth_server_is_reached_with_the_client_as_the_authorizers_http_stack() {
    let server = Server::start(|seen| async move { oauth_server(seen) }).await;
    // The redirect step fetches the authorization URL itself (the fake
    // approves at once), through a client of its own.
    let plain = HttpClient::new(quick_config().auth(Auth::None)).unwrap();
    let step = FollowLocation::new(plain.fetcher(), "http://127.0.0.1:9/callback");
    let config = quick_config()
        .header(
            http::HeaderName::from_static("x-api-key"),
            http::HeaderValue::from_static("for-the-mcp-server-only"),
        )
        .auth(Auth::oauth(OAuthConfig::new().redirect(step)));
    let client = HttpClient::new(config).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(INIT)).await.unwrap();
    let answer = next_frame(&mut t).await;
    assert_eq!(answer["id"], 0);

    let seen = server.seen();
    let route: Vec<String> = seen
        .iter()
        .map(|s| format!("{} {}", s.method, s.path.split('?').next().unwrap()))
        .collect();
    assert_eq!(
        route,
        [
            "POST /mcp",
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-authorization-server",
            "POST /register",
            "GET /authorize",
            "POST /token",
            "POST /mcp",
        ]
    );
    for s in &seen {
        let to_mcp = s.path == "/mcp";
        // Headers configured for the MCP server go only there.
        assert_eq!(
            s.header("x-api-key").is_some(),
            to_mcp,
            "{} {}",
            s.method,
            s.path
        );
        if !to_mcp {
            assert!(
                s.header("authorization").is_none(),
                "a token went to {}",
                s.path
            );
        }
    }
    assert_eq!(
        seen.last().unwrap().header("authorization"),
        Some("Bearer tok-1")
    );
    // The same client keeps the authorization for the URL: a new transport
    // (a reconnection) sends the token at once.
    let before = server.seen().len();
    let mut again = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    again.sender().send(frame(INIT)).await.unwrap();
    assert_eq!(next_frame(&mut again).await["id"], 0);
    assert_eq!(server.seen().len(), before + 1);
    t.close().await;
    again.close().await;
}

#[tokio::test]
async fn a_bearer_token_goes_with_every_request_and_a_refusal_says_why() {
    let server = Server::start(|seen| async move {
        match (seen.header("authorization"), seen.rpc_method().as_deref()) {
            (Some("Bearer good"), Some("initialize")) => {
                Reply::json(&init_result(0)).header("mcp-session-id", "s-1")
            }
            (Some("Bearer good"), _) => Reply::new(202),
            _ => Reply::new(401).header("www-authenticate", r#"Bearer error="invalid_token""#),
        }
    })
    .await;
    let client = HttpClient::new(quick_config().auth(Auth::bearer("good").unwrap())).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(INIT)).await.unwrap();
    next_frame(&mut t).await;
    t.sender().send(frame(INITIALIZED)).await.unwrap();
    t.close().await;
    let seen = server.seen();
    assert!(seen.iter().any(|s| s.method == "DELETE"));
    assert!(
        seen.iter()
            .all(|s| s.header("authorization") == Some("Bearer good")),
        "{seen:?}"
    );

    // A token the server refuses: the request fails with the challenge and
    // the authorizer's reason, asked once.
    let server = Server::start(|_| async move {
        Reply::new(401).header(
            "www-authenticate",
            r#"Bearer error="invalid_token", scope="files:read""#,
        )
    })
    .await;
    let client = HttpClient::new(quick_config().auth(Auth::bearer("bad").unwrap())).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    let inner = match next(&mut t).await {
        TransportEvent::Undelivered {
            error: TransportError::Unauthorized(inner),
            ..
        } => inner,
        other => panic!("expected an undelivered request, got {other:?}"),
    };
    let e = inner.downcast_ref::<mcpwire_http::Error>().unwrap();
    assert_eq!(e.authorization().unwrap().status, 401);
    let source = std::error::Error::source(e)
        .unwrap()
        .downcast_ref::<AuthError>()
        .unwrap();
    assert!(
        matches!(source, AuthError::Unauthorized { status: 401, .. }),
        "{source:?}"
    );
    assert!(
        e.to_string().contains("requires authorization") && e.to_string().contains("files:read"),
        "{e}"
    );
    assert_eq!(server.seen().len(), 1);
}

/// A GET through the client as an authorizer's HTTP stack.
async fn fetch_as_authorizer(
    client: &HttpClient,
    url: &str,
) -> Result<http::Response<bytes::Bytes>, mcpwire_http::auth::FetchError> {
    let req = http::Request::get(url).body(bytes::Bytes::new()).unwrap();
    client.fetcher().fetch(req).await
}

#[tokio::test]
async fn an_authorizers_fetch_refuses_a_body_over_a_mebibyte() {
    // A hostile authorization server's 2 MiB "metadata" (or token response).
    let server = Server::start(|seen| async move {
        let size = if seen.path == "/big" {
            2 << 20
        } else {
            512 << 10
        };
        let mut doc = vec![b' '; size];
        doc[0] = b'{';
        doc[size - 1] = b'}';
        Reply::new(200)
            .header("content-type", "application/json")
            .data(bytes::Bytes::from(doc))
    })
    .await;
    let client = client();
    let err = fetch_as_authorizer(&client, &server.url("/big"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), mcpwire_http::auth::FetchErrorKind::Other);
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(cause.contains("1048576"), "{cause}");
    // A large but plausible document still arrives whole.
    let ok = fetch_as_authorizer(&client, &server.url("/half"))
        .await
        .unwrap();
    assert_eq!(ok.body().len(), 512 << 10);
}

#[tokio::test]
async fn an_authorizers_fetch_of_a_slow_drip_body_ends_at_the_request_timeout() {
    // One byte every 100 ms, for far longer than the timeout.
    let server = Server::start(|_| async move {
        let mut reply = Reply::new(200).header("content-type", "application/json");
        for _ in 0..600 {
            reply = reply.body(" ").delay(100);
        }
        reply
    })
    .await;
    let client =
        HttpClient::new(quick_config().request_timeout(std::time::Duration::from_secs(1))).unwrap();
    let started = std::time::Instant::now();
    let err = fetch_as_authorizer(&client, &server.url("/drip"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), mcpwire_http::auth::FetchErrorKind::Timeout);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[tokio::test]
async fn a_name_learned_from_a_server_that_resolves_to_loopback_is_not_connected_to() {
    let server = Server::start(|_| async move { Reply::json("{}") }).await;
    let by_name = server.url("/prm").replace("127.0.0.1", "localhost");
    let client = client();
    // Marked as learned from a server: resolved once, refused, never
    // connected to.
    let mut req = http::Request::get(&by_name)
        .body(bytes::Bytes::new())
        .unwrap();
    req.extensions_mut()
        .insert(mcpwire_http::auth::PublicAddressesOnly);
    let err = client.fetcher().fetch(req).await.unwrap_err();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    let mut blocked = None;
    while let Some(e) = cause {
        if let Some(b) = e.downcast_ref::<mcpwire_http::auth::BlockedAddress>() {
            blocked = Some(b.clone());
        }
        cause = e.source();
    }
    let blocked = blocked.unwrap_or_else(|| panic!("not the address policy: {err:?}"));
    assert!(blocked.address.is_loopback(), "{blocked:?}");
    assert_eq!(blocked.host, "localhost");
    assert!(server.seen().is_empty(), "the server was reached");
    // The same URL without the mark (a URL the user gave) is fetched.
    let ok = fetch_as_authorizer(&client, &by_name).await.unwrap();
    assert_eq!(ok.status(), 200);
    assert_eq!(server.seen().len(), 1);
}
