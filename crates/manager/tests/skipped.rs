//! `Manager::skipped_servers` follows the fleet's changes: a reload makes
//! it the servers its specs leave out, `add` and `replace` take the server
//! they bring in off it (or put a disabled one on), a failed change leaves
//! it as it was.

mod common;

use common::*;
use mcpwire_manager::{ConnectPolicy, Connector, Event, Manager, ServerSkip, ServerSpec};

/// A server started by hand only (no change in these tests starts one).
fn manual(connector: &Connector, name: &str, enabled: bool) -> ServerSpec {
    ServerSpec::with_connector(name, connector.clone())
        .connect(ConnectPolicy::Manual)
        .enabled(enabled)
}

/// A fleet of `a`, and `b` disabled.
fn a_and_disabled_b(connector: &Connector) -> Manager {
    Manager::builder()
        .server(manual(connector, "a", true))
        .server(manual(connector, "b", false))
        .build()
        .unwrap()
}

fn skipped(manager: &Manager) -> Vec<String> {
    let mut names: Vec<String> = manager
        .skipped_servers()
        .into_iter()
        .map(|(name, why)| {
            assert!(matches!(why, ServerSkip::Disabled), "{why:?}");
            name
        })
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn the_skipped_servers_follow_reloads_adds_and_replaces() {
    let (connector, _peers) = memory();
    let spec = |name: &str, enabled: bool| manual(&connector, name, enabled);
    let manager = a_and_disabled_b(&connector);
    assert_eq!(skipped(&manager), ["b"]);

    // `b` fixed, `a` newly disabled.
    let report = within(manager.reload(vec![spec("a", false), spec("b", true)]))
        .await
        .unwrap();
    assert_eq!(
        (report.added.as_slice(), report.removed.as_slice()),
        (&["b".to_owned()][..], &["a".to_owned()][..])
    );
    assert_eq!(skipped(&manager), ["a"]);
    assert_eq!(manager.servers(), ["b"]);

    // A disabled server added is left out; an enabled one of a skipped
    // name comes off the list.
    within(manager.add(spec("c", false))).await.unwrap();
    assert_eq!(skipped(&manager), ["a", "c"]);
    within(manager.add(spec("a", true))).await.unwrap();
    assert_eq!(skipped(&manager), ["c"]);

    // Replaced by a disabled spec: removed, and left out.
    within(manager.replace(spec("b", false))).await.unwrap();
    assert_eq!(skipped(&manager), ["b", "c"]);
    assert_eq!(manager.servers(), ["a"]);

    // A reload that fails changes nothing, the list included.
    let failed =
        within(manager.reload(vec![spec("x", false), spec("y", true), spec("y", true)])).await;
    assert!(failed.is_err());
    assert_eq!(skipped(&manager), ["b", "c"]);

    // A reload's list is the whole list: none left out, none listed.
    within(manager.reload(vec![spec("a", true)])).await.unwrap();
    assert!(
        skipped(&manager).is_empty(),
        "{:?}",
        manager.skipped_servers()
    );
    manager.close().await;
}

#[tokio::test]
async fn the_first_connect_all_publishes_each_skipped_server_once() {
    let (connector, _peers) = memory();
    let manager = a_and_disabled_b(&connector);
    // Taken after the build: the event comes with the first connect_all.
    let mut events = manager.events();
    let report = within(manager.connect_all()).await.unwrap();
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    within(manager.connect_all()).await.unwrap();
    let skipped: Vec<String> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            Event::ServerSkipped { server, reason } => {
                assert!(matches!(reason, ServerSkip::Disabled), "{reason:?}");
                Some(server)
            }
            _ => None,
        })
        .collect();
    assert_eq!(skipped, ["b"]);
    manager.close().await;
}
