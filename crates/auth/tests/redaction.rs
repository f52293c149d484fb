//! Secrets stay secret: a full flow (registration with a client secret,
//! authorization, refresh, a refused refresh, DPoP) is traced at the most
//! verbose level, and the trace, every `Debug` and every error message are
//! searched for the tokens, the secrets, the codes and the keys.

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use http::{Method, StatusCode};
use mcpwire_auth::{
    AssertionSource, Auth, Authorizer, EnterpriseIdp, FileStore, OAuth, OAuthConfig, Secret,
    TokenStore,
};
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
    // The PKCE verifier's value (its parameter name is no secret).
    let verifier = fake.seen_path(AS1, "/token")[0].form()["code_verifier"].clone();
    assert!(verifier.len() >= 43, "{verifier}");
    for secret in [
        "ACCESS_TOKEN_VALUE",
        "REFRESH_TOKEN_VALUE",
        "CLIENT_SECRET_VALUE",
        "AUTH_CODE_VALUE",
        verifier.as_str(),
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

/// The secret values a request the fake received carried: every header
/// that holds a credential (`Authorization`, `DPoP`) and every form field
/// that does.
fn secrets_sent(fake: &Fake) -> Vec<String> {
    let mut out = Vec::new();
    for seen in fake.seen() {
        for h in ["authorization", "dpop"] {
            if let Some(v) = seen.header(h) {
                out.push(v.clone());
                if let Some((_, cred)) = v.split_once(' ') {
                    out.push(cred.to_owned());
                }
            }
        }
        let form = seen.form();
        for field in [
            "code",
            "code_verifier",
            "refresh_token",
            "client_secret",
            "client_assertion",
            "assertion",
            "subject_token",
        ] {
            if let Some(v) = form.get(field) {
                out.push(v.clone());
            }
        }
    }
    out
}

/// Each 64-character line of a PEM body: a private key that reached a log
/// whole, or in part, shows up as one of them.
fn pem_lines(pem: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(pem)
        .lines()
        .filter(|l| !l.starts_with("-----") && l.len() >= 32)
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn every_credential_flow_keeps_its_secrets_out_of_traces_and_debug() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let mut secrets: Vec<String> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    let uri: http::Uri = SERVER.parse().unwrap();

    // A static bearer token, and one read from the environment (a variable
    // cargo sets for every test run, standing in for a token).
    let fixed = Auth::bearer("STATIC_BEARER_TOKEN_VALUE").unwrap();
    let from_env = Auth::bearer_from_env("CARGO_MANIFEST_DIR").unwrap();
    secrets.push("STATIC_BEARER_TOKEN_VALUE".into());
    secrets.push(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    for auth in [&fixed, &from_env] {
        let a = auth
            .authorizer(SERVER, Fake::standard().arc())
            .unwrap()
            .unwrap();
        let h = a.headers(&Method::POST, &uri).await.unwrap();
        assert!(!h.is_empty(), "the token is sent");
        shown.push(format!("{auth:?} {h:?}"));
    }

    // The authorization code flow with PKCE, a confidential registered
    // client, DPoP with nonces at both ends, a refresh, tokens in a file.
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FileStore::new(dir.path()));
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.auth_methods = Some(vec!["client_secret_post".into()]);
        a.dpop = true;
        a.dpop_nonce = true;
    });
    fake.with_rs(|rs| rs.dpop_nonce = true);
    let config = OAuthConfig::new()
        .redirect(fake.redirect())
        .token_store(store.clone());
    let auth = OAuth::new(SERVER, config.clone(), fake.arc()).unwrap();
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    let stored = store.load(SERVER).await.unwrap();
    let dpop_key = stored[0].dpop_key.clone().expect("a DPoP key was stored");
    secrets.push(dpop_key.expose().to_owned());
    secrets.extend(secrets_sent(&fake));
    shown.push(format!("{auth:?} {config:?} {stored:?} {store:?}"));
    shown.push(format!("{:?}", auth.tokens()));
    shown.push(format!(
        "{:?}",
        auth.headers(&Method::POST, &uri).await.unwrap()
    ));
    assert!(
        fake.seen_path(AS1, "/token")
            .iter()
            .any(|s| s.form().contains_key("code_verifier")),
        "the PKCE verifier was sent, so it is searched for"
    );

    // Client credentials with a secret, and with a private_key_jwt key.
    let key = es256_keypair();
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.auth_methods = Some(vec!["client_secret_basic".into(), "private_key_jwt".into()]);
        a.clients
            .insert("svc".into(), "CLIENT_CREDENTIALS_SECRET".into());
        a.assertion_keys.push((key.alg, key.verify.clone()));
    });
    for config in [
        OAuthConfig::client_credentials("svc", "CLIENT_CREDENTIALS_SECRET"),
        OAuthConfig::private_key_jwt("pkj-client", key.signing.clone()),
    ] {
        let auth = OAuth::new(SERVER, config.clone(), fake.arc()).unwrap();
        assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
        shown.push(format!("{auth:?} {config:?} {:?}", auth.tokens()));
    }
    shown.push(format!("{:?}", key.signing));
    secrets.push("CLIENT_CREDENTIALS_SECRET".into());
    secrets.extend(pem_lines(&key.pem));
    secrets.extend(secrets_sent(&fake));
    assert!(
        fake.seen_path(AS1, "/token")
            .iter()
            .any(|s| s.form().contains_key("client_assertion")),
        "the client assertion was sent, so it is searched for"
    );

    // The JWT bearer grant of workload identity.
    let workload = rs256_keypair();
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.registration = false;
        a.assertion_keys
            .push((workload.alg, workload.verify.clone()));
    });
    let jwt = workload_jwt(&workload, AS1, 300);
    let source = AssertionSource::Value(Secret::new(jwt.clone()));
    let config = OAuthConfig::jwt_bearer(Some("wif".into()), source.clone());
    let auth = OAuth::new(SERVER, config.clone(), fake.arc()).unwrap();
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    shown.push(format!(
        "{auth:?} {config:?} {source:?} {:?}",
        auth.tokens()
    ));
    secrets.push(jwt);
    secrets.extend(pem_lines(&workload.pem));
    secrets.extend(secrets_sent(&fake));

    // Enterprise-managed authorization: an ID token exchanged for an
    // ID-JAG, which is then the assertion of the JWT bearer grant.
    let fake = Fake::new(
        RsConfig::default(),
        vec![AsConfig::new(AS1), AsConfig::new("https://idp.test")],
    );
    fake.with_as(AS1, |a| {
        a.auth_methods = Some(vec!["client_secret_basic".into()]);
        a.clients
            .insert("xaa-client".into(), "XAA_CLIENT_SECRET".into());
    });
    fake.with_as("https://idp.test", |a| {
        a.clients.insert("idp-client".into(), String::new());
    });
    let idp = EnterpriseIdp::new(
        "https://idp.test/token",
        "idp-client",
        AssertionSource::Value(Secret::new("the-id-token")),
    );
    let config = OAuthConfig::enterprise_managed(
        "xaa-client",
        Some(Secret::new("XAA_CLIENT_SECRET")),
        idp.clone(),
    );
    let auth = OAuth::new(SERVER, config.clone(), fake.arc()).unwrap();
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    shown.push(format!("{auth:?} {config:?} {idp:?} {:?}", auth.tokens()));
    secrets.push("XAA_CLIENT_SECRET".into());
    secrets.push(format!("id-jag-for|{AS1}|{SERVER}"));
    secrets.extend(secrets_sent(&fake));

    let log = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    for flow in ["authorized", "tokens refreshed"] {
        assert!(log.contains(flow), "the flows were traced ({flow}): {log}");
    }
    let everything = format!("{log}\n{}", shown.join("\n"));
    secrets.sort();
    secrets.dedup();
    assert!(secrets.len() > 30, "{} secrets", secrets.len());
    for secret in &secrets {
        assert!(secret.len() >= 8, "too short to search for: {secret:?}");
        assert!(
            !everything.contains(secret.as_str()),
            "{secret} leaked:\n{everything}"
        );
    }
}
