//! What happens after the server says no: refresh (with rotation and
//! without), renewal before expiry, single-flight refresh, step-up with the
//! scope union and its limit, authorization server migration, DPoP and its
//! nonces, and tokens kept to their origin.

mod support;

use std::time::Duration;

use http::{Method, StatusCode};
use mcpwire_auth::{AuthError, Authorizer, DpopMode, OAuth, OAuthConfig};
use support::*;

fn oauth(fake: &Fake, config: OAuthConfig) -> OAuth {
    OAuth::new(SERVER, config.redirect(fake.redirect()), fake.arc()).unwrap()
}

fn grants(fake: &Fake, origin: &str) -> Vec<String> {
    fake.seen_path(origin, "/token")
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect()
}

#[tokio::test]
async fn step_up_asks_for_the_union_of_held_and_challenged_scopes() {
    let fake = Fake::standard();
    fake.with_rs(|rs| {
        rs.challenge_scope = Some("mcp:basic".into());
        rs.scopes_supported = Some(vec!["mcp:profile".into()]);
        rs.needs
            .insert("tools/call".into(), vec!["mcp:write".into()]);
    });
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(
        fake.call(&auth, "tools/list").await.unwrap(),
        StatusCode::OK
    );
    assert_eq!(
        fake.call(&auth, "tools/call").await.unwrap(),
        StatusCode::OK
    );
    let scopes: Vec<String> = fake
        .seen_path(AS1, "/authorize")
        .iter()
        .map(|s| s.query()["scope"].clone())
        .collect();
    assert_eq!(scopes, ["mcp:basic", "mcp:basic mcp:write"]);
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn step_up_stops_after_three_authorizations() {
    let fake = Fake::standard();
    fake.with_rs(|rs| {
        rs.challenge_scope = Some("mcp:admin".into());
        rs.always_403 = Some("mcp:admin".into());
    });
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "tools/list").await.unwrap_err();
    assert!(
        matches!(
            err,
            AuthError::StepUpLimit {
                authorizations: 3,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 3);
    assert!(err.to_string().contains("mcp:admin"));
}

#[tokio::test]
async fn a_401_refreshes_with_the_rotated_refresh_token_and_the_resource() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let first_rt = auth.tokens().unwrap().refresh_token.unwrap();
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    let second_rt = auth.tokens().unwrap().refresh_token.unwrap();
    assert_ne!(
        first_rt, second_rt,
        "the rotated refresh token replaces the old one"
    );
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&auth, "c").await.unwrap(), StatusCode::OK);
    assert_eq!(
        grants(&fake, AS1),
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    let refreshes = fake.seen_path(AS1, "/token");
    assert_eq!(refreshes[1].form()["refresh_token"], first_rt.expose());
    assert_eq!(refreshes[2].form()["refresh_token"], second_rt.expose());
    assert!(refreshes.iter().all(|r| r.form()["resource"] == SERVER));
    assert_eq!(
        fake.seen_path(AS1, "/authorize").len(),
        1,
        "no new authorization"
    );
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_refresh_answer_without_a_refresh_token_keeps_the_old_one() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.refresh = Refresh::Omit);
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let rt = auth.tokens().unwrap().refresh_token.unwrap();
    for _ in 0..2 {
        fake.revoke_access_tokens();
        assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
        assert_eq!(auth.tokens().unwrap().refresh_token.as_ref(), Some(&rt));
    }
    let sent: Vec<String> = fake.seen_path(AS1, "/token")[1..]
        .iter()
        .map(|r| r.form()["refresh_token"].clone())
        .collect();
    assert_eq!(sent, [rt.expose(), rt.expose()]);
}

#[tokio::test]
async fn tokens_are_renewed_before_they_expire_without_a_401() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.expires_in = 1);
    let auth = oauth(&fake, OAuthConfig::new().clock_skew(Duration::ZERO));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let before = fake.seen_path(RS_ORIGIN, "/mcp").len();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    assert_eq!(grants(&fake, AS1), ["authorization_code", "refresh_token"]);
    assert_eq!(
        fake.seen_path(RS_ORIGIN, "/mcp").len(),
        before + 1,
        "one request, no 401 round trip"
    );
}

#[tokio::test]
async fn concurrent_requests_meeting_a_dead_token_share_one_refresh() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    fake.revoke_access_tokens();
    // The fake answers after a yield, so the eight calls all send the dead
    // token and all meet the 401 before the first refresh is answered.
    let calls: Vec<_> = (0..8).map(|_| fake.call(&auth, "b")).collect();
    for r in futures_util::future::join_all(calls).await {
        assert_eq!(r.unwrap(), StatusCode::OK);
    }
    let dead = fake
        .seen_path(RS_ORIGIN, "/mcp")
        .iter()
        .filter(|s| s.header("authorization").is_some())
        .take(1 + 8)
        .skip(1)
        .map(|s| s.header("authorization"))
        .collect::<Vec<_>>();
    assert!(
        dead.windows(2).all(|w| w[0] == w[1]),
        "the calls ran one after another, not at once: {dead:?}"
    );
    assert_eq!(grants(&fake, AS1), ["authorization_code", "refresh_token"]);
}

#[tokio::test]
async fn a_new_authorization_server_means_a_new_registration_and_nothing_old_is_sent_there() {
    let fake = Fake::new(
        RsConfig::default(),
        vec![AsConfig::new(AS1), AsConfig::new(AS2)],
    );
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let as1_client = fake.seen_path(AS1, "/authorize")[0].query()["client_id"].clone();
    let as1_rt = auth.tokens().unwrap().refresh_token.unwrap();
    fake.with_rs(|rs| rs.authorization_servers = vec![AS2.into()]);
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    assert_eq!(auth.issuer().as_deref(), Some(AS2));
    assert_eq!(fake.seen_path(AS2, "/register").len(), 1);
    for seen in fake.seen_at(AS2) {
        let text = format!(
            "{} {:?} {}",
            seen.url,
            seen.headers,
            String::from_utf8_lossy(&seen.body)
        );
        assert!(!text.contains(&as1_client), "AS1's client at AS2: {text}");
        assert!(
            !text.contains(as1_rt.expose()),
            "AS1's refresh token at AS2: {text}"
        );
        assert_ne!(seen.client_id().as_deref(), Some(as1_client.as_str()));
    }
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_pre_registered_client_is_not_taken_to_another_authorization_server() {
    let fake = Fake::new(
        RsConfig::default(),
        vec![AsConfig::new(AS1), AsConfig::new(AS2)],
    );
    for s in [AS1, AS2] {
        fake.with_as(s, |a| {
            a.clients.insert("pre".into(), String::new());
        });
    }
    let auth = oauth(&fake, OAuthConfig::new().client("pre", None));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    fake.with_rs(|rs| rs.authorization_servers = vec![AS2.into()]);
    let err = fake.call(&auth, "b").await.unwrap_err();
    assert!(
        matches!(err, AuthError::CredentialsBoundElsewhere { .. }),
        "{err:?}"
    );
    assert!(
        fake.seen_at(AS2)
            .iter()
            .all(|s| s.path().contains("well-known"))
    );
}

#[tokio::test]
async fn tokens_never_leave_the_servers_origin() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    for other in [
        "https://evil.test/mcp",
        "http://mcp.test/mcp",
        "https://mcp.test:8443/mcp",
        "https://sub.mcp.test/mcp",
    ] {
        let h = auth
            .headers(&Method::POST, &other.parse().unwrap())
            .await
            .unwrap();
        assert!(h.is_empty(), "{other}");
    }
    let same = auth
        .headers(
            &Method::GET,
            &"https://mcp.test/other/path".parse().unwrap(),
        )
        .await
        .unwrap();
    assert!(!same.is_empty());
}

#[tokio::test]
async fn a_token_endpoint_redirect_is_not_followed() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.token_redirect = Some("https://evil.test/steal".into())
    });
    let auth = oauth(&fake, OAuthConfig::new());
    let err = fake.call(&auth, "a").await.unwrap_err();
    assert!(matches!(err, AuthError::Fetch { .. }), "{err:?}");
    let cause = std::error::Error::source(&err)
        .and_then(|e| e.source())
        .unwrap()
        .to_string();
    assert!(cause.contains("redirect (HTTP 307)"), "{cause}");
    assert!(fake.seen_at("https://evil.test").is_empty());
}

#[tokio::test]
async fn a_metadata_hint_on_another_origin_cannot_claim_another_resource() {
    let fake = Fake::standard();
    fake.with_rs(|rs| {
        rs.prm_hint = Some("https://evil.test/prm".into());
        rs.prm_at = vec!["https://evil.test/prm".into()];
        rs.resource = "https://evil.test/mcp".into();
    });
    let auth = oauth(&fake, OAuthConfig::new());
    assert!(matches!(
        fake.call(&auth, "a").await,
        Err(AuthError::ResourceMismatch { .. })
    ));
    assert!(fake.seen_at(AS1).is_empty());
}

#[tokio::test]
async fn dpop_bound_tokens_carry_a_fresh_proof_on_every_request() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.dpop = true);
    let auth = oauth(&fake, OAuthConfig::new());
    for m in ["a", "b", "c"] {
        assert_eq!(fake.call(&auth, m).await.unwrap(), StatusCode::OK);
    }
    assert!(fake.seen_path(AS1, "/token")[0].header("dpop").is_some());
    let rs: Vec<_> = fake
        .seen_path(RS_ORIGIN, "/mcp")
        .into_iter()
        .filter(|s| s.header("authorization").is_some())
        .collect();
    assert_eq!(rs.len(), 3);
    assert!(
        rs.iter()
            .all(|s| s.header("authorization").unwrap().starts_with("DPoP "))
    );
    assert_eq!(
        fake.rs_jtis().len(),
        3,
        "a proof per request, each with its own jti"
    );
    // A refresh of a bound token is made with the same key.
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&auth, "d").await.unwrap(), StatusCode::OK);
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn dpop_nonces_from_both_servers_are_honoured() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.dpop = true;
        a.dpop_nonce = true;
    });
    fake.with_rs(|rs| rs.dpop_nonce = true);
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    // The code exchange: challenged once, then retried with the nonce.
    assert_eq!(
        grants(&fake, AS1),
        ["authorization_code", "authorization_code"]
    );
    // The resource: one nonce challenge, then every request carries it.
    let rs_401 = fake.seen_path(RS_ORIGIN, "/mcp").len();
    assert_eq!(
        rs_401,
        1 + 1 + 1 + 1,
        "unauthenticated, nonce challenge, retry, second call"
    );
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn dpop_can_be_turned_off() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.dpop = true);
    let auth = oauth(&fake, OAuthConfig::new().dpop(DpopMode::Off));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    assert!(fake.seen_path(AS1, "/token")[0].header("dpop").is_none());
    assert!(
        fake.seen_path(RS_ORIGIN, "/mcp")[1]
            .header("authorization")
            .unwrap()
            .starts_with("Bearer ")
    );
}

#[tokio::test]
async fn no_dpop_proof_goes_to_a_server_that_does_not_offer_dpop() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let token = &fake.seen_path(AS1, "/token")[0];
    assert!(token.header("dpop").is_none());
    assert!(
        fake.seen_path(RS_ORIGIN, "/mcp")[1]
            .header("authorization")
            .unwrap()
            .starts_with("Bearer ")
    );
}

#[tokio::test]
async fn authorizing_ahead_of_time_spares_the_first_401() {
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.prm_hint = None);
    let auth = oauth(&fake, OAuthConfig::new());
    auth.authorize().await.unwrap();
    assert!(fake.seen_path(RS_ORIGIN, "/mcp").is_empty());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    assert_eq!(fake.seen_path(RS_ORIGIN, "/mcp").len(), 1);
}

#[tokio::test]
async fn a_token_that_cannot_be_renewed_is_used_until_it_expires() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.refresh = Refresh::None;
        a.expires_in = 2;
    });
    let auth = oauth(&fake, OAuthConfig::new().clock_skew(Duration::ZERO));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // Due for renewal, but nothing can renew it without a person: it is sent.
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    assert_eq!(fake.seen_path(AS1, "/token").len(), 1);
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 1);
}

#[tokio::test]
async fn the_refresh_names_the_held_scopes_only_when_asked_to() {
    for send in [false, true] {
        let fake = Fake::standard();
        fake.with_rs(|rs| rs.challenge_scope = Some("mcp:read mcp:write".into()));
        let auth = oauth(&fake, OAuthConfig::new().scope_on_refresh(send));
        assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
        fake.revoke_access_tokens();
        assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
        let refresh = fake.seen_path(AS1, "/token")[1].form();
        assert_eq!(refresh["grant_type"], "refresh_token");
        assert_eq!(
            refresh.get("scope").map(String::as_str),
            send.then_some("mcp:read mcp:write"),
            "scope_on_refresh({send})"
        );
    }
}

#[tokio::test]
async fn an_expired_token_is_renewed_before_the_request_without_a_401() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.expires_in = 1);
    let auth = oauth(&fake, OAuthConfig::new().clock_skew(Duration::ZERO));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let before = fake.seen_path(RS_ORIGIN, "/mcp").len();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(
        auth.tokens()
            .unwrap()
            .is_expired(std::time::SystemTime::now())
    );
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    assert_eq!(grants(&fake, AS1), ["authorization_code", "refresh_token"]);
    assert_eq!(
        fake.seen_path(RS_ORIGIN, "/mcp").len(),
        before + 1,
        "refreshed first: one request, no 401 round trip"
    );
}

#[tokio::test]
async fn an_expired_token_that_could_not_be_renewed_is_not_sent() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.expires_in = 1);
    let auth = oauth(&fake, OAuthConfig::new().clock_skew(Duration::ZERO));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let before = fake.seen_path(RS_ORIGIN, "/mcp").len();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    fake.unreachable(AS1);
    assert!(fake.call(&auth, "b").await.is_err());
    let next = &fake.seen_path(RS_ORIGIN, "/mcp")[before];
    assert_eq!(next.header("authorization"), None, "a dead token was sent");
}

/// A store whose reads never finish: whoever reads it holds the flight.
struct StuckStore;

impl mcpwire_auth::TokenStore for StuckStore {
    fn load<'a>(
        &'a self,
        _: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<Vec<mcpwire_auth::StoredAuth>, AuthError>> {
        Box::pin(futures_util::future::pending())
    }
    fn save<'a>(
        &'a self,
        _: &'a mcpwire_auth::StoredAuth,
    ) -> futures_util::future::BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(async { Ok(()) })
    }
    fn remove<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn waiting_for_another_authorization_is_bounded() {
    let fake = Fake::standard();
    let config = OAuthConfig::new()
        .token_store(std::sync::Arc::new(StuckStore))
        .authorization_timeout(Duration::from_millis(300))
        .request_timeout(Duration::from_millis(100));
    let auth = oauth(&fake, config);
    // The first call holds the flight forever (its store never answers);
    // the second waits for it at most the authorization timeout plus eight
    // request timeouts (1.1 s here).
    let stuck = auth.clone();
    let holder = tokio::spawn(async move { stuck.authorize().await });
    tokio::task::yield_now().await;
    let started = std::time::Instant::now();
    let err = auth.authorize().await.unwrap_err();
    let waited = started.elapsed();
    assert!(matches!(err, AuthError::Timeout { .. }), "{err:?}");
    assert!(
        waited >= Duration::from_millis(1000) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    holder.abort();
}

#[test]
fn the_debug_of_an_authorizer_names_its_server() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    let shown = format!("{auth:?}");
    assert!(shown.starts_with("OAuth"), "{shown}");
    assert!(shown.contains(SERVER), "{shown}");
}

#[tokio::test]
async fn a_pinned_issuer_is_chosen_among_those_the_server_names() {
    let fake = Fake::new(
        RsConfig {
            authorization_servers: vec![AS1.into(), AS2.into()],
            ..RsConfig::default()
        },
        vec![AsConfig::new(AS1), AsConfig::new(AS2)],
    );
    let auth = oauth(&fake, OAuthConfig::new().client_issuer(AS2));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    assert_eq!(auth.issuer().as_deref(), Some(AS2));
    assert!(fake.seen_path(AS1, "/register").is_empty());
    // A pinned issuer the server does not name: the server's first.
    let fake = Fake::new(
        RsConfig {
            authorization_servers: vec![AS1.into(), AS2.into()],
            ..RsConfig::default()
        },
        vec![AsConfig::new(AS1), AsConfig::new(AS2)],
    );
    let auth = oauth(&fake, OAuthConfig::new().client_issuer("https://as3.test"));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    assert_eq!(auth.issuer().as_deref(), Some(AS1));
}
