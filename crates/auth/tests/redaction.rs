//! Secrets stay secret: a full flow (registration with a client secret,
//! authorization, refresh, a refused refresh, DPoP) is traced at the most
//! verbose level, and the trace, every `Debug` and every error message are
//! searched for the tokens, the secrets, the codes and the keys.

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use http::{Method, StatusCode};
use mcpwire_auth::{Authorizer, OAuth, OAuthConfig, Secret};
use support::*;

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn no_token_secret_code_or_key_reaches_logs_debug_or_errors() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.auth_methods = Some(vec!["client_secret_post".into()]);
        a.dpop = true;
    });
    let config = OAuthConfig::new().redirect(fake.redirect());
    let auth = OAuth::new(SERVER, config.clone(), fake.arc()).unwrap();
    let mut shown = Vec::new();
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    shown.push(format!("{auth:?}"));
    shown.push(format!("{config:?}"));
    shown.push(format!("{:?}", auth.tokens()));
    let headers = auth
        .headers(&Method::POST, &SERVER.parse().unwrap())
        .await
        .unwrap();
    shown.push(format!("{headers:?}"));

    // Failures: a refused refresh and a refused grant.
    fake.with_as(AS1, |a| a.clients.clear());
    let pre = OAuth::new(
        SERVER,
        OAuthConfig::client_credentials("svc", Secret::new("CLIENT_SECRET_VALUE-pre")),
        fake.arc(),
    )
    .unwrap();
    let err = fake.call(&pre, "c").await.unwrap_err();
    shown.push(format!("{err} {err:?}"));
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        shown.push(format!("{s} {s:?}"));
        source = s.source();
    }
    shown.push(format!("{pre:?}"));

    let log = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("authorized"), "the flow was traced: {log}");
    let everything = format!("{log}\n{}", shown.join("\n"));
    for secret in [
        "ACCESS_TOKEN_VALUE",
        "REFRESH_TOKEN_VALUE",
        "CLIENT_SECRET_VALUE",
        "AUTH_CODE_VALUE",
        "code_verifier",
    ] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked:\n{everything}"
        );
    }
    // The values did exist (the test looks for the right strings).
    let tokens = auth.tokens().unwrap();
    assert!(
        tokens
            .access_token
            .expose()
            .starts_with("ACCESS_TOKEN_VALUE")
    );
    assert!(
        tokens
            .refresh_token
            .unwrap()
            .expose()
            .starts_with("REFRESH_TOKEN_VALUE")
    );
    assert!(
        fake.seen_path(AS1, "/token")[0].form()["client_secret"].starts_with("CLIENT_SECRET_VALUE")
    );
}
