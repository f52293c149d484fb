//! Which credentials a challenged request carried, and what has changed
//! since: a request overtaken by another's refresh, one sent without
//! credentials, the bound on the retries of a stale request, and what a
//! process that loaded its authorization from the store keeps (the
//! authorization server's metadata, the resource indicator, the entries of
//! other authorization servers).

mod support;

use std::sync::Arc;
use std::time::Duration;

use http::{Method, StatusCode, Uri};
use mcpwire_auth::{
    AuthError, AuthHeaders, AuthRound, Authorizer, Challenge, Challenged, MemoryStore, OAuth,
    OAuthConfig, Secret, TokenStore,
};
use support::*;

fn oauth(fake: &Fake, config: OAuthConfig) -> OAuth {
    OAuth::new(SERVER, config.redirect(fake.redirect()), fake.arc()).unwrap()
}

fn grants(fake: &Fake) -> Vec<String> {
    fake.seen_path(AS1, "/token")
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect()
}

async fn headers(auth: &OAuth) -> AuthHeaders {
    let uri: Uri = SERVER.parse().unwrap();
    auth.headers(&Method::POST, &uri).await.unwrap()
}

/// Hands `auth` the resource's `401 invalid_token` to a request that
/// carried `sent`, as the transport does.
async fn refused(auth: &OAuth, sent: &AuthHeaders, round: &mut AuthRound) -> Result<(), AuthError> {
    let header = format!("Bearer error=\"invalid_token\", resource_metadata=\"{PRM_PATH_URL}\"");
    let challenges = Challenge::parse_all([header.as_bytes()]);
    let uri: Uri = SERVER.parse().unwrap();
    let answer = Challenged::new(
        StatusCode::UNAUTHORIZED,
        &challenges,
        None,
        &Method::POST,
        &uri,
        sent,
    );
    auth.challenged(answer, round).await
}

fn metadata_fetches(fake: &Fake) -> usize {
    fake.seen_path(AS1, "/.well-known/oauth-authorization-server")
        .len()
}

#[tokio::test]
async fn a_401_to_the_current_token_goes_straight_to_one_refresh() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    fake.revoke_access_tokens();
    let before = fake.seen_path(RS_ORIGIN, "/mcp").len();
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    assert_eq!(
        fake.seen_path(RS_ORIGIN, "/mcp").len() - before,
        2,
        "the refused request, then the same request with the refreshed token"
    );
    assert_eq!(grants(&fake), ["authorization_code", "refresh_token"]);
}

#[tokio::test]
async fn a_request_overtaken_by_another_refresh_keeps_its_own_refresh_for_later() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    // This request carries the first token; before its 401 arrives,
    // another request meets the same dead token and refreshes it.
    let stale = headers(&auth).await;
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    assert_eq!(grants(&fake), ["authorization_code", "refresh_token"]);

    // Its 401 costs nothing: it is retried with the token now held. That
    // token dies too before the retry arrives, so the retry's own 401 is
    // met with a refresh of its own, not a new authorization.
    let mut round = AuthRound::default();
    refused(&auth, &stale, &mut round).await.unwrap();
    assert_eq!(round.retries(), 1);
    assert_eq!(grants(&fake).len(), 2, "nothing renewed for a stale 401");
    fake.revoke_access_tokens();
    assert_eq!(
        fake.call_in_round(&auth, SERVER, "c", &mut round)
            .await
            .unwrap(),
        StatusCode::OK
    );
    assert_eq!(
        grants(&fake),
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 1);
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_stale_request_is_retried_a_bounded_number_of_times_without_renewing_anything() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let stale = headers(&auth).await;
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    let seen = fake.seen().len();

    // A server that keeps refusing the first token, however often the
    // request is retried: two free retries (newer credentials are held),
    // then the round's refresh and its authorization, each found already
    // done by the newer credentials, then the refusal.
    let mut round = AuthRound::default();
    let mut retried = 0;
    let err = loop {
        match refused(&auth, &stale, &mut round).await {
            Ok(()) => retried += 1,
            Err(e) => break e,
        }
        assert!(
            retried <= 10,
            "the retries of a stale request are unbounded"
        );
    };
    assert_eq!(retried, 4);
    assert_eq!(round.retries(), 4);
    assert!(
        matches!(err, AuthError::Unauthorized { status: 401, .. }),
        "{err:?}"
    );
    assert_eq!(fake.seen().len(), seen, "nothing was fetched for it");
}

#[tokio::test]
async fn a_request_first_sent_without_credentials_still_gets_its_refresh() {
    let fake = Fake::standard();
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    fake.revoke_access_tokens();

    // A request that went out before any credentials were known is
    // refused; credentials are held now, so it is retried with them
    // without a new authorization. They are dead, so that retry's 401 is
    // met with the round's refresh.
    let mut round = AuthRound::default();
    refused(&auth, &AuthHeaders::none(), &mut round)
        .await
        .unwrap();
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 1);
    assert_eq!(
        fake.call_in_round(&auth, SERVER, "b", &mut round)
            .await
            .unwrap(),
        StatusCode::OK
    );
    assert_eq!(grants(&fake), ["authorization_code", "refresh_token"]);
    assert_eq!(
        fake.seen_path(AS1, "/authorize").len(),
        1,
        "no second authorization"
    );
}

#[tokio::test]
async fn stored_credentials_answer_a_401_to_a_request_sent_without_any() {
    let fake = Fake::standard();
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let first = oauth(&fake, OAuthConfig::new().token_store(store.clone()));
    assert_eq!(fake.call(&first, "a").await.unwrap(), StatusCode::OK);

    // A second process loads the stored authorization; a request it sent
    // without credentials is refused, and is retried with the stored ones.
    let second = oauth(&fake, OAuthConfig::new().token_store(store));
    assert!(!headers(&second).await.is_empty());
    let mut round = AuthRound::default();
    refused(&second, &AuthHeaders::none(), &mut round)
        .await
        .unwrap();
    assert_eq!(
        fake.seen_path(AS1, "/authorize").len(),
        1,
        "the stored authorization is used, not a new one"
    );
    assert_eq!(grants(&fake), ["authorization_code"]);
}

#[tokio::test]
async fn a_process_fetches_the_authorization_servers_metadata_once_across_refreshes() {
    let fake = Fake::standard();
    // Tokens of 4 s, due for renewal after 2.
    fake.with_as(AS1, |a| a.expires_in = 4);
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let config = || {
        OAuthConfig::new()
            .token_store(store.clone())
            .clock_skew(Duration::ZERO)
    };
    let first = oauth(&fake, config());
    assert_eq!(fake.call(&first, "a").await.unwrap(), StatusCode::OK);
    let fetched_by_first = metadata_fetches(&fake);

    // A second process loads the authorization; its token is due, and the
    // refresh before the request fails (the token endpoint is down). The
    // token is still valid, so it is sent.
    let second = oauth(&fake, config());
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let token_endpoint = format!("{AS1}/token");
    fake.unreachable(&token_endpoint);
    assert!(
        !headers(&second).await.is_empty(),
        "a failed renewal keeps a token that is still valid"
    );
    assert_eq!(grants(&fake), ["authorization_code"]);
    assert_eq!(metadata_fetches(&fake) - fetched_by_first, 1);

    // Then two refreshes after 401s: the metadata found for the failed
    // one serves both.
    fake.reachable(&token_endpoint);
    for method in ["b", "c"] {
        fake.revoke_access_tokens();
        assert_eq!(fake.call(&second, method).await.unwrap(), StatusCode::OK);
    }
    assert_eq!(
        grants(&fake),
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    assert_eq!(
        metadata_fetches(&fake) - fetched_by_first,
        1,
        "the metadata is discovered once and kept, past a failed refresh and a good one"
    );
}

#[tokio::test]
async fn refreshes_in_a_process_that_loaded_its_authorization_discover_the_metadata_once() {
    let fake = Fake::standard();
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let first = oauth(&fake, OAuthConfig::new().token_store(store.clone()));
    assert_eq!(fake.call(&first, "a").await.unwrap(), StatusCode::OK);
    let fetched_by_first = metadata_fetches(&fake);

    // The first refresh of the second process discovers the metadata; the
    // tokens it commits keep it for the second.
    let second = oauth(&fake, OAuthConfig::new().token_store(store));
    for method in ["b", "c"] {
        fake.revoke_access_tokens();
        assert_eq!(fake.call(&second, method).await.unwrap(), StatusCode::OK);
    }
    assert_eq!(
        grants(&fake),
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    assert_eq!(metadata_fetches(&fake) - fetched_by_first, 1);
}

#[tokio::test]
async fn a_resource_indicator_other_than_the_server_url_is_kept_in_the_store() {
    let fake = Fake::standard();
    fake.with_rs(|rs| rs.resource = RS_ORIGIN.into());
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let first = oauth(&fake, OAuthConfig::new().token_store(store.clone()));
    assert_eq!(fake.call(&first, "a").await.unwrap(), StatusCode::OK);
    let saved = store.load(SERVER).await.unwrap();
    assert_eq!(saved[0].indicator.as_deref(), Some(RS_ORIGIN));

    let second = oauth(&fake, OAuthConfig::new().token_store(store));
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&second, "b").await.unwrap(), StatusCode::OK);
    let refresh = fake.seen_path(AS1, "/token").pop().unwrap();
    assert_eq!(refresh.form()["grant_type"], "refresh_token");
    assert_eq!(
        refresh.form()["resource"],
        RS_ORIGIN,
        "the next process sends the resource the metadata named"
    );
}

#[tokio::test]
async fn the_resource_indicator_is_not_stored_when_it_is_the_server_url() {
    let fake = Fake::standard();
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let auth = oauth(&fake, OAuthConfig::new().token_store(store.clone()));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    assert_eq!(store.load(SERVER).await.unwrap()[0].indicator, None);
}

#[tokio::test]
async fn going_back_to_an_earlier_authorization_server_reuses_its_client() {
    let fake = Fake::new(
        RsConfig::default(),
        vec![AsConfig::new(AS1), AsConfig::new(AS2)],
    );
    let auth = oauth(&fake, OAuthConfig::new());
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    for to in [AS2, AS1] {
        fake.with_rs(|rs| rs.authorization_servers = vec![to.into()]);
        assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    }
    assert_eq!(fake.seen_path(AS1, "/register").len(), 1);
    assert_eq!(fake.seen_path(AS2, "/register").len(), 1);
    let clients: Vec<String> = fake
        .seen_path(AS1, "/authorize")
        .iter()
        .map(|s| s.query()["client_id"].clone())
        .collect();
    assert_eq!(clients.len(), 2);
    assert_eq!(clients[0], clients[1], "the client registered at AS1 first");
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_token_past_its_expiry_that_nothing_can_renew_is_still_offered() {
    // No refresh tokens, and a grant that needs a person: by the client's
    // clock the token has expired, but a server whose clock runs behind
    // (or that is lenient) may still take it, which spares a person an
    // authorization. This server takes it.
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.refresh = Refresh::None;
        a.expires_in = 1;
    });
    let auth = oauth(&fake, OAuthConfig::new().clock_skew(Duration::ZERO));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(
        auth.tokens()
            .unwrap()
            .is_expired(std::time::SystemTime::now())
    );
    assert_eq!(fake.call(&auth, "b").await.unwrap(), StatusCode::OK);
    let last = fake.seen_path(RS_ORIGIN, "/mcp").pop().unwrap();
    assert!(last.header("authorization").is_some());
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 1);
    assert_eq!(grants(&fake), ["authorization_code"]);
}

#[tokio::test]
async fn renewing_before_a_request_never_starts_an_authorization_that_needs_a_person() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| a.expires_in = 1);
    let auth = oauth(&fake, OAuthConfig::new().clock_skew(Duration::ZERO));
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    fake.revoke_refresh_tokens();
    let before = fake.seen_path(RS_ORIGIN, "/mcp").len();

    // Two requests find the token expired and wait to renew it. The first
    // one's refresh is refused, which spends the refresh token; the second
    // then has nothing to renew with, and the grant needs a person: it
    // does not start an authorization on its own. Both go out without a
    // token; after the server's 401 they offer the token held, since
    // nothing can renew it (and this server still takes it).
    let (a, b) = tokio::join!(fake.call(&auth, "b"), fake.call(&auth, "c"));
    assert_eq!(a.unwrap(), StatusCode::OK);
    assert_eq!(b.unwrap(), StatusCode::OK);
    let bare = fake.seen_path(RS_ORIGIN, "/mcp")[before..]
        .iter()
        .filter(|s| s.header("authorization").is_none())
        .count();
    assert_eq!(bare, 2, "both requests went out without a token");
    assert_eq!(grants(&fake), ["authorization_code", "refresh_token"]);
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 1);
}

#[tokio::test]
async fn the_next_process_authenticates_a_registered_client_the_way_it_registered() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.auth_methods = Some(vec!["client_secret_post".into()]);
    });
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let first = oauth(&fake, OAuthConfig::new().token_store(store.clone()));
    assert_eq!(fake.call(&first, "a").await.unwrap(), StatusCode::OK);
    let client = store.load(SERVER).await.unwrap()[0].client.clone();
    assert_eq!(
        client.map(|c| c.auth_method).as_deref(),
        Some("client_secret_post")
    );

    let second = oauth(&fake, OAuthConfig::new().token_store(store));
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&second, "b").await.unwrap(), StatusCode::OK);
    let refresh = fake.seen_path(AS1, "/token").pop().unwrap();
    assert_eq!(refresh.form()["grant_type"], "refresh_token");
    assert!(refresh.form().contains_key("client_secret"));
    assert_eq!(refresh.header("authorization"), None);
    assert_eq!(fake.seen_path(AS1, "/register").len(), 1);
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}

#[tokio::test]
async fn a_configured_client_and_its_secret_are_never_written_to_the_store() {
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.registration = false;
        a.auth_methods = Some(vec!["client_secret_basic".into()]);
        a.clients.insert("pre".into(), "pre-secret".into());
    });
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let config = OAuthConfig::new()
        .client("pre", Some(Secret::new("pre-secret")))
        .token_store(store.clone());
    let auth = oauth(&fake, config);
    assert_eq!(fake.call(&auth, "a").await.unwrap(), StatusCode::OK);
    let saved = store.load(SERVER).await.unwrap();
    assert!(saved[0].tokens.is_some());
    assert!(
        saved[0].client.is_none(),
        "the configuration gives the client each time"
    );
}
