//! Hostile authorization servers and resources: each case is a server that
//! misbehaves on purpose (endless demands, unusable URLs, oversized or
//! mismatched documents), and the client must stop with a typed error
//! after a bounded number of requests, having sent nothing it should not.

mod support;

use mcpwire_auth::{AuthError, OAuth, OAuthConfig};
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
