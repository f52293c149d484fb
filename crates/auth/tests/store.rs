//! Token stores: the file store's guarantees, and an authorization that
//! outlives its process.

mod support;

use std::sync::Arc;

use http::StatusCode;
use mcpwire_auth::{
    AuthError, FileStore, OAuth, OAuthConfig, Secret, StoreLock, StoredAuth, StoredClient,
    TokenStore,
};
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

fn grant_types(fake: &Fake) -> Vec<String> {
    fake.seen_path(AS1, "/token")
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect()
}

#[tokio::test]
async fn processes_sharing_a_file_store_do_not_race_a_rotating_refresh_token() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::standard();
    // Each "process" has its own store object on the same directory, and
    // its own authorizer.
    let process = || {
        let store: Arc<dyn TokenStore> = Arc::new(FileStore::new(dir.path()));
        let config = OAuthConfig::new()
            .redirect(fake.redirect())
            .token_store(store);
        OAuth::new(SERVER, config, fake.arc()).unwrap()
    };
    let a = process();
    assert_eq!(fake.call(&a, "a").await.unwrap(), StatusCode::OK);
    let b = process();
    assert_eq!(fake.call(&b, "b").await.unwrap(), StatusCode::OK);

    // One after the other: B holds the refresh token A rotated away, and
    // takes A's refresh from the store instead of spending it.
    fake.revoke_access_tokens();
    assert_eq!(fake.call(&a, "c").await.unwrap(), StatusCode::OK);
    assert_eq!(fake.call(&b, "d").await.unwrap(), StatusCode::OK);
    assert_eq!(grant_types(&fake), ["authorization_code", "refresh_token"]);

    // At once: one refresh, under the lock; the other process reuses it.
    fake.revoke_access_tokens();
    let (ra, rb) = futures_util::future::join(fake.call(&a, "e"), fake.call(&b, "f")).await;
    assert_eq!((ra.unwrap(), rb.unwrap()), (StatusCode::OK, StatusCode::OK));
    assert_eq!(
        grant_types(&fake),
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    assert_eq!(fake.seen_path(AS1, "/authorize").len(), 1, "no new login");
    assert_eq!(
        a.tokens().unwrap().access_token,
        b.tokens().unwrap().access_token,
        "both use the one refreshed token"
    );
    // The lock file is not an entry.
    let store = FileStore::new(dir.path());
    assert_eq!(store.load(SERVER).await.unwrap().len(), 1);
}

/// The one file in `dir` (a store holding one entry).
fn only_file(dir: &std::path::Path) -> std::path::PathBuf {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    names.pop().unwrap()
}

#[tokio::test]
async fn a_file_store_reads_only_its_own_entries_for_the_resource_asked() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path());
    store
        .save(&entry("https://as1", "https://mcp.test/mcp", "a"))
        .await
        .unwrap();
    let file = only_file(dir.path());
    // A copy under the entry's name with another ending (an editor's
    // backup) is not an entry.
    std::fs::copy(&file, file.with_extension("json.bak")).unwrap();
    assert_eq!(store.load("https://mcp.test/mcp").await.unwrap().len(), 1);
    // A file named for this resource whose content is another resource's
    // entry is not taken for it.
    let other = tempfile::tempdir().unwrap();
    let elsewhere = FileStore::new(other.path());
    elsewhere
        .save(&entry("https://as1", "https://other.test/mcp", "b"))
        .await
        .unwrap();
    std::fs::copy(only_file(other.path()), &file).unwrap();
    assert!(store.load("https://mcp.test/mcp").await.unwrap().is_empty());
}

#[tokio::test]
async fn a_file_store_reports_what_it_cannot_read_or_remove() {
    // The store's directory is a file: loading fails, typed, instead of
    // finding nothing.
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("tokens");
    std::fs::write(&not_a_dir, "").unwrap();
    let err = FileStore::new(&not_a_dir)
        .load("https://mcp.test/mcp")
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Store(_)), "{err:?}");

    // An entry's name taken by a directory: removing it fails, typed,
    // instead of reporting it removed.
    let store = FileStore::new(dir.path().join("store"));
    store
        .save(&entry("https://as1", "https://mcp.test/mcp", "a"))
        .await
        .unwrap();
    let file = only_file(store.dir());
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let err = store
        .remove("https://as1", "https://mcp.test/mcp")
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Store(_)), "{err:?}");
}

#[test]
fn a_store_lock_shows_nothing_of_what_it_holds() {
    let lock = StoreLock::new(String::from("a locked file"));
    assert_eq!(format!("{lock:?}"), "StoreLock");
}
