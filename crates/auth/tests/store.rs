//! Token stores: the file store's guarantees, and an authorization that
//! outlives its process.

mod support;

use std::sync::Arc;

use http::StatusCode;
use mcpwire_auth::{FileStore, OAuth, OAuthConfig, Secret, StoredAuth, StoredClient, TokenStore};
use support::*;

fn entry(issuer: &str, resource: &str, client: &str) -> StoredAuth {
    let mut e = StoredAuth::new(issuer, resource);
    e.client = Some(StoredClient::new(
        client,
        Some(Secret::new("s")),
        "client_secret_basic",
    ));
    e
}

#[tokio::test]
async fn the_file_store_keeps_one_private_file_per_issuer_and_resource() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().join("auth"));
    assert!(
        store.load("https://mcp.test/mcp").await.unwrap().is_empty(),
        "a missing directory is empty"
    );
    store
        .save(&entry("https://as1", "https://mcp.test/mcp", "a"))
        .await
        .unwrap();
    store
        .save(&entry("https://as2", "https://mcp.test/mcp", "b"))
        .await
        .unwrap();
    store
        .save(&entry("https://as1", "https://other.test/mcp", "c"))
        .await
        .unwrap();
    store
        .save(&entry("https://as1", "https://mcp.test/mcp", "a2"))
        .await
        .unwrap();

    let names: Vec<String> = std::fs::read_dir(store.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.ends_with(".json") && !n.contains("mcp.test")),
        "no temporary files, no URLs: {names:?}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for n in &names {
            let mode = std::fs::metadata(store.dir().join(n))
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(mode, 0o600, "{n}");
        }
        let dir_mode = std::fs::metadata(store.dir()).unwrap().permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
    }
    let mut clients: Vec<String> = store
        .load("https://mcp.test/mcp")
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.client.unwrap().client_id)
        .collect();
    clients.sort();
    assert_eq!(clients, ["a2", "b"]);

    // A damaged file is skipped and kept.
    let damaged = names.iter().find(|n| {
        let text = std::fs::read_to_string(store.dir().join(n)).unwrap();
        text.contains("\"b\"")
    });
    std::fs::write(store.dir().join(damaged.unwrap()), "{not json").unwrap();
    let left = store.load("https://mcp.test/mcp").await.unwrap();
    assert_eq!(left.len(), 1);
    assert!(store.dir().join(damaged.unwrap()).exists());

    store
        .remove("https://as1", "https://mcp.test/mcp")
        .await
        .unwrap();
    store
        .remove("https://as1", "https://mcp.test/mcp")
        .await
        .unwrap();
    assert!(store.load("https://mcp.test/mcp").await.unwrap().is_empty());
}

#[tokio::test]
async fn an_authorization_in_a_file_store_serves_the_next_process() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn TokenStore> = Arc::new(FileStore::new(dir.path()));
    let fake = Fake::standard();
    fake.with_as(AS1, |a| {
        a.auth_methods = Some(vec!["client_secret_basic".into()])
    });
    let config = || {
        OAuthConfig::new()
            .redirect(fake.redirect())
            .token_store(store.clone())
    };

    let first = OAuth::new(SERVER, config(), fake.arc()).unwrap();
    assert_eq!(fake.call(&first, "a").await.unwrap(), StatusCode::OK);
    let saved = store.load("https://mcp.test/mcp").await.unwrap();
    assert_eq!(saved.len(), 1);
    assert!(
        saved[0].tokens.as_ref().unwrap().expires_at.is_some(),
        "absolute expiry kept"
    );

    // A new process: the stored token is sent on the very first request.
    let second = OAuth::new(SERVER, config(), fake.arc()).unwrap();
    let before = fake.seen().len();
    assert_eq!(fake.call(&second, "b").await.unwrap(), StatusCode::OK);
    assert_eq!(
        fake.seen().len(),
        before + 1,
        "one request, already authorized"
    );

    // Its refresh uses the stored refresh token and the stored client.
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&second, "c").await.unwrap(), StatusCode::OK);
    assert_eq!(
        fake.seen_path(AS1, "/register").len(),
        1,
        "registered once, in the first process"
    );
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 1);
    let refresh = fake.seen_path(AS1, "/token").pop().unwrap();
    assert_eq!(refresh.form()["grant_type"], "refresh_token");
    assert!(
        refresh
            .header("authorization")
            .unwrap()
            .starts_with("Basic "),
        "the stored client's secret"
    );
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
}
