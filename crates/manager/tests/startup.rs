//! Starting a fleet: failure isolation, required servers, start-up
//! timeouts, lazy and manual servers, retrying a failed server.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use mcpwire_client::ErrorKind;
use mcpwire_manager::{
    ConnectPolicy, Error, Event, Health, Manager, SavedCatalogue, ServerCatalogue, ServerSkip,
    ServerSpec,
};
use serde_json::json;

#[tokio::test]
async fn one_unreachable_server_among_five_is_reported_and_the_others_serve() {
    let mut builder = Manager::builder();
    let mut peers = Vec::new();
    for name in ["a", "b", "c", "d"] {
        let (connector, p) = memory();
        builder = builder.server(ServerSpec::with_connector(name, connector));
        peers.push((name, p));
    }
    let (refused, attempts) = refused();
    let manager = builder
        .server(ServerSpec::with_connector("down", refused))
        .build()
        .unwrap();
    let mut events = manager.events();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut seen_by = Vec::new();
    for (name, p) in &mut peers {
        seen_by.push(serve(p.next().await, name, &["echo"]));
    }

    let report = within(connect).await.unwrap().unwrap();
    assert_eq!(report.connected, ["a", "b", "c", "d"]);
    assert_eq!(report.failed.len(), 1);
    let (name, why) = &report.failed[0];
    assert_eq!(name, "down");
    assert!(matches!(why, Error::Connect { .. }), "{why:?}");
    assert_eq!(why.client_error().unwrap().kind(), ErrorKind::Connect);
    assert!(!report.all_connected());
    // Tried once: a server that never came up is not reconnected.
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert!(matches!(manager.health("down"), Some(Health::Failed(_))));
    assert!(manager.health("a").unwrap().is_ready());

    let names: Vec<String> = manager
        .tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a__echo", "b__echo", "c__echo", "d__echo"]);
    let result = within(manager.call_tool("c__echo", &json!({})))
        .await
        .unwrap();
    assert_eq!(result.text(), "c:echo");
    // A call to the failed server says so, without trying it again.
    let err = within(manager.call_tool("down__echo", &json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::ServerFailed { ref server, .. } if server == "down"),
        "{err:?}"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 1);

    let failed_event = drain(&mut events).into_iter().any(|e| {
        matches!(e, Event::HealthChanged { ref server, health: Health::Failed(_) } if server == "down")
    });
    assert!(failed_event, "the failure is an event");
    manager.close().await;
}

#[tokio::test]
async fn a_required_server_that_fails_fails_connect_all_and_closes_the_fleet() {
    let (ok, mut ok_peers) = memory();
    let (refused, _) = refused();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("ok", ok))
        .server(ServerSpec::with_connector("must", refused).required(true))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = ok_peers.next().await;
    up(&mut server, &["echo"]).await;
    let err = within(connect).await.unwrap().unwrap_err();
    match &err {
        Error::RequiredServerFailed { server, source } => {
            assert_eq!(server, "must");
            assert!(matches!(**source, Error::Connect { .. }), "{source:?}");
        }
        other => panic!("{other:?}"),
    }
    // The server that did start was closed with the rest.
    server.expect_closed().await;
    assert!(matches!(manager.health("ok"), Some(Health::Disconnected)));
    let err = manager.call_tool("ok__echo", &json!({})).await.unwrap_err();
    assert!(matches!(err, Error::Closed), "{err:?}");
}

#[tokio::test]
async fn a_server_that_does_not_start_in_time_is_stopped_and_reported() {
    let (slow, mut peers) = memory();
    let manager = Manager::builder()
        .server(
            ServerSpec::with_connector("slow", slow).startup_timeout(Duration::from_millis(200)),
        )
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut server = peers.next().await;
    // It never answers `initialize`.
    server.expect_request("initialize").await;
    let report = within(connect).await.unwrap().unwrap();
    let (_, why) = &report.failed[0];
    assert!(
        matches!(why, Error::StartupTimeout { timeout, .. } if *timeout == Duration::from_millis(200)),
        "{why:?}"
    );
    server.expect_closed().await;
    manager.close().await;
}

#[tokio::test]
async fn a_lazy_server_starts_on_its_first_call_advertising_its_saved_tools_meanwhile() {
    let (eager, mut eager_peers) = memory();
    let (lazy, mut lazy_peers) = memory();
    let (unsaved, mut unsaved_peers) = memory();
    let mut saved = SavedCatalogue::new();
    let mut lists = ServerCatalogue::default();
    lists.tools = serde_json::from_value(tool_list(&["search"])["tools"].clone()).unwrap();
    saved.servers.insert("lazy".into(), lists);
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("eager", eager))
        .server(ServerSpec::with_connector("lazy", lazy).connect(ConnectPolicy::Lazy))
        .server(ServerSpec::with_connector("unsaved", unsaved).connect(ConnectPolicy::Lazy))
        .saved_catalogue(saved)
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let mut eager_seen = serve(eager_peers.next().await, "eager", &["echo"]);
    let report = within(connect).await.unwrap().unwrap();
    assert_eq!(report.connected, ["eager"]);
    assert_eq!(report.deferred, ["lazy", "unsaved"]);
    assert!(
        !lazy_peers.opened() && !unsaved_peers.opened(),
        "nothing started"
    );
    assert!(matches!(manager.health("lazy"), Some(Health::Disconnected)));
    // Its saved tools are advertised before it runs.
    let names: Vec<String> = manager
        .tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["eager__echo", "lazy__search"]);

    // The first call routed to it starts it, then goes through.
    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("lazy__search", &json!({"q": "x"})).await }
    });
    let mut server = lazy_peers.next().await;
    up(&mut server, &["search", "fetch"]).await;
    let req = server.expect_request("tools/call").await;
    server.respond(&req.id, text("found")).await;
    assert_eq!(within(call).await.unwrap().unwrap().text(), "found");
    assert!(manager.health("lazy").unwrap().is_ready());
    // Its live list replaced the saved one.
    assert!(manager.route("lazy__fetch").is_ok());

    // A lazy server with nothing saved is reached by its prefix.
    let call = tokio::spawn({
        let m = manager.clone();
        async move { m.call_tool("unsaved__go", &json!({})).await }
    });
    let mut seen = serve(unsaved_peers.next().await, "unsaved", &["go"]);
    assert_eq!(within(call).await.unwrap().unwrap().text(), "unsaved:go");
    assert_eq!(within(seen.recv()).await.unwrap(), "tools/list");

    // What every server offers can be saved for the next start.
    let saved = manager.save_catalogue();
    assert_eq!(
        saved.servers.keys().collect::<Vec<_>>(),
        ["eager", "lazy", "unsaved"]
    );
    assert_eq!(saved.servers["lazy"].tools.len(), 2);
    assert_eq!(
        SavedCatalogue::from_json(&saved.to_json()).unwrap(),
        saved,
        "round trip"
    );
    assert_eq!(common::seen(&mut eager_seen), ["tools/list"]);
    manager.close().await;
}

#[tokio::test]
async fn a_manual_server_waits_for_connect() {
    let (manual, mut peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("m", manual).connect(ConnectPolicy::Manual))
        .build()
        .unwrap();
    let report = within(manager.connect_all()).await.unwrap();
    assert_eq!(report.deferred, ["m"]);
    let err = manager.call_tool("m__echo", &json!({})).await.unwrap_err();
    assert!(matches!(err, Error::NotConnected { .. }), "{err:?}");
    assert!(!peers.opened());

    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect("m").await }
    });
    let _seen = serve(peers.next().await, "m", &["echo"]);
    within(connect).await.unwrap().unwrap();
    let result = within(manager.call_tool("m__echo", &json!({})))
        .await
        .unwrap();
    assert_eq!(result.text(), "m:echo");
    manager.close().await;
}

#[tokio::test]
async fn a_failed_server_is_retried_only_on_request() {
    let (refused, attempts) = refused();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("flaky", refused))
        .build()
        .unwrap();
    let report = within(manager.connect_all()).await.unwrap();
    assert_eq!(report.failed.len(), 1);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);

    let err = manager.call_tool("flaky__x", &json!({})).await.unwrap_err();
    assert!(matches!(err, Error::ServerFailed { .. }), "{err:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 1, "no retry unasked");

    let err = manager
        .call_tool("flaky__x", &json!({}))
        .retry_failed()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 2, "one retry, on request");

    let report = manager.retry_failed().await;
    assert_eq!(report.failed.len(), 1);
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    manager.close().await;
}

#[tokio::test]
async fn configuration_names_that_cannot_prefix_tools_are_refused_in_code() {
    let (c, _) = memory();
    let err = Manager::builder()
        .server(ServerSpec::with_connector("my server", c.clone()))
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::InvalidServerName { .. }), "{err:?}");
    let err = Manager::builder()
        .server(ServerSpec::with_connector("a", c.clone()))
        .server(ServerSpec::with_connector("a", c.clone()))
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::DuplicateServer { .. }), "{err:?}");
    // A rename fixes it; a disabled server is skipped and reported.
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("my server", c.clone()))
        .server(ServerSpec::with_connector("off", c).enabled(false))
        .rename("my server", "mine")
        .build()
        .unwrap();
    assert_eq!(manager.servers(), ["mine"]);
    assert!(matches!(
        manager.skipped_servers().as_slice(),
        [(name, ServerSkip::Disabled)] if name == "off"
    ));
}
