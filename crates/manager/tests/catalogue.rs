//! The aggregated catalogue: collisions under each policy, the sanitizer,
//! filters on lists and calls, `list_changed` debounced into one refresh of
//! one server.

mod common;

use std::time::Duration;

use common::*;
use mcpwire_manager::{
    Collisions, Error, Event, ItemKind, ItemSkip, Manager, ManagerBuilder, Naming, Sanitizer,
    ServerSpec,
};
use serde_json::json;

/// Two servers, `a` offering `a_tools` and `b` offering `b_tools`, started.
async fn two(
    builder: ManagerBuilder,
    a_tools: &[&str],
    b_tools: &[&str],
) -> (
    Manager,
    tokio::sync::mpsc::UnboundedReceiver<String>,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let manager = builder
        .server(ServerSpec::with_connector("a", a))
        .server(ServerSpec::with_connector("b", b))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let a_seen = serve(a_peers.next().await, "a", a_tools);
    let b_seen = serve(b_peers.next().await, "b", b_tools);
    let report = within(connect).await.unwrap().unwrap();
    assert_eq!(report.connected, ["a", "b"]);
    (manager, a_seen, b_seen)
}

fn names(manager: &Manager) -> Vec<String> {
    manager
        .tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[tokio::test]
async fn prefixed_names_never_collide() {
    let (manager, _, _) = two(Manager::builder(), &["search", "a_only"], &["search"]).await;
    assert_eq!(names(&manager), ["a__search", "a__a_only", "b__search"]);
    let tools = manager.tools().unwrap();
    assert_eq!(tools[2].server, "b");
    assert_eq!(tools[2].tool.name, "search");
    assert_eq!(tools[2].public_tool().name, "b__search");
    let r = within(manager.call_tool("b__search", &json!({})))
        .await
        .unwrap();
    assert_eq!(r.text(), "b:search");
    manager.close().await;
}

#[tokio::test]
async fn a_collision_is_a_typed_error_by_default() {
    let builder = Manager::builder().naming(Naming::Bare);
    let (manager, mut a_seen, mut b_seen) =
        two(builder, &["search", "a_only"], &["search", "b_only"]).await;
    let err = manager.tools().unwrap_err();
    match &err {
        Error::Collision { name, servers } => {
            assert_eq!(name, "search");
            assert_eq!(servers, &["a", "b"]);
        }
        other => panic!("{other:?}"),
    }
    let err = manager.call_tool("search", &json!({})).await.unwrap_err();
    assert!(matches!(err, Error::Collision { .. }), "{err:?}");
    // The names nobody else claims route.
    let r = within(manager.call_tool("b_only", &json!({})))
        .await
        .unwrap();
    assert_eq!(r.text(), "b:b_only");
    assert!(
        !seen(&mut a_seen)
            .iter()
            .any(|m| m.starts_with("tools/call"))
    );
    assert_eq!(seen(&mut b_seen), ["tools/list", "tools/call b_only"]);
    manager.close().await;
}

#[tokio::test]
async fn first_wins_keeps_the_first_server_and_reports_the_other() {
    let builder = Manager::builder()
        .naming(Naming::Bare)
        .collisions(Collisions::FirstWins);
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let manager = builder
        .server(ServerSpec::with_connector("a", a))
        .server(ServerSpec::with_connector("b", b))
        .build()
        .unwrap();
    let mut events = manager.events();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    // `b` comes up first; `a` still wins, being declared first.
    let mut b_server = b_peers.next().await;
    up(&mut b_server, &["search", "b_only"]).await;
    let _a = serve(a_peers.next().await, "a", &["search"]);
    within(connect).await.unwrap().unwrap();
    assert_eq!(names(&manager), ["search", "b_only"]);
    assert_eq!(
        manager.route("search").unwrap(),
        ("a".into(), "search".into())
    );
    let skipped: Vec<Event> = drain(&mut events)
        .into_iter()
        .filter(|e| matches!(e, Event::Skipped { .. }))
        .collect();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    let Event::Skipped {
        server,
        kind,
        name,
        reason,
    } = &skipped[0]
    else {
        unreachable!()
    };
    assert_eq!(
        (server.as_str(), *kind, name.as_str()),
        ("b", ItemKind::Tool, "search")
    );
    assert_eq!(
        reason,
        &ItemSkip::Collision {
            name: "search".into(),
            kept_by: Some("a".into())
        }
    );
    manager.close().await;
}

#[tokio::test]
async fn prefix_on_conflict_prefixes_every_claimant_only() {
    let builder = Manager::builder()
        .naming(Naming::Bare)
        .collisions(Collisions::PrefixOnConflict);
    let (manager, _, _) = two(builder, &["search", "a_only"], &["search", "b_only"]).await;
    assert_eq!(
        names(&manager),
        ["a__search", "a_only", "b__search", "b_only"]
    );
    let r = within(manager.call_tool("b__search", &json!({})))
        .await
        .unwrap();
    assert_eq!(r.text(), "b:search");
    manager.close().await;
}

#[tokio::test]
async fn the_sanitizer_fits_names_to_a_hosts_limits() {
    let long = "x".repeat(70);
    let builder = Manager::builder().sanitizer(Sanitizer::new().max_len(32));
    let (manager, _, mut b_seen) = two(builder, &["read.file"], &[long.as_str()]).await;
    let names = names(&manager);
    assert_eq!(names[0], "a__read_file");
    assert_eq!(names[1].len(), 32);
    assert!(names[1].starts_with("b__xxxx"));
    // The public name routes to the tool's own name.
    let r = within(manager.call_tool(&names[1], &json!({})))
        .await
        .unwrap();
    assert_eq!(r.text(), format!("b:{long}"));
    assert_eq!(seen(&mut b_seen)[1], format!("tools/call {long}"));
    manager.close().await;
}

#[tokio::test]
async fn filters_are_enforced_on_calls_as_well_as_lists() {
    let (c, mut peers) = memory();
    let manager = Manager::builder()
        .server(
            ServerSpec::with_connector("fs", c)
                .include_tools(["read", "delete"])
                .exclude_tools(["delete"]),
        )
        .build()
        .unwrap();
    let mut events = manager.events();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut fs_seen = serve(peers.next().await, "fs", &["read", "write", "delete"]);
    within(connect).await.unwrap().unwrap();
    assert_eq!(names(&manager), ["fs__read"]);
    for tool in ["fs__write", "fs__delete"] {
        let err = manager.call_tool(tool, &json!({})).await.unwrap_err();
        assert!(
            matches!(err, Error::Filtered { ref server, .. } if server == "fs"),
            "{err:?}"
        );
    }
    let r = within(manager.call_tool("fs__read", &json!({})))
        .await
        .unwrap();
    assert_eq!(r.text(), "fs:read");
    assert_eq!(
        seen(&mut fs_seen),
        ["tools/list", "tools/call read"],
        "nothing else sent"
    );
    let filtered: Vec<String> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            Event::Skipped {
                name,
                reason: ItemSkip::Filtered,
                ..
            } => Some(name),
            _ => None,
        })
        .collect();
    assert_eq!(filtered, ["write", "delete"]);
    manager.close().await;
}

#[tokio::test]
async fn list_changed_is_debounced_and_refreshes_only_that_server() {
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a).exclude_tools(["secret"]))
        .server(ServerSpec::with_connector("b", b))
        .debounce(Duration::from_millis(100))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = a_peers.next().await;
    up(&mut server, &["one"]).await;
    let mut b_seen = serve(b_peers.next().await, "b", &["echo"]);
    within(connect).await.unwrap().unwrap();
    assert_eq!(names(&manager), ["a__one", "b__echo"]);
    let mut events = manager.events();

    // A burst of notifications: one listing.
    for _ in 0..5 {
        server
            .notify("notifications/tools/list_changed", json!({}))
            .await;
    }
    let list = server.expect_request("tools/list").await;
    server
        .respond(&list.id, tool_list(&["one", "two", "secret"]))
        .await;
    let quiet = tokio::time::timeout(Duration::from_millis(400), server.recv()).await;
    assert!(quiet.is_err(), "a second request: {quiet:?}");

    let changed: Vec<Vec<String>> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            Event::CatalogueChanged { servers } => Some(servers),
            _ => None,
        })
        .collect();
    assert_eq!(changed, [vec!["a".to_owned()]], "one event, for a alone");
    // The filter applies to the new list too.
    assert_eq!(names(&manager), ["a__one", "a__two", "b__echo"]);
    assert_eq!(seen(&mut b_seen), ["tools/list"], "b was not listed again");
    manager.close().await;
}

#[tokio::test]
async fn a_tool_for_its_app_view_alone_stays_out_of_the_models_catalogue() {
    let (c, mut peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("w", c))
        .build()
        .unwrap();
    let mut events = manager.events();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let view = "ui://w/dashboard";
    let listing = json!({"tools": [
        {"name": "forecast", "inputSchema": {"type": "object"},
         "_meta": {"ui": {"resourceUri": view, "visibility": ["model", "app"]}}},
        {"name": "refresh", "inputSchema": {"type": "object"},
         "_meta": {"ui": {"resourceUri": view, "visibility": ["app"]}}},
        {"name": "plain", "inputSchema": {"type": "object"}}
    ]});
    let mut w_seen = serve_listing(peers.next().await, "w", listing);
    within(connect).await.unwrap().unwrap();
    assert_eq!(names(&manager), ["w__forecast", "w__plain"]);

    let err = manager
        .call_tool("w__refresh", &json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::AppOnly { ref server, ref tool } if server == "w" && tool == "refresh"),
        "{err:?}"
    );
    assert_eq!(err.server(), Some("w"));
    let skipped: Vec<String> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            Event::Skipped {
                name,
                reason: ItemSkip::AppOnly,
                ..
            } => Some(name),
            _ => None,
        })
        .collect();
    assert_eq!(skipped, ["refresh"]);

    // The host calls it for the view through the server's own client.
    let client = manager.client("w").unwrap();
    let r = within(client.call_tool("refresh", &json!({})))
        .await
        .unwrap();
    assert_eq!(r.text(), "w:refresh");
    assert_eq!(
        seen(&mut w_seen),
        ["tools/list", "tools/call refresh"],
        "the manager sent nothing for the refused call"
    );
    manager.close().await;
}
