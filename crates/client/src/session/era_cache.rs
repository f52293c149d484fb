//! Which era each server speaks, remembered for the life of the process
//! (and, if asked, in a file), so the `server/discover` probe costs once
//! per server, not once per connection.
//!
//! A server is known by its transport: the command line of a stdio server,
//! the URL of an HTTP one. Transports that name no server (an in-memory
//! pair, a byte stream) are never cached.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use mcpwire_transport::TransportInfo;

use crate::base::lock::Mutex;
use crate::base::version::Era;

fn table() -> &'static Mutex<HashMap<String, Era>> {
    static TABLE: OnceLock<Mutex<HashMap<String, Era>>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

/// The cache key of the server behind `info`, if it names one.
pub(crate) fn key(info: &TransportInfo) -> Option<String> {
    match info.kind {
        "stdio" => Some(format!("stdio {}", info.peer)),
        "http" | "streamable-http" | "sse" => Some(format!("http {}", info.peer)),
        _ => None,
    }
}

/// What is known of `key`: this process's memory first, then `file`.
pub(crate) fn lookup(key: &str, file: Option<&Path>) -> Option<Era> {
    if let Some(era) = table().lock().get(key).copied() {
        return Some(era);
    }
    let era = read_file(file?).remove(key)?;
    table().lock().insert(key.to_owned(), era);
    Some(era)
}

/// Remembers that `key` speaks `era` (and writes it to `file`, if given; a
/// file that cannot be written is logged and otherwise ignored).
pub(crate) fn remember(key: &str, era: Era, file: Option<&Path>) {
    table().lock().insert(key.to_owned(), era);
    if let Some(file) = file {
        let mut all = read_file(file);
        all.insert(key.to_owned(), era);
        write_file(file, all);
    }
}

/// Forgets `key` (the cached era turned out wrong), in this process and in
/// `file`, so no later process starts from the stale entry either.
pub(crate) fn forget(key: &str, file: Option<&Path>) {
    table().lock().remove(key);
    if let Some(file) = file {
        let mut all = read_file(file);
        if all.remove(key).is_some() {
            write_file(file, all);
        }
    }
}

/// Replaces `file` with `all`: written beside it and renamed over it, so a
/// process reading it at the same time sees the old table or the new one,
/// never half of one.
fn write_file(file: &Path, all: HashMap<String, Era>) {
    let map: serde_json::Map<String, serde_json::Value> = all
        .into_iter()
        .map(|(k, e)| (k, serde_json::Value::from(e.as_str())))
        .collect();
    let text = serde_json::Value::Object(map).to_string();
    let mut partial = file.as_os_str().to_owned();
    partial.push(format!(".{}.tmp", std::process::id()));
    let partial = std::path::PathBuf::from(partial);
    let written = std::fs::write(&partial, text).and_then(|()| std::fs::rename(&partial, file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        tracing::warn!(file = %file.display(), error = %e, "could not persist the era cache");
    }
}

fn read_file(file: &Path) -> HashMap<String, Era> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return HashMap::new();
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(&text) else {
        tracing::warn!(file = %file.display(), "ignoring an era cache file that is not a JSON object");
        return HashMap::new();
    };
    map.into_iter()
        .filter_map(|(k, v)| match v.as_str() {
            Some("modern") => Some((k, Era::Modern)),
            Some("legacy") => Some((k, Era::Legacy)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_named_servers_have_a_key() {
        assert_eq!(
            key(&TransportInfo::new("stdio", "srv --x")).as_deref(),
            Some("stdio srv --x")
        );
        // Every HTTP flavour of one URL is one server.
        for kind in ["http", "streamable-http", "sse"] {
            assert_eq!(
                key(&TransportInfo::new(kind, "http://h/mcp")).as_deref(),
                Some("http http://h/mcp"),
                "{kind}"
            );
        }
        assert_eq!(key(&TransportInfo::new("memory", "in-memory peer")), None);
    }

    /// Without a file, the process's memory alone remembers a server: the
    /// second connection to it skips the probe only because the table is
    /// one for the whole process.
    #[test]
    fn an_era_is_remembered_in_memory_without_a_file() {
        assert_eq!(lookup("stdio memory-only-test", None), None);
        remember("stdio memory-only-test", Era::Legacy, None);
        assert_eq!(lookup("stdio memory-only-test", None), Some(Era::Legacy));
        remember("stdio memory-only-test", Era::Modern, None);
        assert_eq!(lookup("stdio memory-only-test", None), Some(Era::Modern));
        forget("stdio memory-only-test", None);
        assert_eq!(lookup("stdio memory-only-test", None), None);
    }

    #[test]
    fn a_persisted_era_survives_the_process_table() {
        let dir = std::env::temp_dir().join(format!("mcpwire-era-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("eras.json");
        remember("stdio persisted-test", Era::Modern, Some(&file));
        remember("stdio persisted-other", Era::Legacy, Some(&file));
        // Forgotten in memory only: the file still knows it.
        table().lock().remove("stdio persisted-test");
        assert_eq!(lookup("stdio persisted-test", None), None);
        assert_eq!(
            lookup("stdio persisted-test", Some(&file)),
            Some(Era::Modern)
        );
        // Forgotten for good: in memory and in the file, the other entry
        // kept.
        forget("stdio persisted-test", Some(&file));
        assert_eq!(lookup("stdio persisted-test", Some(&file)), None);
        table().lock().remove("stdio persisted-other");
        assert_eq!(
            lookup("stdio persisted-other", Some(&file)),
            Some(Era::Legacy)
        );
        std::fs::write(&file, "not json").unwrap();
        table().lock().remove("stdio persisted-other");
        assert_eq!(lookup("stdio persisted-other", Some(&file)), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
