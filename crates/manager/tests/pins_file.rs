//! One pin file shared by several processes: updates under its lock keep
//! each other's pins, and pins kept in memory are merged into the file
//! rather than written over it.

use std::path::Path;
use std::sync::{Arc, Barrier};

use mcpwire_client::types::Tool;
use mcpwire_manager::{ItemKind, Pins};
use serde_json::json;

fn tool(name: &str, says: &str) -> Tool {
    serde_json::from_value(json!({"name": name, "description": says,
        "inputSchema": {"type": "object"}}))
    .expect("a tool")
}

/// The names of `server`'s pinned tools in the file at `path`.
fn pinned(path: &Path, server: &str) -> Vec<String> {
    let pins = Pins::load(path).expect("the pins load");
    pins.pinned(server, ItemKind::Tool)
        .into_iter()
        .map(|(name, _)| name.to_owned())
        .collect()
}

#[test]
fn two_writers_updating_one_file_at_once_keep_each_others_pins() {
    const EACH: usize = 40;
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = Arc::new(dir.path().join("pins.json"));
    let start = Arc::new(Barrier::new(2));
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|server| {
            let (path, start) = (path.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for i in 0..EACH {
                    // Each update pins one more tool of this writer's
                    // server: a lost update loses a tool.
                    let tools = [tool(&format!("t{i:02}"), "Does.")];
                    Pins::update(&path, |pins| {
                        let mut all: Vec<Tool> = pins
                            .pinned(server, ItemKind::Tool)
                            .into_iter()
                            .map(|(name, _)| tool(name, "Does."))
                            .collect();
                        all.extend(tools.iter().cloned());
                        pins.review(server, &all, &[]);
                    })
                    .expect("the update is written");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("the writer ends");
    }
    assert_eq!(pinned(&path, "a").len(), EACH);
    assert_eq!(pinned(&path, "b").len(), EACH);
}

#[test]
fn pins_kept_in_memory_merge_into_the_file_as_it_is_now() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("pins.json");
    let mut base = Pins::new();
    base.review("a", &[tool("old", "Old."), tool("kept", "Kept.")], &[]);
    base.review("gone", &[tool("g", "G.")], &[]);
    base.review("later", &[tool("l", "L.")], &[]);
    base.save(&path).expect("saved");

    // Another process pins server `b`, a tool of `a` and one of `later`,
    // and approves a new `kept`, meanwhile.
    Pins::update(&path, |pins| {
        pins.review("b", &[tool("u", "U.")], &[]);
        pins.review("later", &[tool("l", "L."), tool("m", "M.")], &[]);
        let mut a = vec![tool("old", "Old."), tool("kept", "Kept, v2.")];
        a.push(tool("theirs", "Theirs."));
        pins.approve("a", &a, &[]);
    })
    .expect("updated");

    // This one approves a new `old`, pins `new`, and forgets servers
    // `gone` and `later`.
    let mut ours = base.clone();
    ours.approve("a", &[tool("old", "Old, v2."), tool("kept", "Kept.")], &[]);
    ours.review("a", &[tool("new", "New.")], &[]);
    assert!(ours.forget("gone"));
    assert!(ours.forget("later"));
    Pins::update(&path, |file| file.merge(&base, &ours)).expect("merged");

    let file = Pins::load(&path).expect("loaded");
    assert_eq!(pinned(&path, "a"), ["kept", "new", "old", "theirs"]);
    assert_eq!(pinned(&path, "b"), ["u"]);
    // What this one forgot is gone; what the other pinned since stays.
    assert_eq!(pinned(&path, "later"), ["m"]);
    assert_eq!(
        file.servers().collect::<Vec<_>>(),
        ["a", "b", "later"],
        "`gone` forgotten"
    );
    // `old` is approved as this process saw it: v2 reviews clean.
    let mut again = file.clone();
    let review = again.review("a", &[tool("old", "Old, v2.")], &[]);
    assert!(!review.has_changes(), "{review:?}");
    // `kept`, which this one did not change, is as the other approved it.
    let review = again.review("a", &[tool("kept", "Kept, v2.")], &[]);
    assert!(!review.has_changes(), "{review:?}");
    // An update that changes nothing does not write the file.
    let written = std::fs::metadata(&path).and_then(|m| m.modified()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    Pins::update(&path, |_| ()).expect("read");
    assert_eq!(
        std::fs::metadata(&path).and_then(|m| m.modified()).unwrap(),
        written
    );
}

#[test]
fn a_pin_file_whose_lock_cannot_be_taken_is_still_read_but_not_written() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("pins.json");
    let mut pins = Pins::new();
    pins.review("a", &[tool("t", "Does.")], &[]);
    // Saved elsewhere and moved here: no lock file beside it yet.
    let elsewhere = dir.path().join("elsewhere.json");
    pins.save(&elsewhere).expect("saved");
    std::fs::rename(&elsewhere, &path).expect("moved");
    // The lock's place is taken by a folder: it cannot be opened (as a
    // pin file in a folder this process may not write, even for root).
    std::fs::create_dir(dir.path().join("pins.json.lock")).expect("a folder");
    let review = Pins::update(&path, |file| file.review("a", &[tool("t", "Does.")], &[]))
        .expect("nothing to write: read without the lock");
    assert!(review.findings.is_empty(), "{review:?}");
    let err = Pins::update(&path, |file| file.review("a", &[tool("u", "New.")], &[]))
        .expect_err("a new pin needs the lock");
    assert!(std::error::Error::source(&err).is_some(), "{err:?}");
    assert_eq!(pinned(&path, "a"), ["t"], "the file is as it was");
}
