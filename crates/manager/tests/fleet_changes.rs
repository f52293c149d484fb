//! A fleet that changes at run time: servers added, removed and replaced on
//! a running manager, and reloads that apply only the difference (servers
//! left alone keep their client and calls under way), with their events and
//! one catalogue change each.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcpwire_client::Error as ClientError;
use mcpwire_config::{Format, LoadOptions, ResolvedServer, ResolvedTransport, Resolver};
use mcpwire_manager::{
    ConnectPolicy, Connector, Error, Event, Health, Manager, ServerChange, ServerSkip, ServerSpec,
};
use serde_json::json;
use tokio::sync::mpsc;

/// Connects every server of `manager`, each served by `serve` with the
/// tools beside its peers.
async fn connect(manager: &Manager, servers: Vec<(&mut Peers, &str, &[&str])>) -> Vec<Seen> {
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut seen = Vec::new();
    for (peers, label, tools) in servers {
        seen.push(Seen(serve(peers.next().await, label, tools)));
    }
    let report = within(connect).await.unwrap().unwrap();
    assert!(report.all_connected(), "{report:?}");
    seen
}

/// What one served server received.
struct Seen(mpsc::UnboundedReceiver<String>);

impl Seen {
    fn now(&mut self) -> Vec<String> {
        seen(&mut self.0)
    }

    /// Waits for the client to close the connection (the server's loop
    /// ends, dropping its sender).
    async fn closed(&mut self) {
        while within(self.0.recv()).await.is_some() {}
    }
}

fn tool_names(manager: &Manager) -> Vec<String> {
    manager
        .tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// The fleet changes among `events`, in order.
fn changes(events: &[Event]) -> Vec<(String, ServerChange)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ServerChanged { server, change } => Some((server.clone(), *change)),
            _ => None,
        })
        .collect()
}

/// The servers of each `CatalogueChanged` among `events`, sorted.
fn catalogue_changes(events: &[Event]) -> Vec<Vec<String>> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::CatalogueChanged { servers } => {
                let mut servers = servers.clone();
                servers.sort();
                Some(servers)
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_added_server_joins_the_catalogue_and_an_eager_one_starts() {
    let (a, mut a_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .build()
        .unwrap();
    let _a = connect(&manager, vec![(&mut a_peers, "a", &["echo"])]).await;
    let mut events = manager.events();

    let (b, mut b_peers) = memory();
    let add = tokio::spawn({
        let m = manager.clone();
        async move { m.add(ServerSpec::with_connector("b", b)).await }
    });
    let _b = serve(b_peers.next().await, "b", &["echo"]);
    let report = within(add).await.unwrap().unwrap();
    assert_eq!(report.added, ["b"]);
    assert!(report.removed.is_empty() && report.replaced.is_empty());
    assert_eq!(report.connect.connected, ["b"]);
    assert_eq!(manager.servers(), ["a", "b"]);
    assert_eq!(tool_names(&manager), ["a__echo", "b__echo"]);
    assert!(manager.health("b").unwrap().is_ready());
    let answer = manager.call_tool("b__echo", &json!({})).await.unwrap();
    assert_eq!(answer.text(), "b:echo");
    let events = drain(&mut events);
    assert_eq!(changes(&events), [("b".to_owned(), ServerChange::Added)]);
    let ready = events.iter().any(
        |e| matches!(e, Event::HealthChanged { server, health: Health::Ready } if server == "b"),
    );
    assert!(ready, "{events:?}");

    // A name in the fleet, and one that cannot prefix tools, are refused.
    let (c, mut c_peers) = memory();
    let err = manager
        .add(ServerSpec::with_connector("a", c.clone()))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::DuplicateServer { ref name } if name == "a"),
        "{err:?}"
    );
    let err = manager
        .add(ServerSpec::with_connector("bad name", c))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidServerName { .. }), "{err:?}");
    // A disabled server is left out, and said so.
    let (off, _) = memory();
    let report = manager
        .add(ServerSpec::with_connector("off", off).enabled(false))
        .await
        .unwrap();
    assert!(report.is_unchanged() && report.added.is_empty());
    assert!(
        matches!(&report.connect.skipped[..], [(name, ServerSkip::Disabled)] if name == "off"),
        "{report:?}"
    );
    assert!(!c_peers.opened(), "a refused server is never connected");
    assert_eq!(manager.servers(), ["a", "b"]);
    manager.close().await;
}

#[tokio::test]
async fn a_lazy_server_added_is_not_started_until_called() {
    let manager = Manager::builder().build().unwrap();
    let (a, mut a_peers) = memory();
    let report = manager
        .add(ServerSpec::with_connector("a", a).connect(ConnectPolicy::Lazy))
        .await
        .unwrap();
    assert_eq!(report.connect.deferred, ["a"]);
    assert!(report.connect.connected.is_empty());
    assert!(!a_peers.opened());
    assert!(matches!(manager.health("a"), Some(Health::Disconnected)));

    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("a__echo", &json!({})).await }
    });
    let _a = serve(a_peers.next().await, "a", &["echo"]);
    assert_eq!(within(call).await.unwrap().unwrap().text(), "a:echo");
    manager.close().await;
}

#[tokio::test]
async fn a_removed_server_leaves_the_catalogue_and_its_client_is_closed() {
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .server(ServerSpec::with_connector("b", b))
        .build()
        .unwrap();
    let mut seen = connect(
        &manager,
        vec![
            (&mut a_peers, "a", &["echo"]),
            (&mut b_peers, "b", &["echo", "read"]),
        ],
    )
    .await;
    let mut health = manager.watch_health("b").unwrap();
    let mut events = manager.events();

    let report = within(manager.remove("b")).await.unwrap();
    assert_eq!(report.removed, ["b"]);
    assert!(report.cut_short.is_empty());
    seen[1].closed().await;
    assert_eq!(manager.servers(), ["a"]);
    assert_eq!(tool_names(&manager), ["a__echo"]);
    assert!(manager.health("b").is_none() && manager.client("b").is_none());
    // Whoever watched its health sees it disconnected; no event says so
    // under its name (it could be taken for a new server of that name).
    within(health.wait_for(|h| matches!(h, Health::Disconnected)))
        .await
        .unwrap();
    let events = drain(&mut events);
    assert_eq!(changes(&events), [("b".to_owned(), ServerChange::Removed)]);
    assert_eq!(catalogue_changes(&events), [["b"]]);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::HealthChanged { server, .. } if server == "b")),
        "{events:?}"
    );

    // Its tools are gone: a call fails locally, with a typed error.
    let err = manager.call_tool("b__read", &json!({})).await.unwrap_err();
    assert!(matches!(err, Error::UnknownTool { .. }), "{err:?}");
    let err = manager.remove("b").await.unwrap_err();
    assert!(
        matches!(err, Error::UnknownServer { ref name } if name == "b"),
        "{err:?}"
    );
    // The other server did not notice.
    assert_eq!(seen[0].now(), ["tools/list"]);
    manager.close().await;
}

#[tokio::test]
async fn a_removal_waits_for_the_calls_under_way_and_takes_no_new_one() {
    let (a, mut a_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .drain_timeout(LONG)
        .build()
        .unwrap();
    let connect_all = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = a_peers.next().await;
    up(&mut server, &["slow"]).await;
    within(connect_all).await.unwrap().unwrap();

    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("a__slow", &json!({})).await }
    });
    let request = server.expect_request("tools/call").await;
    let mut version = manager.watch_catalogue();
    version.borrow_and_update();
    let remove = tokio::spawn({
        let m = manager.clone();
        async move { m.remove("a").await }
    });
    // Out of the catalogue at once, while the call is still under way.
    within(version.changed()).await.unwrap();
    assert!(tool_names(&manager).is_empty());
    let err = manager.call_tool("a__slow", &json!({})).await.unwrap_err();
    assert!(matches!(err, Error::UnknownTool { .. }), "{err:?}");
    assert!(!remove.is_finished(), "the removal waits for the call");

    server.respond(&request.id, text("done")).await;
    assert_eq!(within(call).await.unwrap().unwrap().text(), "done");
    let report = within(remove).await.unwrap().unwrap();
    assert!(report.cut_short.is_empty(), "{report:?}");
    server.expect_closed().await;
    manager.close().await;
}

#[tokio::test]
async fn a_call_still_under_way_at_the_drain_timeout_is_cut_short() {
    let (a, mut a_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a))
        .drain_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let connect_all = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = a_peers.next().await;
    up(&mut server, &["stuck"]).await;
    within(connect_all).await.unwrap().unwrap();
    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("a__stuck", &json!({})).await }
    });
    server.expect_request("tools/call").await;

    let report = within(manager.remove("a")).await.unwrap();
    assert_eq!(report.cut_short, ["a"]);
    let err = within(call).await.unwrap().unwrap_err();
    assert!(matches!(err, Error::Request { .. }), "{err:?}");
    server.expect_closed().await;
    manager.close().await;
}

#[tokio::test]
async fn replacing_with_an_equal_spec_changes_nothing_and_a_changed_one_reconnects() {
    let (a, mut a_peers) = memory();
    let spec = ServerSpec::with_connector("a", a.clone()).request_timeout(LONG);
    let manager = Manager::builder().server(spec.clone()).build().unwrap();
    let mut seen = connect(&manager, vec![(&mut a_peers, "a", &["echo", "write"])]).await;
    let version = *manager.watch_catalogue().borrow();
    let mut events = manager.events();

    let report = within(manager.replace(spec.clone())).await.unwrap();
    assert!(report.is_unchanged(), "{report:?}");
    assert_eq!(report.unchanged, ["a"]);
    assert!(!a_peers.opened(), "no new connection");
    assert_eq!(*manager.watch_catalogue().borrow(), version);
    assert!(drain(&mut events).is_empty());

    let old = manager.client("a").unwrap();
    let replace = tokio::spawn({
        let m = manager.clone();
        let spec = spec.exclude_tools(["write"]);
        async move { m.replace(spec).await }
    });
    let _new = serve(a_peers.next().await, "a2", &["echo", "write"]);
    let report = within(replace).await.unwrap().unwrap();
    assert_eq!(report.replaced, ["a"]);
    assert_eq!(report.connect.connected, ["a"]);
    seen[0].closed().await;
    assert!(old.state().is_closed());
    assert_eq!(tool_names(&manager), ["a__echo"]);
    let answer = manager.call_tool("a__echo", &json!({})).await.unwrap();
    assert_eq!(answer.text(), "a2:echo", "calls go to the new client");
    let events = drain(&mut events);
    assert_eq!(changes(&events), [("a".to_owned(), ServerChange::Replaced)]);

    let (x, _) = memory();
    let err = manager
        .replace(ServerSpec::with_connector("x", x))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::UnknownServer { .. }), "{err:?}");
    manager.close().await;
}

#[tokio::test]
async fn a_replaced_server_keeps_its_tools_advertised_until_the_new_one_lists() {
    let (a, mut a_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a.clone()))
        .build()
        .unwrap();
    let mut seen = connect(&manager, vec![(&mut a_peers, "a", &["echo"])]).await;

    let lazy = ServerSpec::with_connector("a", a.clone()).connect(ConnectPolicy::Lazy);
    let report = within(manager.replace(lazy)).await.unwrap();
    assert_eq!(report.replaced, ["a"]);
    assert_eq!(report.connect.deferred, ["a"]);
    seen[0].closed().await;
    assert!(!a_peers.opened(), "a lazy server waits for a call");
    assert_eq!(tool_names(&manager), ["a__echo"], "still advertised");
    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("a__echo", &json!({})).await }
    });
    let _new = serve(a_peers.next().await, "a2", &["echo"]);
    assert_eq!(within(call).await.unwrap().unwrap().text(), "a2:echo");

    // A manual server advertises nothing it has not listed itself.
    let manual = ServerSpec::with_connector("a", a).connect(ConnectPolicy::Manual);
    let report = within(manager.replace(manual)).await.unwrap();
    assert_eq!(report.replaced, ["a"]);
    assert!(tool_names(&manager).is_empty());
    manager.close().await;
}

#[tokio::test]
async fn each_setting_of_a_spec_decides_whether_it_is_replaced() {
    let (a, _peers) = memory();
    let (other, _) = memory();
    let base = || ServerSpec::with_connector("a", a.clone()).connect(ConnectPolicy::Manual);
    let manager = Manager::builder().server(base()).build().unwrap();
    let changed = [
        (
            "connector",
            ServerSpec::with_connector("a", other).connect(ConnectPolicy::Manual),
        ),
        ("connect policy", base().connect(ConnectPolicy::Lazy)),
        ("required", base().required(true)),
        ("request timeout", base().request_timeout(LONG)),
        ("include list", base().include_tools(["x"])),
        ("trust", base().trust(true)),
        ("concurrency cap", base().max_concurrent(2)),
        ("description", base().description("another")),
        (
            "pin policy",
            base().pin_policy(mcpwire_manager::PinPolicy::Block),
        ),
        (
            "client config",
            base().client_config(mcpwire_client::ClientConfig::new()),
        ),
    ];
    for (what, spec) in changed {
        let report = manager.replace(spec).await.unwrap();
        assert_eq!(report.replaced, ["a"], "a changed {what} replaces");
        // Back to the base, for the next.
        let report = manager.replace(base()).await.unwrap();
        assert_eq!(report.replaced, ["a"], "{what}");
    }
    let report = manager.replace(base()).await.unwrap();
    assert_eq!(report.unchanged, ["a"]);
    // A spec shows its pin policy, never what its key was made of.
    let shown = format!(
        "{:?}",
        base()
            .pin_policy(mcpwire_manager::PinPolicy::Warn)
            .connection_key("sk-secret")
    );
    assert!(
        shown.contains("Warn") && !shown.contains("sk-secret"),
        "{shown}"
    );
    // Equal keys stand for the same server, whatever the connectors.
    let (one, _) = memory();
    let (two, _) = memory();
    let keyed = |c: Connector, key: &str| {
        ServerSpec::with_connector("a", c)
            .connect(ConnectPolicy::Manual)
            .connection_key(key)
    };
    assert_eq!(
        manager.replace(keyed(one, "k")).await.unwrap().replaced,
        ["a"]
    );
    assert_eq!(
        manager
            .replace(keyed(two.clone(), "k"))
            .await
            .unwrap()
            .unchanged,
        ["a"]
    );
    assert_eq!(
        manager.replace(keyed(two, "k2")).await.unwrap().replaced,
        ["a"]
    );
    manager.close().await;
}

#[tokio::test]
async fn a_reload_applies_only_the_difference_and_spares_calls_under_way() {
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let (c, mut c_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("a", a.clone()))
        .server(ServerSpec::with_connector("b", b.clone()))
        .server(ServerSpec::with_connector("c", c))
        .build()
        .unwrap();
    let connect_all = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut a_server = a_peers.next().await;
    up(&mut a_server, &["slow"]).await;
    let mut b_seen = Seen(serve(b_peers.next().await, "b", &["echo"]));
    let mut c_seen = Seen(serve(c_peers.next().await, "c", &["echo"]));
    within(connect_all).await.unwrap().unwrap();
    let a_client = manager.client("a").unwrap();

    // A call to `a` is under way across the reload.
    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("a__slow", &json!({})).await }
    });
    let request = a_server.expect_request("tools/call").await;
    let mut events = manager.events();

    let (d, mut d_peers) = memory();
    let reload = tokio::spawn({
        let m = manager.clone();
        let specs = vec![
            ServerSpec::with_connector("d", d).connect(ConnectPolicy::Lazy),
            ServerSpec::with_connector("a", a),
            ServerSpec::with_connector("b", b).exclude_tools(["nothing"]),
        ];
        async move { m.reload(specs).await }
    });
    let _b2 = serve(b_peers.next().await, "b2", &["echo"]);
    let report = within(reload).await.unwrap().unwrap();
    assert_eq!(report.added, ["d"]);
    assert_eq!(report.removed, ["c"]);
    assert_eq!(report.replaced, ["b"]);
    assert_eq!(report.unchanged, ["a"]);
    assert_eq!(report.connect.connected, ["b"]);
    assert_eq!(report.connect.deferred, ["d"]);
    assert_eq!(manager.servers(), ["d", "a", "b"], "the new order");
    let health: Vec<String> = manager.health_all().into_iter().map(|(n, _)| n).collect();
    assert_eq!(health, ["d", "a", "b"]);

    // `a` kept its client, and its call went on.
    assert!(a_client.state().is_ready(), "its client was not closed");
    a_server.respond(&request.id, text("still here")).await;
    assert_eq!(within(call).await.unwrap().unwrap().text(), "still here");
    assert!(!a_peers.opened());
    c_seen.closed().await;
    b_seen.closed().await;
    assert!(!d_peers.opened(), "a lazy server waits for its first call");

    let events = drain(&mut events);
    let mut changed = changes(&events);
    changed.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        changed,
        [
            ("b".to_owned(), ServerChange::Replaced),
            ("c".to_owned(), ServerChange::Removed),
            ("d".to_owned(), ServerChange::Added),
        ]
    );
    // One catalogue change for the reload, then the new `b`'s listing.
    assert_eq!(catalogue_changes(&events), [vec!["b", "c", "d"], vec!["b"]]);
    assert_eq!(tool_names(&manager), ["a__slow", "b__echo"]);
    assert_eq!(
        manager.route("b__echo").unwrap(),
        ("b".to_owned(), "echo".to_owned())
    );
    let saved = manager.save_catalogue();
    let kept: Vec<&String> = saved.servers.keys().collect();
    assert_eq!(kept, ["a", "b"], "what the fleet offers now");
    manager.close().await;
}

#[tokio::test]
async fn a_reload_bumps_the_catalogue_once_and_an_equal_one_not_at_all() {
    let (a, _a_peers) = memory();
    let (b, _b_peers) = memory();
    let manual = |name: &str, c: &Connector| {
        ServerSpec::with_connector(name, c.clone()).connect(ConnectPolicy::Manual)
    };
    let manager = Manager::builder()
        .server(manual("a", &a))
        .server(manual("b", &b))
        .build()
        .unwrap();
    let mut version = manager.watch_catalogue();
    version.borrow_and_update();
    let before = *version.borrow();
    let (c, _c_peers) = memory();
    let (d, _d_peers) = memory();
    let report = manager
        .reload(vec![manual("c", &c), manual("d", &d)])
        .await
        .unwrap();
    assert_eq!(report.removed, ["a", "b"]);
    assert_eq!(report.added, ["c", "d"]);
    assert_eq!(*version.borrow_and_update(), before + 1);

    let report = manager
        .reload(vec![manual("c", &c), manual("d", &d)])
        .await
        .unwrap();
    assert!(report.is_unchanged());
    assert_eq!(report.unchanged, ["c", "d"]);
    assert!(!version.has_changed().unwrap());

    // A reload that cannot be applied changes nothing.
    let err = manager
        .reload(vec![manual("c", &c), manual("c", &d)])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::DuplicateServer { .. }), "{err:?}");
    assert_eq!(manager.servers(), ["c", "d"]);
    assert!(!version.has_changed().unwrap());
    manager.close().await;
    let err = manager.reload(Vec::new()).await.unwrap_err();
    assert!(matches!(err, Error::Closed), "{err:?}");
}

/// Connectors for configuration entries: each stdio entry's command names
/// the in-memory connector to use; every entry made is recorded in `made`.
fn by_command(
    connectors: HashMap<&'static str, Connector>,
    made: Arc<Mutex<Vec<String>>>,
) -> impl Fn(&ResolvedServer) -> Result<Connector, ClientError> + Send + Sync {
    move |resolved: &ResolvedServer| {
        made.lock().unwrap().push(resolved.name.clone());
        let ResolvedTransport::Stdio(stdio) = &resolved.transport else {
            panic!("stdio entries only")
        };
        Ok(connectors[stdio.command.as_str()].clone())
    }
}

#[tokio::test]
async fn a_configuration_reload_keeps_the_servers_whose_entries_did_not_change() {
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let made = Arc::new(Mutex::new(Vec::new()));
    let connectors = Arc::new(by_command(
        HashMap::from([("a", a), ("b", b)]),
        made.clone(),
    ));
    let config = |servers: serde_json::Value| {
        LoadOptions::new()
            .parse_str(
                &json!({ "mcpServers": servers }).to_string(),
                Format::Json,
                "mcp.json",
            )
            .unwrap()
    };
    let env = HashMap::<String, String>::new();
    let resolver = Resolver::new(&env);
    let first = config(json!({
        "one": {"command": "a", "env": {"TOKEN": "t-1"}},
        "two": {"command": "b"},
        "off": {"command": "b", "disabled": true},
    }));
    let manager = Manager::builder()
        .config(&first, &resolver, &*connectors)
        .unwrap()
        .build()
        .unwrap();
    let mut seen = connect(
        &manager,
        vec![(&mut a_peers, "one", &["x"]), (&mut b_peers, "two", &["y"])],
    )
    .await;

    // The same entries, read again: new connectors, the same servers.
    let report = within(manager.reload_config(&first, &resolver, &*connectors))
        .await
        .unwrap();
    assert_eq!(report.unchanged, ["one", "two"]);
    assert!(report.is_unchanged());
    assert_eq!(made.lock().unwrap().len(), 4, "each entry was made again");
    assert!(!a_peers.opened() && !b_peers.opened());

    // A changed variable (a secret, say) replaces its server only.
    let second = config(json!({
        "one": {"command": "a", "env": {"TOKEN": "t-2"}},
        "two": {"command": "b"},
        "off": {"command": "b", "disabled": true},
        "bad name": {"command": "b"},
        "typo": {"command": "b", "env": {"T": "${MCPWIRE_TEST_SURELY_UNSET}"}},
    }));
    let reload = tokio::spawn({
        let m = manager.clone();
        let connectors = connectors.clone();
        async move {
            let env = HashMap::<String, String>::new();
            // The future holds no resolver: it can be spawned.
            let reload = m.reload_config(&second, &Resolver::new(&env), &*connectors);
            reload.await
        }
    });
    let _one = serve(a_peers.next().await, "one2", &["x"]);
    let report = within(reload).await.unwrap().unwrap();
    assert_eq!(report.replaced, ["one"]);
    assert_eq!(report.unchanged, ["two"]);
    // The disabled entry, one that does not resolve, and one whose name
    // cannot prefix tools: from a file, each is left out rather than
    // failing the reload.
    let skipped: Vec<&str> = report
        .connect
        .skipped
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(skipped, ["off", "typo", "bad name"]);
    assert!(matches!(
        report.connect.skipped[1].1,
        ServerSkip::Unusable(_)
    ));
    assert!(matches!(
        report.connect.skipped[2].1,
        ServerSkip::InvalidName(_)
    ));
    seen[0].closed().await;
    assert_eq!(
        seen[1].now(),
        ["tools/list"],
        "`two` saw only its first listing"
    );
    let answer = manager.call_tool("one__x", &json!({})).await.unwrap();
    assert_eq!(answer.text(), "one2:x");

    // A required entry that cannot be used fails the reload, which then
    // changes nothing.
    let third = config(json!({
        "one": {"command": "a", "env": {"TOKEN": "${MCPWIRE_TEST_SURELY_UNSET}"}, "required": true},
    }));
    let err = within(manager.reload_config(&third, &resolver, &*connectors))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Resolve { ref server, .. } if server == "one"),
        "{err:?}"
    );
    assert_eq!(manager.servers(), ["one", "two"]);
    manager.close().await;
}
