//! Hostile authorization servers and resources: each case is a server that
//! misbehaves on purpose (endless demands, unusable URLs, oversized or
//! mismatched documents), and the client must stop with a typed error
//! after a bounded number of requests, having sent nothing it should not.

mod support;

use std::time::Duration;

use mcpwire_auth::{ALLOW_SETTING, AddressKind, AuthError, OAuth, OAuthConfig};
use support::*;

fn oauth(fake: &Fake, config: OAuthConfig) -> OAuth {
    OAuth::new(SERVER, config.redirect(fake.redirect()), fake.arc()).unwrap()
}

#[tokio::test]
async fn endless_dpop_nonce_demands_at_the_resource_stop_after_two_retries() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.dpop = true);
    fake.with_rs(|rs| rs.dpop_nonce_endless = true);
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "a").await.unwrap_err();
    assert!(
        matches!(err, AuthError::Unauthorized { status: 401, .. }),
        "{err:?}"
    );
    // The unauthenticated request, the first with the token, two retries
    // with the nonces the server handed out.
    assert_eq!(fake.seen_path(RS_ORIGIN, "/mcp").len(), 1 + 1 + 2);
}

#[tokio::test]
async fn endless_dpop_nonce_demands_at_the_token_endpoint_stop_after_one_retry() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.dpop = true;
        a.dpop_nonce_endless = true;
    });
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "a").await.unwrap_err();
    assert!(
        matches!(&err, AuthError::TokenRefused { error, .. } if error == "use_dpop_nonce"),
        "{err:?}"
    );
    assert_eq!(
        fake.seen_path(AS1, "/token").len(),
        2,
        "the request and one retry with the nonce"
    );
}

/// Endpoints a hostile authorization server may claim in its metadata,
/// each unusable for a different reason.
const UNUSABLE: [&str; 5] = [
    "http://as.test/endpoint",
    "file:///etc/passwd",
    "data:text/html,<script>alert(1)</script>",
    "javascript:alert(1)",
    "ftp://as.test/endpoint",
];

#[tokio::test]
async fn unusable_endpoint_urls_in_authorization_server_metadata_stop_discovery() {
    for field in [
        "authorization_endpoint",
        "token_endpoint",
        "registration_endpoint",
    ] {
        for url in UNUSABLE {
            let fake = Fake::standard();
            fake.with_as(AS1, |a| {
                a.claimed_endpoints.insert(field.into(), url.into());
            });
            let auth = oauth(&fake, OAuthConfig::new());
            let err = fake.call(&auth, "a").await.unwrap_err();
            match &err {
                AuthError::InsecureUrl { url: found, .. } => {
                    assert!(
                        url.starts_with(found.trim_end_matches('/')) || found.starts_with(url),
                        "{field}={url}: {err:?}"
                    );
                }
                other => panic!("{field}={url}: {other:?}"),
            }
            // Refused when the metadata is read: no client was registered
            // and no browser was sent anywhere before the bad URL was met.
            for p in ["/register", "/authorize", "/token", "/endpoint"] {
                assert!(
                    fake.seen_path(AS1, p).is_empty(),
                    "{field}={url}: {p} was used"
                );
            }
        }
    }
}

/// The call's error, which must be the address policy's refusal of `ip`.
fn assert_blocked(err: &AuthError, ip: &str, kind: AddressKind) {
    match err {
        AuthError::BlockedAddress {
            address, kind: k, ..
        } => {
            assert_eq!(address.to_string(), ip, "{err:?}");
            assert_eq!(*k, kind, "{err:?}");
        }
        other => panic!("not refused by the address policy: {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains(ip) && text.contains(ALLOW_SETTING),
        "the message names the address and the setting: {text}"
    );
}

#[tokio::test]
async fn a_metadata_hint_to_a_cloud_metadata_address_is_refused_before_it_is_fetched() {
    for (hint, ip, kind) in [
        (
            "https://169.254.169.254/latest/meta-data/iam",
            "169.254.169.254",
            AddressKind::LinkLocal,
        ),
        (
            "http://127.0.0.1:2375/containers",
            "127.0.0.1",
            AddressKind::Loopback,
        ),
        (
            "http://localhost:8080/admin",
            "127.0.0.1",
            AddressKind::Loopback,
        ),
        ("http://[::1]:8080/admin", "::1", AddressKind::Loopback),
        (
            "https://10.20.30.40/prm",
            "10.20.30.40",
            AddressKind::Private,
        ),
        ("https://[fe80::1]/prm", "fe80::1", AddressKind::LinkLocal),
        ("https://0.0.0.0/prm", "0.0.0.0", AddressKind::Unspecified),
    ] {
        let fake = Fake::standard();
        fake.with_rs(|rs| rs.prm_hint = Some(hint.into()));
        let auth = oauth(&fake, OAuthConfig::new());
        let err = fake.call(&auth, "a").await.unwrap_err();
        assert_blocked(&err, ip, kind);
        let host = url::Url::parse(hint)
            .unwrap()
            .host_str()
            .unwrap()
            .to_owned();
        assert!(
            fake.seen().iter().all(|s| !s.url.contains(&host)),
            "{hint} was fetched"
        );
        assert!(fake.seen_at(AS1).is_empty(), "{hint}: went on regardless");
    }
}

#[tokio::test]
async fn authorization_servers_and_endpoints_on_private_addresses_are_refused() {
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.authorization_servers = vec!["https://10.0.0.7".into()]);
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "a").await.unwrap_err();
    assert_blocked(&err, "10.0.0.7", AddressKind::Private);
    assert!(fake.seen_at("https://10.0.0.7").is_empty());

    for (field, url, ip) in [
        ("token_endpoint", "https://[::1]/token", "::1"),
        (
            "registration_endpoint",
            "https://192.168.0.10/register",
            "192.168.0.10",
        ),
    ] {
        let fake = Fake::standard();
        fake.with_as(AS1, |a| {
            a.claimed_endpoints.insert(field.into(), url.into());
        });
        let auth = oauth(&fake, OAuthConfig::new());
        let err = fake.call(&auth, "a").await.unwrap_err();
        assert_blocked(&err, ip, AddressKind::of(ip.parse().unwrap()).unwrap());
        assert!(
            fake.seen().iter().all(|s| !s.url.starts_with(url)),
            "{url} was used"
        );
        // Refused when the metadata is read, before anything else.
        for p in ["/register", "/authorize", "/token"] {
            assert!(fake.seen_path(AS1, p).is_empty(), "{url}: {p} was used");
        }
    }
}

#[tokio::test]
async fn requests_to_urls_learned_from_a_server_carry_the_address_policy() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), http::StatusCode::OK);
    let learned: Vec<_> = fake
        .seen()
        .into_iter()
        .filter(|s| s.path() != "/mcp" && s.path() != "/authorize")
        .collect();
    assert!(learned.len() >= 4, "{learned:?}");
    for s in &learned {
        assert!(s.public_only, "{} went without the policy", s.url);
    }
}

#[tokio::test]
async fn the_policy_is_lifted_by_the_setting_or_a_local_mcp_server() {
    // The user allows it: the hint on a link-local address is fetched.
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.prm_hint = Some("https://169.254.169.254/prm".into()));
    let auth = oauth(&fake, OAuthConfig::new().allow_private_addresses(true));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), http::StatusCode::OK);
    assert_eq!(fake.seen_at("https://169.254.169.254/prm").len(), 1);
    assert!(fake.seen().iter().all(|s| !s.public_only));

    // The MCP server is itself on a private address: so may its
    // authorization server be.
    let local_server = "https://10.0.0.5/mcp";
    let local_as = "https://10.0.0.6";
    let prm = "https://10.0.0.5/.well-known/oauth-protected-resource/mcp";
    let fake = Fake::new(
        RsConfig {
            prm_at: vec![prm.into()],
            prm_hint: Some(prm.into()),
            resource: local_server.into(),
            authorization_servers: vec![local_as.into()],
            ..RsConfig::default()
        },
        vec![AsConfig::new(local_as)],
    );
    let auth = OAuth::new(
        local_server,
        OAuthConfig::new().redirect(fake.redirect()),
        fake.arc(),
    )
    .unwrap();
    assert_eq!(
        fake.call_at(&auth, local_server, "a").await.unwrap(),
        http::StatusCode::OK
    );
    assert_eq!(fake.seen_path(local_as, "/token").len(), 1);
    assert!(fake.seen().iter().all(|s| !s.public_only));

    // A server on a public address gets no such exception.
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.prm_hint = Some("https://10.0.0.6/prm".into()));
    let public = "https://203.0.113.5/mcp";
    let auth = OAuth::new(
        public,
        OAuthConfig::new().redirect(fake.redirect()),
        fake.arc(),
    )
    .unwrap();
    let err = fake.call_at(&auth, public, "a").await.unwrap_err();
    assert_blocked(&err, "10.0.0.6", AddressKind::Private);
}

#[tokio::test]
async fn endless_401s_end_after_one_refresh_and_one_authorization() {
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.always_401 = true);
    let auth = oauth(&fake, OAuthConfig::new());
    // A client without the bound loops (refreshing each time) instead of
    // counting retries: the time bound turns that into a failure.
    let err = tokio::time::timeout(Duration::from_secs(10), fake.call(&auth, "a"))
        .await
        .expect("the client kept retrying")
        .unwrap_err();
    assert!(
        matches!(err, AuthError::Unauthorized { status: 401, .. }),
        "{err:?}"
    );
    // Unauthenticated, with the new token, with the refreshed one.
    assert_eq!(fake.seen_path(RS_ORIGIN, "/mcp").len(), 3);
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 1);
    let grants: Vec<String> = fake
        .seen_path(AS1, "/token")
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
}

#[tokio::test]
async fn endless_step_up_403s_end_at_the_authorization_limit() {
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.always_403 = Some("mcp:more".into()));
    let auth = oauth(&fake, OAuthConfig::new().max_authorizations(2));
    let err = fake.call(&auth, "a").await.unwrap_err();
    assert!(
        matches!(
            err,
            AuthError::StepUpLimit {
                authorizations: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 2);
}

#[tokio::test]
async fn a_challenge_other_than_bearer_still_leads_to_the_metadata() {
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.other_challenge = Some(r#"Basic realm="gateway""#.into()));
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), http::StatusCode::OK);
    // No hint: found at the well-known URL.
    assert_eq!(fake.seen_at(PRM_PATH_URL).len(), 1);
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_metadata_redirect_to_another_origin_is_not_followed() {
    let fake = Fake::standard();
    fake.with_rs(|rs| {
        rs.prm_at = vec![PRM_PATH_URL.into(), PRM_ROOT_URL.into()];
        rs.prm_redirect = Some("https://evil.test/prm".into());
    });
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "a").await.unwrap_err();
    assert!(matches!(err, AuthError::Discovery { .. }), "{err:?}");
    assert!(err.to_string().contains("302"), "{err}");
    assert!(fake.seen_at("https://evil.test").is_empty());
    assert!(fake.seen_at(AS1).is_empty());
}

#[tokio::test]
async fn metadata_naming_another_issuer_stops_before_registration() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.claimed_issuer = Some("https://evil.test".into()));
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "a").await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
    assert!(fake.seen_at("https://evil.test").is_empty());
    for p in ["/register", "/authorize", "/token"] {
        assert!(fake.seen_path(AS1, p).is_empty(), "{p} was used");
    }
}

#[tokio::test]
async fn an_unreachable_metadata_hint_is_passed_over_for_the_well_known_url() {
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.prm_hint = Some("https://down.test/prm".into()));
    fake.unreachable("https://down.test");
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), http::StatusCode::OK);
    assert_eq!(fake.seen_at(PRM_PATH_URL).len(), 1);
}

#[tokio::test]
async fn resource_metadata_without_authorization_servers_is_reported_not_guessed_around() {
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.authorization_servers = vec![]);
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "a").await.unwrap_err();
    // Not taken for a 2025-03-26 server (its origin as the authorization
    // server): the document was there, and unusable.
    assert!(matches!(err, AuthError::Discovery { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("rejected: no authorization_servers"),
        "{text}"
    );
    assert!(
        fake.seen_at(&format!(
            "{RS_ORIGIN}/.well-known/oauth-authorization-server"
        ))
        .is_empty()
    );
}

#[tokio::test]
async fn metadata_naming_another_issuer_on_the_same_origin_is_not_used() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.claimed_issuer = Some(format!("{AS1}/tenant-b"));
    });
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "a").await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
    assert!(fake.seen_path(AS1, "/register").is_empty());
}

#[tokio::test]
async fn a_server_without_any_metadata_is_the_issuer_its_assertions_name() {
    // A 2025-03-26 server with the default endpoints, and a client that
    // signs its assertions: their audience is the server's origin.
    let key = es256_keypair();
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
        a.assertion_keys.push((key.alg, key.verify.clone()));
    });
    let auth = OAuth::new(
        SERVER,
        OAuthConfig::private_key_jwt("pkj-client", key.signing.clone()),
        fake.arc(),
    )
    .unwrap();
    assert_eq!(fake.call(&auth, "a").await.unwrap(), http::StatusCode::OK);
    assert_eq!(auth.issuer().as_deref(), Some(RS_ORIGIN));
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn an_absurd_token_lifetime_does_not_overflow_the_clock() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.expires_in = u64::MAX);
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), http::StatusCode::OK);
    let t = auth.tokens().unwrap();
    let lifetime = t.expires_at.unwrap().duration_since(t.issued_at).unwrap();
    assert!(
        lifetime <= Duration::from_secs(10 * 366 * 24 * 3600),
        "{lifetime:?}"
    );
    assert_eq!(fake.call(&auth, "b").await.unwrap(), http::StatusCode::OK);
}
