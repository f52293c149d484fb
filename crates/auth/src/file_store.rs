//! [`FileStore`]: a [`TokenStore`] in a directory, one JSON file per issuer
//! and resource, written atomically and readable by the owner only.

use std::io::Write;
use std::path::{Path, PathBuf};

use futures_util::future::BoxFuture;

use crate::error::{AuthError, BoxError};
use crate::store::{StoreLock, StoredAuth, TokenStore};

#[cfg(windows)]
mod owner_only;

/// Keeps authorizations in files under a directory, so a program does not
/// ask the user to authorize again on every start.
///
/// - one file per issuer and resource, named from hashes of both (no URL
///   ends up in a file name);
/// - each write goes to a temporary file in the same directory, is flushed
///   to disk, then renamed over the old one, so a crash leaves the old entry
///   or the new one, never half of one;
/// - files are created `0600` and the directory `0700` (on Unix); on
///   Windows each file, and the directory when this creates it, gets a
///   protected access list granting the user alone (the SID of the
///   process's token) full access, nothing inherited from the folders
///   above, set on a file before anything is written to it;
/// - expiries are absolute (seconds since the epoch);
/// - a file that cannot be read or parsed is skipped with a warning, never
///   deleted;
/// - a refresh holds a lock file beside the entry (`.<entry>.lock`, an
///   advisory OS file lock), so processes sharing the directory take turns
///   and reuse each other's refresh instead of spending a rotated refresh
///   token.
///
/// The files hold refresh tokens: put the directory somewhere only the user
/// can read (e.g. under the user's config or state directory).
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// A store in `dir`, created on the first save.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn digest_hex(s: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, s.as_bytes());
    d.as_ref()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn prefix(resource: &str) -> String {
    format!("{}-", digest_hex(resource))
}

fn file_name(issuer: &str, resource: &str) -> String {
    format!("{}{}.json", prefix(resource), digest_hex(issuer))
}

fn store_error(e: impl Into<BoxError>) -> AuthError {
    AuthError::Store(e.into())
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, AuthError> + Send + 'static,
) -> Result<T, AuthError> {
    tokio::task::spawn_blocking(f).await.map_err(store_error)?
}

#[cfg(not(windows))]
fn create_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// On Windows the store's own folder is made private when this creates it
/// (as `0700` is on Unix); a folder that already exists keeps its access
/// list, since it may be one the user chose and shares on purpose.
#[cfg(windows)]
fn create_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => owner_only::restrict_folder(dir).inspect_err(|_| {
            // Not left behind open to others: the next save tries again.
            let _ = std::fs::remove_dir(dir);
        }),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    create_dir(dir)?;
    let mut nonce = [0u8; 8];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut nonce)
        .map_err(|_| std::io::Error::other("no randomness"))?;
    let tmp = dir.join(format!(
        ".{name}.{}.tmp",
        nonce.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let result = (|| {
        let mut file = options.open(&tmp)?;
        // Private before the tokens are written, whatever folder it is in.
        #[cfg(windows)]
        owner_only::restrict_file(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, dir.join(name))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

impl TokenStore for FileStore {
    fn load<'a>(&'a self, resource: &'a str) -> BoxFuture<'a, Result<Vec<StoredAuth>, AuthError>> {
        let dir = self.dir.clone();
        let prefix = prefix(resource);
        let resource = resource.to_owned();
        Box::pin(blocking(move || {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(store_error(e)),
            };
            let mut found = Vec::new();
            for entry in entries {
                let entry = entry.map_err(store_error)?;
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                if !name.starts_with(&prefix) || !name.ends_with(".json") {
                    continue;
                }
                let parsed = std::fs::read(entry.path())
                    .map_err(BoxError::from)
                    .and_then(|b| serde_json::from_slice::<StoredAuth>(&b).map_err(BoxError::from));
                match parsed {
                    Ok(auth) if auth.resource == resource => found.push(auth),
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(file = %entry.path().display(), error = %e, "token store entry skipped")
                    }
                }
            }
            Ok(found)
        }))
    }

    fn save<'a>(&'a self, entry: &'a StoredAuth) -> BoxFuture<'a, Result<(), AuthError>> {
        let dir = self.dir.clone();
        let name = file_name(&entry.issuer, &entry.resource);
        let bytes = serde_json::to_vec_pretty(entry);
        Box::pin(async move {
            let bytes = bytes.map_err(store_error)?;
            blocking(move || write_atomically(&dir, &name, &bytes).map_err(store_error)).await
        })
    }

    fn remove<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        let path = self.dir.join(file_name(issuer, resource));
        Box::pin(blocking(move || match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_error(e)),
        }))
    }

    fn lock<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoreLock>, AuthError>> {
        self.lock_entry(issuer, resource)
    }
}

/// How long a refresh waits for another process's lock on the same entry
/// (its refresh is one bounded token request, so this is generous).
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Takes the lock file of an entry: `<entry>.lock` beside it, locked with
/// the operating system's advisory file lock (`flock` on Unix,
/// `LockFileEx` on Windows), polled until [`LOCK_WAIT`] so the wait is
/// bounded. The lock goes with the open file: dropped, or the process
/// gone, it is released.
fn lock_entry_file(dir: &Path, name: &str) -> Result<std::fs::File, AuthError> {
    create_dir(dir).map_err(store_error)?;
    let path = dir.join(format!(".{name}.lock"));
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(&path).map_err(store_error)?;
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(store_error(format!(
                    "another process held the lock of {} for over {} s",
                    path.display(),
                    LOCK_WAIT.as_secs()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(store_error(e)),
        }
    }
}

impl FileStore {
    /// The [`TokenStore::lock`] of a file store (see [`lock_entry_file`]).
    fn lock_entry(
        &self,
        issuer: &str,
        resource: &str,
    ) -> BoxFuture<'static, Result<Option<StoreLock>, AuthError>> {
        let dir = self.dir.clone();
        let name = file_name(issuer, resource);
        Box::pin(async move {
            let file = blocking(move || lock_entry_file(&dir, &name)).await?;
            Ok(Some(StoreLock::new(file)))
        })
    }
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    fn entry() -> StoredAuth {
        StoredAuth::new("https://issuer.example", "https://mcp.example/mcp")
    }

    /// Checks that the access list `sddl` grants the user and nobody else.
    /// Wine keeps no access lists: it maps them to Unix permission bits and
    /// reads them back from those, always adding SYSTEM and never the
    /// protected flag; the rest is checked under Wine too.
    fn assert_user_only(sddl: &str) {
        let user = owner_only::current_user_sid().expect("the user's SID");
        let wine = std::env::var_os("WINELOADER").is_some();
        let granted: Vec<&str> = sddl
            .split('(')
            .skip(1)
            .map(|ace| {
                assert!(ace.starts_with("A;"), "only allow entries: {sddl}");
                ace.trim_end_matches(')').rsplit(';').next().unwrap_or("")
            })
            .collect();
        assert!(
            granted.contains(&user.as_str()),
            "the user is granted: {sddl}"
        );
        for sid in granted {
            assert!(
                sid == user || (wine && sid == "SY"),
                "{sid} is granted too: {sddl}"
            );
        }
        if !wine {
            assert!(sddl.starts_with("D:P"), "nothing inherited: {sddl}");
        }
    }

    #[tokio::test]
    async fn a_saved_token_and_the_folder_made_for_it_are_open_to_the_user_only() {
        let scratch = tempfile::tempdir().expect("a temporary folder");
        let dir = scratch.path().join("tokens");
        let store = FileStore::new(&dir);
        store.save(&entry()).await.expect("saved");
        assert_user_only(&owner_only::dacl_of(&dir).expect("the folder's list"));
        let file = dir.join(file_name(
            "https://issuer.example",
            "https://mcp.example/mcp",
        ));
        assert_user_only(&owner_only::dacl_of(&file).expect("the file's list"));
        let loaded = store.load("https://mcp.example/mcp").await.expect("loads");
        assert_eq!(loaded.len(), 1, "the user still reads it");
    }

    #[tokio::test]
    async fn a_token_saved_in_an_existing_folder_is_private_and_the_folder_is_left_alone() {
        let scratch = tempfile::tempdir().expect("a temporary folder");
        let before = owner_only::dacl_of(scratch.path()).expect("the folder's list");
        let store = FileStore::new(scratch.path());
        store.save(&entry()).await.expect("saved");
        assert_eq!(
            owner_only::dacl_of(scratch.path()).expect("the list"),
            before
        );
        let file = scratch.path().join(file_name(
            "https://issuer.example",
            "https://mcp.example/mcp",
        ));
        assert_user_only(&owner_only::dacl_of(&file).expect("the file's list"));
    }
}
