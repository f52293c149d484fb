//! The authorization code flow against the fake servers: discovery in the
//! specified order, registration, scope selection, client authentication,
//! the RFC 9207 `iss` table and `state`.

mod support;

use http::StatusCode;
use mcpwire_auth::{AuthError, CallbackRedirect, OAuth, OAuthConfig, Secret};
use support::*;

fn oauth(fake: &Fake, config: OAuthConfig) -> OAuth {
    OAuth::new(SERVER, config.redirect(fake.redirect()), fake.arc()).unwrap()
}

fn paths(fake: &Fake) -> Vec<String> {
    fake.seen()
        .iter()
        .map(|s| format!("{} {}", s.method, s.url.split('?').next().unwrap()))
        .collect()
}

#[tokio::test]
async fn the_default_flow_discovers_registers_authorizes_and_retries() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    assert_eq!(
        paths(&fake),
        [
            "POST https://mcp.test/mcp",
            "GET https://mcp.test/.well-known/oauth-protected-resource/mcp",
            "GET https://as.test/.well-known/oauth-authorization-server",
            "POST https://as.test/register",
            "GET https://as.test/authorize",
            "POST https://as.test/token",
            "POST https://mcp.test/mcp",
        ]
    );
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());

    let reg: serde_json::Value =
        serde_json::from_slice(&fake.seen_path(AS1, "/register")[0].body).unwrap();
    assert_eq!(reg["redirect_uris"], serde_json::json!([REDIRECT]));
    assert_eq!(
        reg["grant_types"],
        serde_json::json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(reg["application_type"], "native");
    assert_eq!(reg["token_endpoint_auth_method"], "none");

    let authz = fake.seen_path(AS1, "/authorize")[0].query();
    assert_eq!(authz["code_challenge_method"], "S256");
    assert_eq!(authz["resource"], SERVER);
    assert_eq!(authz["redirect_uri"], REDIRECT);
    assert!(authz["state"].len() >= 16);
    assert!(
        !authz.contains_key("scope"),
        "no scope is known, so none is asked"
    );

    let token = fake.seen_path(AS1, "/token")[0].form();
    assert_eq!(token["grant_type"], "authorization_code");
    assert_eq!(token["resource"], SERVER);

    // The token is reused: no second authorization.
    assert_eq!(
        fake.call(&auth, "tools/call").await.unwrap(),
        StatusCode::OK
    );
    assert_eq!(fake.seen_path(AS1, "/token").len(), 1);
    assert_eq!(auth.issuer().as_deref(), Some(AS1));
}

#[tokio::test]
async fn prm_without_a_challenge_hint_comes_from_the_path_suffixed_url_and_oidc_discovery() {
    // metadata-var1: no resource_metadata; the AS publishes only OIDC.
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.prm_hint = None);
    fake.with_as(AS1, |a| {
        a.metadata_at = vec!["https://as.test/.well-known/openid-configuration".into()]
    });
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    let gets: Vec<_> = paths(&fake)
        .into_iter()
        .filter(|p| p.starts_with("GET") && p.contains("well-known"))
        .collect();
    assert_eq!(
        gets,
        [
            "GET https://mcp.test/.well-known/oauth-protected-resource/mcp",
            "GET https://as.test/.well-known/oauth-authorization-server",
            "GET https://as.test/.well-known/openid-configuration",
        ]
    );
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn root_prm_and_an_issuer_with_a_path_use_path_insertion_never_the_root_as_metadata() {
    // metadata-var2.
    let fake = Fake::new(
        RsConfig {
            prm_at: vec![PRM_ROOT_URL.into()],
            prm_hint: None,
            resource: RS_ORIGIN.into(),
            authorization_servers: vec!["https://as.test/tenant1".into()],
            ..RsConfig::default()
        },
        vec![AsConfig::new("https://as.test/tenant1")],
    );
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    let gets: Vec<_> = paths(&fake)
        .into_iter()
        .filter(|p| p.starts_with("GET") && p.contains("well-known"))
        .collect();
    assert_eq!(
        gets,
        [
            "GET https://mcp.test/.well-known/oauth-protected-resource/mcp",
            "GET https://mcp.test/.well-known/oauth-protected-resource",
            "GET https://as.test/.well-known/oauth-authorization-server/tenant1",
        ]
    );
    // The resource is what the metadata says.
    assert_eq!(
        fake.seen_path(AS1, "/tenant1/authorize")[0].query()["resource"],
        RS_ORIGIN
    );
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_custom_prm_url_and_oidc_path_appending_come_last_in_the_order() {
    // metadata-var3.
    let custom = "https://mcp.test/custom/metadata/location.json";
    let fake = Fake::new(
        RsConfig {
            prm_at: vec![custom.into()],
            prm_hint: Some(custom.into()),
            authorization_servers: vec!["https://as.test/tenant1".into()],
            ..RsConfig::default()
        },
        vec![AsConfig::new("https://as.test/tenant1")],
    );
    fake.with_as("https://as.test/tenant1", |a| {
        a.metadata_at = vec!["https://as.test/tenant1/.well-known/openid-configuration".into()]
    });
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    let gets: Vec<_> = paths(&fake)
        .into_iter()
        .filter(|p| p.starts_with("GET") && !p.contains("authorize"))
        .collect();
    assert_eq!(
        gets,
        [
            "GET https://mcp.test/custom/metadata/location.json",
            "GET https://as.test/.well-known/oauth-authorization-server/tenant1",
            "GET https://as.test/.well-known/openid-configuration/tenant1",
            "GET https://as.test/tenant1/.well-known/openid-configuration",
        ]
    );
}

#[tokio::test]
async fn a_2025_03_26_server_without_prm_is_its_own_authorization_server() {
    // 2025-03-26-oauth-metadata-backcompat: metadata at the origin, endpoints elsewhere.
    let fake = Fake::new(
        RsConfig {
            prm_at: vec![],
            prm_hint: None,
            authorization_servers: vec![RS_ORIGIN.into()],
            ..RsConfig::default()
        },
        vec![AsConfig::new(RS_ORIGIN)],
    );
    fake.with_as(RS_ORIGIN, |a| a.prefix = "/oauth".into());
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    assert_eq!(fake.seen_path(RS_ORIGIN, "/oauth/authorize").len(), 1);
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_2025_03_26_server_without_any_metadata_gets_the_default_endpoints() {
    let fake = Fake::new(
        RsConfig {
            prm_at: vec![],
            prm_hint: None,
            authorization_servers: vec![RS_ORIGIN.into()],
            ..RsConfig::default()
        },
        vec![AsConfig::new(RS_ORIGIN)],
    );
    fake.with_as(RS_ORIGIN, |a| {
        a.metadata_at = vec![];
        a.iss = Iss::Omit;
        a.auth_methods = None;
    });
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    for p in ["/register", "/authorize", "/token"] {
        assert_eq!(fake.seen_path(RS_ORIGIN, p).len(), 1, "{p}");
    }
    // Without metadata the registration defaults to client_secret_basic.
    assert!(
        fake.seen_path(RS_ORIGIN, "/token")[0]
            .header("authorization")
            .unwrap()
            .starts_with("Basic ")
    );
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_discovery_failure_lists_every_url_and_what_it_gave() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.metadata_at = vec![]);
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "tools/list").await.unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, AuthError::Discovery { .. }), "{err:?}");
    assert!(
        msg.contains("https://as.test/.well-known/oauth-authorization-server (HTTP 404)")
            && msg.contains("https://as.test/.well-known/openid-configuration (HTTP 404)"),
        "{msg}"
    );
}

#[tokio::test]
async fn metadata_for_another_resource_stops_everything() {
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.resource = "https://evil.example.com/mcp".into());
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "tools/list").await.unwrap_err();
    assert!(matches!(err, AuthError::ResourceMismatch { .. }), "{err:?}");
    assert!(
        fake.seen_at(AS1).is_empty(),
        "nothing was asked of the authorization server"
    );
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_not_used() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.claimed_issuer = Some("https://attacker.example.com".into())
    });
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "tools/list").await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
    for p in ["/register", "/authorize", "/token"] {
        assert!(fake.seen_path(AS1, p).is_empty(), "{p} was used");
    }
}

#[tokio::test]
async fn no_pkce_advertised_means_no_authorization() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.pkce = false);
    let auth = oauth(&fake, OAuthConfig::new());
    assert!(matches!(
        fake.call(&auth, "x").await,
        Err(AuthError::PkceUnsupported { .. })
    ));
    assert!(fake.seen_path(AS1, "/authorize").is_empty());
}

#[tokio::test]
async fn plain_http_off_loopback_is_refused() {
    let fake = Fake::standard();
    let plain = OAuth::new("http://mcp.example.com/mcp", OAuthConfig::new(), fake.arc()).unwrap();
    let err = fake
        .call_at(&plain, "http://mcp.example.com/mcp", "x")
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::InsecureUrl { .. }), "{err:?}");
    assert!(
        fake.seen_at(AS1).is_empty() && fake.seen_at("https://mcp.test/.well-known").is_empty()
    );
    fake.with_rs(|rs| rs.authorization_servers = vec!["http://as.example.com".into()]);
    let auth = oauth(&fake, OAuthConfig::new());
    assert!(matches!(
        fake.call(&auth, "x").await,
        Err(AuthError::InsecureUrl { .. })
    ));
}

async fn requested_scope(
    rs: impl FnOnce(&mut RsConfig),
    as_: impl FnOnce(&mut AsConfig),
    config: OAuthConfig,
) -> Option<String> {
    let fake = Fake::standard();
    fake.with_rs(rs);
    fake.with_as(AS1, as_);
    let auth = oauth(&fake, config);
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    fake.seen_path(AS1, "/authorize")[0]
        .query()
        .get("scope")
        .cloned()
}

#[tokio::test]
async fn scope_comes_from_the_challenge_else_scopes_supported_else_nowhere() {
    let both = |rs: &mut RsConfig| {
        rs.challenge_scope = Some("mcp:basic".into());
        rs.scopes_supported = Some(vec!["mcp:profile".into()]);
    };
    assert_eq!(
        requested_scope(both, |_| {}, OAuthConfig::new())
            .await
            .as_deref(),
        Some("mcp:basic")
    );
    let listed =
        |rs: &mut RsConfig| rs.scopes_supported = Some(vec!["a".into(), "b".into(), "c".into()]);
    assert_eq!(
        requested_scope(listed, |_| {}, OAuthConfig::new())
            .await
            .as_deref(),
        Some("a b c")
    );
    assert_eq!(
        requested_scope(|_| {}, |_| {}, OAuthConfig::new()).await,
        None
    );
}

#[tokio::test]
async fn offline_access_only_when_the_authorization_server_lists_it() {
    let prm = |rs: &mut RsConfig| rs.scopes_supported = Some(vec!["mcp:basic".into()]);
    let listed = |a: &mut AsConfig| {
        a.scopes_supported = Some(vec!["mcp:basic".into(), "offline_access".into()])
    };
    assert_eq!(
        requested_scope(prm, listed, OAuthConfig::new())
            .await
            .as_deref(),
        Some("mcp:basic offline_access")
    );
    let not_listed =
        |a: &mut AsConfig| a.scopes_supported = Some(vec!["mcp:basic".into(), "mcp:read".into()]);
    assert_eq!(
        requested_scope(prm, not_listed, OAuthConfig::new())
            .await
            .as_deref(),
        Some("mcp:basic")
    );
    assert_eq!(
        requested_scope(prm, listed, OAuthConfig::new().offline_access(false))
            .await
            .as_deref(),
        Some("mcp:basic")
    );
}

#[tokio::test]
async fn the_token_endpoint_authentication_is_the_one_advertised() {
    for method in ["client_secret_basic", "client_secret_post", "none"] {
        let fake = Fake::standard();
        fake.with_as(AS1, |a| a.auth_methods = Some(vec![method.into()]));
        let auth = oauth(&fake, OAuthConfig::new());
        assert_eq!(
            fake.call(&auth, "tools/list").await.unwrap(),
            StatusCode::OK,
            "{method}"
        );
        let token = &fake.seen_path(AS1, "/token")[0];
        let basic = token
            .header("authorization")
            .is_some_and(|a| a.starts_with("Basic "));
        let post = token.form().contains_key("client_secret");
        // client_id goes in the body too (Python SDK servers require it).
        assert!(token.form().contains_key("client_id"), "{method}");
        assert_eq!(
            (basic, post),
            (
                method == "client_secret_basic",
                method == "client_secret_post"
            ),
            "{method}"
        );
        assert!(
            fake.failures().is_empty(),
            "{method}: {:?}",
            fake.failures()
        );
    }
}

#[tokio::test]
async fn a_registration_answer_without_a_method_is_read_by_what_was_asked() {
    // RFC 7591 §3.2.1 lets the server leave the method out: the client then
    // authenticates the way it asked, and with `client_secret_basic` (the
    // default of §2) when it asked to be public but was given a secret.
    for (advertised, basic_expected, post_expected) in [
        (vec!["client_secret_post"], false, true),
        (vec!["none", "client_secret_basic"], true, false),
    ] {
        let fake = Fake::standard();
        fake.with_as(AS1, |a| {
            a.auth_methods = Some(advertised.iter().map(|m| m.to_string()).collect());
            a.registered_secret = true;
            a.omit_registered_method = true;
        });
        let auth = oauth(&fake, OAuthConfig::new());
        assert_eq!(
            fake.call(&auth, "tools/list").await.unwrap(),
            StatusCode::OK,
            "{advertised:?}"
        );
        let token = &fake.seen_path(AS1, "/token")[0];
        let basic = token
            .header("authorization")
            .is_some_and(|a| a.starts_with("Basic "));
        let post = token.form().contains_key("client_secret");
        assert_eq!(
            (basic, post),
            (basic_expected, post_expected),
            "{advertised:?}"
        );
        assert!(
            fake.failures().is_empty(),
            "{advertised:?}: {:?}",
            fake.failures()
        );
    }
}

#[tokio::test]
async fn a_pre_registered_client_is_used_before_anything_else() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.registration = false;
        a.cimd = true;
        a.auth_methods = Some(vec!["client_secret_basic".into()]);
        a.clients.insert(
            "pre-registered-client".into(),
            "pre-registered-secret".into(),
        );
    });
    let config = OAuthConfig::new()
        .client(
            "pre-registered-client",
            Some(Secret::new("pre-registered-secret")),
        )
        .client_metadata_url("https://client.example/meta.json");
    let auth = oauth(&fake, config);
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    assert_eq!(
        fake.seen_path(AS1, "/authorize")[0].query()["client_id"],
        "pre-registered-client"
    );
    assert_eq!(
        fake.seen_path(AS1, "/token")[0].client_id().as_deref(),
        Some("pre-registered-client")
    );
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_client_id_metadata_document_is_used_where_accepted() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.cimd = true);
    let url = "https://conformance-test.local/client-metadata.json";
    let auth = oauth(&fake, OAuthConfig::new().client_metadata_url(url));
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    assert_eq!(
        fake.seen_path(AS1, "/authorize")[0].query()["client_id"],
        url
    );
    assert!(
        fake.seen_path(AS1, "/register").is_empty(),
        "no dynamic registration"
    );
    // Not accepted: dynamic registration instead.
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new().client_metadata_url(url));
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    assert_eq!(fake.seen_path(AS1, "/register").len(), 1);
}

#[tokio::test]
async fn without_any_way_to_register_the_error_says_what_is_missing() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.registration = false);
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "tools/list").await.unwrap_err();
    assert!(
        matches!(err, AuthError::NoClientRegistration { .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("registration_endpoint") && msg.contains("pre-registered"),
        "{msg}"
    );
}

async fn iss_case(advertised: Option<bool>, iss: Iss) -> (Result<StatusCode, AuthError>, usize) {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.iss_supported = advertised;
        a.iss = iss;
    });
    let auth = oauth(&fake, OAuthConfig::new());
    let r = fake.call(&auth, "tools/list").await;
    (r, fake.seen_path(AS1, "/token").len())
}

#[tokio::test]
async fn the_iss_parameter_is_checked_by_simple_string_comparison() {
    assert!(matches!(
        iss_case(Some(true), Iss::Correct).await,
        (Ok(StatusCode::OK), 1)
    ));
    assert!(matches!(
        iss_case(None, Iss::Omit).await,
        (Ok(StatusCode::OK), 1)
    ));
    for (advertised, iss) in [
        (Some(true), Iss::Omit),
        (Some(true), Iss::Wrong),
        (None, Iss::Wrong),
        (Some(true), Iss::Normalized),
    ] {
        let (r, tokens) = iss_case(advertised, iss).await;
        assert!(
            matches!(r, Err(AuthError::IssuerParameter { .. })),
            "{advertised:?} {iss:?}: {r:?}"
        );
        assert_eq!(tokens, 0, "the code must not reach the token endpoint");
    }
}

#[tokio::test]
async fn a_redirect_with_another_state_is_discarded() {
    let fake = Fake::standard();
    let f2 = fake.clone();
    let tampering = CallbackRedirect::new(REDIRECT, move |url: url::Url| {
        let f = f2.clone();
        async move {
            let pending = mcpwire_auth::RedirectStep::prepare(&f.redirect()).await?;
            let back = pending.finish(url).await?;
            let mut out = back.clone();
            let pairs: Vec<(String, String)> = back
                .query_pairs()
                .map(|(k, v)| {
                    let v = if k == "state" {
                        "forged".to_owned()
                    } else {
                        v.into_owned()
                    };
                    (k.into_owned(), v)
                })
                .collect();
            out.query_pairs_mut().clear().extend_pairs(pairs);
            Ok(out.to_string())
        }
    });
    let auth = OAuth::new(SERVER, OAuthConfig::new().redirect(tampering), fake.arc()).unwrap();
    assert!(matches!(
        fake.call(&auth, "tools/list").await,
        Err(AuthError::StateMismatch)
    ));
    assert!(fake.seen_path(AS1, "/token").is_empty());
}
