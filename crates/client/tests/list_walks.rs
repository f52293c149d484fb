//! How a walk of every page of a list (`list_all_*`) treats the pages the
//! response cache kept, in the `initialize` era (a server that announces
//! its list changes, so each page is kept until it says one changed):
//! a cursor that came from a kept page and that the server refuses means
//! the kept pages are stale, so they are dropped and the walk starts again
//! from the server; a cursor the server itself just gave, refused, is an
//! error to report, not a reason to list again.
//!
//! "Nothing was sent" is checked by the order of what the server sees: the
//! call under test is followed by a `ping`, which must be the next request
//! to arrive.

mod common;

use common::{connected, within};
use mcpwire_client::{Client, ClientConfig, Error, ErrorKind};
use mcpwire_codec::jsonrpc::Request;
use mcpwire_test_support::FakeServer;
use serde_json::{Map, Value, json};

/// The four paginated lists.
#[derive(Debug, Clone, Copy)]
enum List {
    Tools,
    Prompts,
    Resources,
    Templates,
}

impl List {
    const ALL: [Self; 4] = [Self::Tools, Self::Prompts, Self::Resources, Self::Templates];

    fn method(self) -> &'static str {
        match self {
            Self::Tools => "tools/list",
            Self::Prompts => "prompts/list",
            Self::Resources => "resources/list",
            Self::Templates => "resources/templates/list",
        }
    }

    /// A page of this list whose items are named `names`, followed by the
    /// page at `next` if there is one.
    fn page(self, names: &[&str], next: Option<&str>) -> Value {
        let items: Vec<Value> = names
            .iter()
            .map(|n| match self {
                Self::Tools => json!({"name": n, "inputSchema": {"type": "object"}}),
                Self::Prompts => json!({"name": n}),
                Self::Resources => json!({"uri": format!("demo://{n}"), "name": n}),
                Self::Templates => json!({"uriTemplate": format!("demo://{n}/{{x}}"), "name": n}),
            })
            .collect();
        let field = match self {
            Self::Tools => "tools",
            Self::Prompts => "prompts",
            Self::Resources => "resources",
            Self::Templates => "resourceTemplates",
        };
        let mut page = Map::new();
        page.insert(field.into(), Value::Array(items));
        if let Some(c) = next {
            page.insert("nextCursor".into(), json!(c));
        }
        Value::Object(page)
    }

    /// Asks for the page at `cursor` (the first without one).
    async fn one_page(self, client: &Client, cursor: Option<&str>) -> Result<(), Error> {
        let cursor = cursor.map(str::to_owned);
        match self {
            Self::Tools => client.list_tools(cursor).await.map(drop),
            Self::Prompts => client.list_prompts(cursor).await.map(drop),
            Self::Resources => client.list_resources(cursor).await.map(drop),
            Self::Templates => client.list_resource_templates(cursor).await.map(drop),
        }
    }

    /// Walks every page; the names of the items.
    async fn walk(self, client: &Client) -> Result<Vec<String>, Error> {
        Ok(match self {
            Self::Tools => names(client.list_all_tools().await?, |t| t.name),
            Self::Prompts => names(client.list_all_prompts().await?, |p| p.name),
            Self::Resources => names(client.list_all_resources().await?, |r| r.name),
            Self::Templates => names(client.list_all_resource_templates().await?, |t| t.name),
        })
    }
}

fn names<T>(items: Vec<T>, name: impl Fn(T) -> String) -> Vec<String> {
    items.into_iter().map(name).collect()
}

/// The cursor a list request asked for (`null` for the first page).
fn cursor_of(req: &Request) -> Value {
    let params: Value = req
        .params
        .as_ref()
        .map(|p| p.deserialize().expect("params are JSON"))
        .unwrap_or(Value::Null);
    params["cursor"].clone()
}

/// Expects the next request to be `list`'s page at `cursor` and answers it
/// with `answer`.
async fn serve(server: &mut FakeServer, list: List, cursor: Value, answer: Value) {
    let req = server.expect_request(list.method()).await;
    assert_eq!(cursor_of(&req), cursor, "{}", list.method());
    server.respond(&req.id, answer).await;
}

/// Expects the next request to be `list`'s page at `cursor`, and refuses
/// it the way a server refuses a cursor it no longer knows.
async fn refuse(server: &mut FakeServer, list: List, cursor: &str) {
    let req = server.expect_request(list.method()).await;
    assert_eq!(cursor_of(&req), cursor, "{}", list.method());
    server
        .respond_error(&req.id, -32602, "Invalid cursor")
        .await;
}

/// Expects the `ping` that follows the call under test, and answers it.
async fn answer_ping(server: &mut FakeServer) {
    let ping = server.expect_request("ping").await;
    server.respond(&ping.id, json!({})).await;
}

/// Walks `list`, then pings: the ping marks the end of what the walk sent.
fn walk_then_ping(
    client: &Client,
    list: List,
) -> tokio::task::JoinHandle<Result<Vec<String>, Error>> {
    let client = client.clone();
    tokio::spawn(async move {
        let walked = list.walk(&client).await;
        client.ping().await.expect("ping answered");
        walked
    })
}

/// A cached first page whose cursor the server refuses shows the list
/// changed: every page of that list the cache kept is dropped, not only
/// the one the walk read, so a later page asked for by its cursor is asked
/// of the server again. Checked for each list, since each has its own
/// notification topic in the cache (the resource templates share theirs
/// with the resources).
#[tokio::test]
async fn a_refused_cached_cursor_drops_every_kept_page_of_its_list() {
    for list in List::ALL {
        let (client, mut server) = connected(ClientConfig::new()).await;
        // The first page and a later one ("c2") are kept; "c1" is not.
        let c = client.clone();
        let task = tokio::spawn(async move { list.one_page(&c, None).await });
        serve(
            &mut server,
            list,
            Value::Null,
            list.page(&["a"], Some("c1")),
        )
        .await;
        within(task).await.unwrap().unwrap();
        let c = client.clone();
        let task = tokio::spawn(async move { list.one_page(&c, Some("c2")).await });
        serve(&mut server, list, json!("c2"), list.page(&["c"], None)).await;
        within(task).await.unwrap().unwrap();

        // The walk reads the first page from the cache and asks for "c1",
        // which the server no longer takes: it lists again from the start.
        let task = walk_then_ping(&client, list);
        refuse(&mut server, list, "c1").await;
        serve(&mut server, list, Value::Null, list.page(&["x"], None)).await;
        answer_ping(&mut server).await;
        assert_eq!(within(task).await.unwrap().unwrap(), ["x"], "{list:?}");

        // The page at "c2" went with the others: it is asked again, before
        // the ping that follows it.
        let c = client.clone();
        let task = tokio::spawn(async move {
            let page = list.one_page(&c, Some("c2")).await;
            c.ping().await.expect("ping answered");
            page
        });
        serve(&mut server, list, json!("c2"), list.page(&["y"], None)).await;
        answer_ping(&mut server).await;
        within(task).await.unwrap().unwrap();
        client.close().await;
    }
}

/// A walk whose pages all came from the server, refused a cursor the
/// server gave it a moment before, fails with the server's error: the
/// cache is not to blame, and listing again would only repeat the refusal.
#[tokio::test]
async fn a_cursor_refused_in_a_walk_of_fresh_pages_fails_without_listing_again() {
    let list = List::Prompts;
    let (client, mut server) = connected(ClientConfig::new()).await;
    let task = walk_then_ping(&client, list);
    serve(
        &mut server,
        list,
        Value::Null,
        list.page(&["a"], Some("c1")),
    )
    .await;
    refuse(&mut server, list, "c1").await;
    // No second listing: the next request is the ping.
    answer_ping(&mut server).await;
    let err = within(task).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(err.code().map(|c| c.0), Some(-32602));
    client.close().await;
}

/// A walk that read its first page from the cache and its second from the
/// server still rests on the cached page: a refused cursor further on may
/// come from that stale start, so the walk lists again from the server.
#[tokio::test]
async fn a_walk_of_cached_then_fresh_pages_lists_again_when_a_later_cursor_is_refused() {
    let list = List::Prompts;
    let (client, mut server) = connected(ClientConfig::new()).await;
    let c = client.clone();
    let task = tokio::spawn(async move { list.one_page(&c, None).await });
    serve(
        &mut server,
        list,
        Value::Null,
        list.page(&["a"], Some("c1")),
    )
    .await;
    within(task).await.unwrap().unwrap();

    let task = walk_then_ping(&client, list);
    // The first page comes from the cache; "c1" is asked of the server.
    serve(
        &mut server,
        list,
        json!("c1"),
        list.page(&["b"], Some("c2")),
    )
    .await;
    refuse(&mut server, list, "c2").await;
    serve(&mut server, list, Value::Null, list.page(&["x"], None)).await;
    answer_ping(&mut server).await;
    assert_eq!(within(task).await.unwrap().unwrap(), ["x"]);
    client.close().await;
}

/// A last page that ends with an empty cursor (some servers send `""`
/// rather than leaving `nextCursor` out) ends the walk: nothing more is
/// asked for, for each list.
#[tokio::test]
async fn an_empty_cursor_ends_a_walk() {
    for list in List::ALL {
        let (client, mut server) = connected(ClientConfig::new()).await;
        let task = walk_then_ping(&client, list);
        serve(
            &mut server,
            list,
            Value::Null,
            list.page(&["a"], Some("c1")),
        )
        .await;
        serve(&mut server, list, json!("c1"), list.page(&["b"], Some(""))).await;
        answer_ping(&mut server).await;
        assert_eq!(within(task).await.unwrap().unwrap(), ["a", "b"], "{list:?}");
        client.close().await;
    }
}
