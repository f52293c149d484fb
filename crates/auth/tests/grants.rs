//! The grants that need no person: client credentials (secret, or a
//! `private_key_jwt` assertion with ES256 or RS256), the JWT bearer grant
//! of workload identity, and enterprise-managed authorization.

mod support;

use std::time::Duration;

use http::StatusCode;
use mcpwire_auth::{AssertionSource, AuthError, EnterpriseIdp, OAuth, OAuthConfig, Secret};
use support::*;

fn grants(fake: &Fake, origin: &str) -> Vec<String> {
    fake.seen_path(origin, "/token")
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect()
}

#[tokio::test]
async fn client_credentials_with_a_secret_the_way_the_server_advertises() {
    for method in ["client_secret_basic", "client_secret_post"] {
        let fake = Fake::standard();
        fake.with_as(AS1, |a| {
            a.auth_methods = Some(vec![method.into()]);
            a.clients.insert("svc".into(), "s3cret".into());
        });
        let auth = OAuth::new(
            SERVER,
            OAuthConfig::client_credentials("svc", "s3cret"),
            fake.arc(),
        )
        .unwrap();
        assert_eq!(
            fake.call(&auth, "a").await.unwrap(),
            StatusCode::OK,
            "{method}"
        );
        assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
        assert_eq!(
            grants(&fake, AS1),
            ["client_credentials"],
            "{method}: the token is cached"
        );
        let t = &fake.seen_path(AS1, "/token")[0];
        assert_eq!(
            t.header("authorization").is_some(),
            method == "client_secret_basic"
        );
        assert_eq!(t.form()["resource"], SERVER);
        assert!(
            fake.seen_path(AS1, "/register").is_empty()
                && fake.seen_path(AS1, "/authorize").is_empty()
        );
        assert!(
            fake.failures().is_empty(),
            "{method}: {:?}",
            fake.failures()
        );
    }
}

#[tokio::test]
async fn client_credentials_with_private_key_jwt_es256_and_rs256() {
    for key in [es256_keypair(), rs256_keypair()] {
        let fake = Fake::standard();
        fake.with_as(AS1, |a| {
            a.auth_methods = Some(vec!["private_key_jwt".into()]);
            a.assertion_keys.push((key.alg, key.verify.clone()));
        });
        let config = OAuthConfig::private_key_jwt("conformance-test-client", key.signing.clone());
        let auth = OAuth::new(SERVER, config, fake.arc()).unwrap();
        assert_eq!(
            fake.call(&auth, "a").await.unwrap(),
            StatusCode::OK,
            "{:?}",
            key.alg
        );
        let form = fake.seen_path(AS1, "/token")[0].form();
        assert_eq!(
            form["client_assertion_type"],
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        );
        assert!(!form.contains_key("client_secret"));
        assert!(
            fake.failures().is_empty(),
            "{:?}: {:?}",
            key.alg,
            fake.failures()
        );
    }
    // A key the server does not know is refused.
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.assertion_keys
            .push((rs256_keypair().alg, rs256_keypair().verify))
    });
    let auth = OAuth::new(
        SERVER,
        OAuthConfig::private_key_jwt("c", es256_keypair().signing),
        fake.arc(),
    )
    .unwrap();
    assert!(matches!(
        fake.call(&auth, "a").await,
        Err(AuthError::TokenRefused { .. })
    ));
}

#[tokio::test]
async fn client_credentials_tokens_are_fetched_again_before_expiry() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.expires_in = 1;
        a.clients.insert("svc".into(), "s".into());
        a.auth_methods = Some(vec!["client_secret_basic".into()]);
    });
    let config = OAuthConfig::client_credentials("svc", "s").clock_skew(Duration::ZERO);
    let auth = OAuth::new(SERVER, config, fake.arc()).unwrap();
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let rs_before = fake.seen_path(RS_ORIGIN, "/mcp").len();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    assert_eq!(
        grants(&fake, AS1),
        ["client_credentials", "client_credentials"]
    );
    assert_eq!(
        fake.seen_path(RS_ORIGIN, "/mcp").len(),
        rs_before + 1,
        "renewed before the request, not after a 401"
    );
}

#[tokio::test]
async fn workload_identity_uses_the_jwt_bearer_grant() {
    let key = es256_keypair();
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.registration = false;
        a.assertion_keys.push((key.alg, key.verify.clone()));
    });
    let jwt = workload_jwt(&key, AS1, 300);
    let config = OAuthConfig::jwt_bearer(
        Some("conformance-wif-workload".into()),
        AssertionSource::Value(Secret::new(jwt.clone())),
    );
    let auth = OAuth::new(SERVER, config, fake.arc()).unwrap();
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let form = fake.seen_path(AS1, "/token")[0].form();
    assert_eq!(
        form["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(form["assertion"], jwt);
    assert_eq!(form["client_id"], "conformance-wif-workload");
    assert_eq!(form["resource"], SERVER);
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_refused_workload_assertion_is_reported_once_without_retry_or_fallback() {
    let key = es256_keypair();
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.assertion_keys.push((key.alg, key.verify.clone()))
    });
    let expired = workload_jwt(&key, AS1, -600);
    let auth = OAuth::new(
        SERVER,
        OAuthConfig::jwt_bearer(None, AssertionSource::Value(Secret::new(expired))),
        fake.arc(),
    )
    .unwrap();
    let err = fake.call(&auth, "a").await.unwrap_err();
    assert!(
        matches!(&err, AuthError::TokenRefused { error, .. } if error == "invalid_grant"),
        "{err:?}"
    );
    assert_eq!(
        grants(&fake, AS1),
        ["urn:ietf:params:oauth:grant-type:jwt-bearer"]
    );
}

#[tokio::test]
async fn assertions_are_read_from_files_and_the_environment_each_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("token");
    std::fs::write(&path, "from-file\n").unwrap();
    assert_eq!(
        AssertionSource::File(path.clone())
            .read()
            .await
            .unwrap()
            .expose(),
        "from-file"
    );
    std::fs::write(&path, "rotated").unwrap();
    assert_eq!(
        AssertionSource::File(path).read().await.unwrap().expose(),
        "rotated"
    );
    let missing = AssertionSource::Env("MCPWIRE_AUTH_TEST_NO_SUCH_VAR".into())
        .read()
        .await;
    assert!(matches!(missing, Err(AuthError::MissingCredential { .. })));
}

#[tokio::test]
async fn enterprise_managed_exchanges_the_id_token_then_uses_the_grant() {
    let fake = Fake::new(
        RsConfig::default(),
        vec![AsConfig::new(AS1), AsConfig::new("https://idp.test")],
    );
    fake.with_as(AS1, |a| {
        a.auth_methods = Some(vec!["client_secret_basic".into()]);
        a.clients.insert("xaa-client".into(), "xaa-secret".into());
    });
    fake.with_as("https://idp.test", |a| {
        a.clients.insert("idp-client".into(), String::new());
    });
    let idp = EnterpriseIdp::new(
        "https://idp.test/token",
        "idp-client",
        AssertionSource::Value(Secret::new("the-id-token")),
    );
    let config =
        OAuthConfig::enterprise_managed("xaa-client", Some(Secret::new("xaa-secret")), idp);
    let auth = OAuth::new(SERVER, config, fake.arc()).unwrap();
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let exchange = fake.seen_path("https://idp.test", "/token")[0].form();
    assert_eq!(
        exchange["grant_type"],
        "urn:ietf:params:oauth:grant-type:token-exchange"
    );
    assert_eq!(exchange["audience"], AS1);
    assert_eq!(exchange["resource"], SERVER);
    assert_eq!(exchange["client_id"], "idp-client");
    let grant = &fake.seen_path(AS1, "/token")[0];
    assert_eq!(
        grant.form()["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(
        grant.form()["assertion"],
        format!("id-jag-for|{AS1}|{SERVER}")
    );
    assert_eq!(grant.client_id().as_deref(), Some("xaa-client"));
    assert!(grant.header("authorization").unwrap().starts_with("Basic "));
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn every_grant_asks_for_the_challenged_scopes_and_for_none_when_none_are_named() {
    const IDP: &str = "https://idp.test";
    for scope in [Some("read write"), None] {
        let key = es256_keypair();
        let fake = Fake::new(
            RsConfig::default(),
            vec![AsConfig::new(AS1), AsConfig::new(IDP)],
        );
        fake.with_rs(|rs| rs.challenge_scope = scope.map(Into::into));
        fake.with_as(AS1, |a| {
            a.auth_methods = Some(vec!["client_secret_basic".into()]);
            a.clients.insert("svc".into(), "s".into());
            a.assertion_keys.push((key.alg, key.verify.clone()));
        });
        fake.with_as(IDP, |a| {
            a.clients.insert("idp-client".into(), String::new());
        });
        let workload = AssertionSource::Value(Secret::new(workload_jwt(&key, AS1, 300)));
        let id_token = AssertionSource::Value(Secret::new("the-id-token"));
        let idp = EnterpriseIdp::new(format!("{IDP}/token"), "idp-client", id_token);
        for config in [
            OAuthConfig::client_credentials("svc", "s"),
            OAuthConfig::jwt_bearer(Some("wl".into()), workload),
            OAuthConfig::enterprise_managed("svc", Some(Secret::new("s")), idp),
        ] {
            let auth = OAuth::new(SERVER, config, fake.arc()).unwrap();
            assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
        }
        let mut requests = fake.seen_path(AS1, "/token");
        requests.extend(fake.seen_path(IDP, "/token"));
        // Three grants at the authorization server, one exchange at the
        // identity provider.
        assert_eq!(requests.len(), 4, "{scope:?}");
        for form in requests.iter().map(|r| r.form()) {
            assert_eq!(form.get("scope").map(String::as_str), scope, "{form:?}");
        }
        assert!(fake.failures().is_empty(), "{:?}", fake.failures());
    }
}

#[tokio::test]
async fn a_secret_goes_in_basic_where_the_server_takes_both_ways() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.auth_methods = Some(vec![
            "client_secret_post".into(),
            "client_secret_basic".into(),
        ]);
        a.clients.insert("svc".into(), "s3cret".into());
    });
    let config = OAuthConfig::client_credentials("svc", "s3cret");
    let auth = OAuth::new(SERVER, config, fake.arc()).unwrap();
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let token = &fake.seen_path(AS1, "/token")[0];
    assert!(
        token
            .header("authorization")
            .is_some_and(|a| a.starts_with("Basic "))
    );
    assert!(!token.form().contains_key("client_secret"));
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}
