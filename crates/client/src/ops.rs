//! The requests a [`Call`] runs, one type each. Code never
//! needs to name them: the methods of [`Client`] return them inside a
//! `Call`, and awaiting the call runs them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use mcpwire_codec::jsonrpc::Payload;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::watch;

use crate::base::error::{Error, ErrorKind};
use crate::base::headers::param_headers;
use crate::base::options::{CacheMode, Replay, RequestOptions};
use crate::base::stamp::Route;
use crate::base::version::Era;
use crate::cache::schema::ToolEntry;
use crate::cache::store::{Topic, cacheable};
use crate::cache::view::Lifetime;
use crate::client::call::{Call, CallFuture, Operation, sealed};
use crate::client::handle::Client;
use crate::requests::engine::EncodedRequest;
use crate::session::conn::Conn;
use crate::session::listen;
use crate::session::rounds::Rounds;
use crate::types::{
    Arguments, CallToolResult, CompleteResult, CompletionReference, EmptyResult, GetPromptResult,
    ListToolsResult, LoggingLevel, Meta, Page, PaginatedParams, ReadResourceResult,
    ResourceUpdated, Tool,
};

/// The most pages a walker follows before it gives up (a server whose
/// cursors never end).
const MAX_PAGES: usize = 10_000;

/// How a request of `client` is sent until its final answer (see
/// [`crate::session::rounds`]).
fn rounds<'a>(client: &'a Client, conn: &'a Conn, route: Option<&'a Route>) -> Rounds<'a> {
    Rounds {
        conn,
        dispatcher: &client.shared.dispatcher,
        modern: client.era() == Some(Era::Modern),
        max_rounds: client.shared.config.max_input_rounds,
        route,
    }
}

/// Sends `method` (its standard headers named by `route`) and returns its
/// final answer.
async fn send<P: Serialize + ?Sized>(
    client: &Client,
    method: Cow<'static, str>,
    params: Option<&P>,
    opts: &RequestOptions,
    replay: Replay,
    route: Option<&Route>,
) -> Result<Payload, Error> {
    let conn = client.conn()?;
    let request = conn.engine.encode_request(&method, params, opts, route)?;
    rounds(client, &conn, route)
        .call(request, method, opts, replay)
        .await
}

/// Sends `method` and parses its result as `R`.
async fn typed<P: Serialize + ?Sized, R: DeserializeOwned>(
    client: &Client,
    method: &'static str,
    params: Option<&P>,
    opts: &RequestOptions,
    replay: Replay,
) -> Result<R, Error> {
    let payload = send(client, Cow::Borrowed(method), params, opts, replay, None).await?;
    payload.deserialize().map_err(|e| Error::decode(method, e))
}

/// [`typed`] for a request whose `Mcp-Name` header is `name`.
async fn named<P: Serialize + ?Sized, R: DeserializeOwned>(
    client: &Client,
    method: &'static str,
    name: &str,
    params: &P,
    opts: &RequestOptions,
) -> Result<R, Error> {
    let route = Route {
        name: Some(name.to_owned()),
        params: Vec::new(),
    };
    let payload = send(
        client,
        Cow::Borrowed(method),
        Some(params),
        opts,
        Replay::Allow,
        Some(&route),
    )
    .await?;
    payload.deserialize().map_err(|e| Error::decode(method, e))
}

/// One page of the list `R`.
async fn page<R: Page>(
    client: &Client,
    cursor: Option<String>,
    opts: &RequestOptions,
) -> Result<R, Error> {
    page_cached(client, cursor, opts).await.map(|(p, _)| p)
}

/// One page of the list `R`, from the cache or the server (per cursor: see
/// [`cached`]), and whether it came from the cache.
async fn page_cached<R: Page>(
    client: &Client,
    cursor: Option<String>,
    opts: &RequestOptions,
) -> Result<(R, bool), Error> {
    let params = PaginatedParams {
        cursor,
        ..Default::default()
    };
    // Listing twice is harmless: pages are always replayed.
    let (payload, hit) = cached(client, R::METHOD, params.cursor.as_deref(), opts, || {
        send_counted(client, R::METHOD, Some(&params), opts, None)
    })
    .await?;
    decode_page(client, &payload).map(|p| (p, hit))
}

/// A page's result, without the tools a client of the stateless era must
/// not offer.
fn decode_page<R: Page>(client: &Client, payload: &Payload) -> Result<R, Error> {
    if R::METHOD == "tools/list" && client.era() == Some(Era::Modern) {
        return without_invalid_tools(payload);
    }
    payload
        .deserialize()
        .map_err(|e| Error::decode(R::METHOD, e))
}

/// [`send`] of a replayable read, with the input rounds it took.
async fn send_counted<P: Serialize + ?Sized>(
    client: &Client,
    method: &'static str,
    params: Option<&P>,
    opts: &RequestOptions,
    route: Option<&Route>,
) -> Result<(Payload, u32), Error> {
    let conn = client.conn()?;
    let request = conn.engine.encode_request(method, params, opts, route)?;
    rounds(client, &conn, route)
        .call_counted(request, Cow::Borrowed(method), opts, Replay::Allow)
        .await
}

/// How the cache may keep the answer to `method` in the current era:
/// `None` if not at all.
fn lifetime(client: &Client, method: &str) -> Option<Lifetime> {
    if !cacheable(method) {
        return None;
    }
    match client.era()? {
        Era::Modern => Some(Lifetime::Hinted),
        Era::Legacy => {
            let session = client.initialize_result()?;
            let caps = &session.capabilities;
            let list = match method {
                "tools/list" => caps.tools.as_ref(),
                "prompts/list" => caps.prompts.as_ref(),
                "resources/list" | "resources/templates/list" => caps.resources.as_ref(),
                // A read is made stale by `resources/updated`, sent only for
                // subscriptions: not cached in this era.
                _ => None,
            };
            (list?.list_changed == Some(true)).then_some(Lifetime::UntilChanged)
        }
    }
}

/// The answer to `method` (selected by `arg`: a cursor, a URI): from the
/// client's cache while fresh if `opts.cache` is [`CacheMode::Use`], else
/// from `fetch`, kept as the era allows unless `opts.cache` is
/// [`CacheMode::Bypass`] or it took input rounds. True if it came from the
/// cache. Each page of a list is its own entry, keyed by its cursor.
async fn cached<F, Fut>(
    client: &Client,
    method: &'static str,
    arg: Option<&str>,
    opts: &RequestOptions,
    fetch: F,
) -> Result<(Payload, bool), Error>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<(Payload, u32), Error>>,
{
    let view = &client.shared.hub.cache;
    let lifetime = match opts.cache {
        CacheMode::Bypass => None,
        _ if !view.enabled() => None,
        _ => lifetime(client, method),
    };
    let Some(lifetime) = lifetime else {
        return fetch().await.map(|(p, _)| (p, false));
    };
    if opts.cache == CacheMode::Use
        && let Some(payload) = view.lookup(method, arg)
    {
        return Ok((payload, true));
    }
    let generation = view.begin();
    let (payload, rounds) = fetch().await?;
    // After input rounds the answer depends on the inputs given, which
    // are not part of the key.
    if let Some(generation) = generation
        && rounds == 0
    {
        view.keep(method, arg, &payload, lifetime, generation);
    }
    Ok((payload, false))
}

/// The notification topic a list method belongs to.
fn topic(method: &str) -> Option<Topic<'static>> {
    match method {
        "tools/list" => Some(Topic::Tools),
        "prompts/list" => Some(Topic::Prompts),
        "resources/list" | "resources/templates/list" => Some(Topic::Resources),
        _ => None,
    }
}

/// A `tools/list` page without the tools whose `x-mcp-header` annotations
/// break the rules (SEP-2243): a client of the stateless era must not offer
/// them, and says why in a warning.
fn without_invalid_tools<R: DeserializeOwned>(payload: &Payload) -> Result<R, Error> {
    let mut value: serde_json::Value = payload
        .deserialize()
        .map_err(|e| Error::decode("tools/list", e))?;
    if let Some(tools) = value.get_mut("tools").and_then(|t| t.as_array_mut()) {
        tools.retain(|tool| {
            let schema = tool.get("inputSchema").unwrap_or(&serde_json::Value::Null);
            match param_headers(schema) {
                Ok(_) => true,
                Err(reason) => {
                    let name = tool.get("name").and_then(|n| n.as_str()).unwrap_or("?");
                    tracing::warn!(tool = name, %reason, "dropping a tool with an invalid x-mcp-header annotation");
                    false
                }
            }
        });
    }
    serde_json::from_value(value).map_err(|e| Error::decode("tools/list", e))
}

/// Follows `nextCursor` until the last page.
async fn walk<R: Page>(client: &Client, opts: &RequestOptions) -> Result<Vec<R::Item>, Error> {
    let (first, hit) = page_cached::<R>(client, None, opts).await?;
    walk_from(client, first, hit, opts).await
}

/// Follows `nextCursor` from the `first` page until the last page. If a
/// cursor from a cached page is refused, the cached pages are dropped and
/// the walk starts again from the server.
async fn walk_from<R: Page>(
    client: &Client,
    first: R,
    first_cached: bool,
    opts: &RequestOptions,
) -> Result<Vec<R::Item>, Error> {
    match walk_pages::<R>(client, first, first_cached, opts).await {
        Err(Walk::StaleCursor(e)) => {
            tracing::debug!(method = R::METHOD, error = %e, "a cached cursor was refused: listing again");
            if let Some(topic) = topic(R::METHOD) {
                client.shared.hub.cache.invalidate(topic);
            }
            let opts = opts.clone().cache(CacheMode::Refresh);
            let first = page::<R>(client, None, &opts).await?;
            match walk_pages::<R>(client, first, false, &opts).await {
                Ok(all) => Ok(all),
                Err(Walk::StaleCursor(e) | Walk::Failed(e)) => Err(e),
            }
        }
        Err(Walk::Failed(e)) => Err(e),
        Ok(all) => Ok(all),
    }
}

/// How a walk failed.
enum Walk {
    /// A cursor that came from the cache was refused by the server.
    StaleCursor(Error),
    Failed(Error),
}

async fn walk_pages<R: Page>(
    client: &Client,
    first: R,
    first_cached: bool,
    opts: &RequestOptions,
) -> Result<Vec<R::Item>, Walk> {
    let method = R::METHOD;
    let mut all = Vec::new();
    let mut first = Some(first);
    let mut cursor = None;
    let mut seen = HashSet::new();
    let mut from_cache = first_cached;
    for _ in 0..MAX_PAGES {
        let this = match first.take() {
            Some(p) => p,
            None => match page_cached::<R>(client, cursor, opts).await {
                Ok((p, hit)) => {
                    from_cache |= hit;
                    p
                }
                Err(e) if from_cache && e.kind() == ErrorKind::Server => {
                    return Err(Walk::StaleCursor(e));
                }
                Err(e) => return Err(Walk::Failed(e)),
            },
        };
        let (items, next) = this.into_parts();
        all.extend(items);
        match next {
            // A cursor seen before would loop forever.
            Some(c) if !seen.insert(c.clone()) => {
                return Err(Walk::Failed(Error::protocol(format!(
                    "{method} returned a cursor it returned before"
                ))));
            }
            Some(c) => cursor = Some(c),
            None => return Ok(all),
        }
    }
    Err(Walk::Failed(Error::protocol(format!(
        "{method} returned more than {MAX_PAGES} pages"
    ))))
}

/// Every tool, and the tool cache refreshed with them.
async fn all_tools(client: &Client, opts: &RequestOptions) -> Result<Vec<Tool>, Error> {
    let cache = &client.shared.hub.tools;
    let generation = cache.generation();
    // The first page is sent here rather than by the walker so that its id
    // is known: a `list_changed` that arrives before its answer is
    // reflected in it and does not make the listing stale (see
    // `ToolCache::answered`).
    // A first page from the response cache has no id: the generation taken
    // above decides.
    let method = ListToolsResult::METHOD;
    let first_page = AtomicI64::new(-1);
    let (payload, hit) = cached(client, method, None, opts, || async {
        let conn = client.conn()?;
        let request =
            conn.engine
                .encode_request(method, Some(&PaginatedParams::default()), opts, None)?;
        first_page.store(request.id(), Ordering::Relaxed);
        cache.begin_listing(request.id());
        rounds(client, &conn, None)
            .call_counted(request, Cow::Borrowed(method), opts, Replay::Allow)
            .await
    })
    .await?;
    let first: ListToolsResult = decode_page(client, &payload)?;
    let tools = walk_from(client, first, hit, opts).await?;
    cache.store(generation, first_page.load(Ordering::Relaxed), &tools);
    Ok(tools)
}

/// Implements [`Operation`] for `$ty` (with the impl generics in brackets):
/// `$body` runs with the operation as `$this`.
macro_rules! operation {
    ([$($gen:tt)*] $ty:ty => $output:ty,
     |$this:ident, $client:ident, $opts:ident| $body:block
     $(where $($bound:tt)+)?) => {
        impl<$($gen)*> sealed::Sealed for $ty $(where $($bound)+)? {}

        impl<$($gen)*> Operation for $ty $(where $($bound)+)? {
            type Output = $output;

            fn run<'c>(self, $client: &'c Client, $opts: RequestOptions) -> CallFuture<'c, $output>
            where
                Self: 'c,
            {
                let $this = self;
                Box::pin(async move $body)
            }
        }
    };
}

/// `ping`.
#[derive(Debug)]
pub struct Ping(pub(crate) ());

operation!([] Ping => (), |_this, client, opts| {
    let method = client.era().unwrap_or(Era::Legacy).liveness_method();
    typed::<(), serde::de::IgnoredAny>(client, method, None, &opts, Replay::Allow)
        .await
        .map(drop)
});

/// One page of a list (`tools/list`, `resources/list`...).
pub struct ListPage<R> {
    pub(crate) cursor: Option<String>,
    pub(crate) page: PhantomData<fn() -> R>,
}

operation!([R] ListPage<R> => R, |this, client, opts| {
    page::<R>(client, this.cursor, &opts).await
} where R: Page);

/// Every page of a list, following cursors.
pub struct ListAll<R> {
    pub(crate) page: PhantomData<fn() -> R>,
}

operation!([R] ListAll<R> => Vec<R::Item>, |_this, client, opts| {
    walk::<R>(client, &opts).await
} where R: Page);

/// Every tool, following cursors; refreshes the tool cache.
#[derive(Debug)]
pub struct ListAllTools(pub(crate) ());

operation!([] ListAllTools => Vec<Tool>, |_this, client, opts| {
    all_tools(client, &opts).await
});

/// `tools/call`.
pub struct CallTool<'a, A> {
    pub(crate) name: &'a str,
    pub(crate) arguments: A,
    pub(crate) meta: Option<Meta>,
}

impl<A> fmt::Debug for CallTool<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<'c, 'a, A> Call<'c, CallTool<'a, A>> {
    /// `_meta` for the call (a progress token is added to it when progress
    /// is asked for).
    pub fn meta(mut self, meta: Meta) -> Self {
        self.op_mut().meta = Some(meta);
        self
    }
}

/// `tools/call` params borrowing the caller's arguments.
#[derive(Serialize)]
struct ToolParams<'a, A: ?Sized> {
    name: &'a str,
    arguments: &'a A,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a Meta>,
}

operation!(['a, A] CallTool<'a, A> => CallToolResult, |this, client, opts| {
    let CallTool { name, arguments, meta } = this;
    let params = ToolParams {
        name,
        arguments: &arguments,
        meta: meta.as_ref(),
    };
    let call = encode_tool_call(client, name, &params, &arguments, &opts).await?;
    // Encoded: owned arguments go before the answer arrives, so a large
    // one is held once (as the frame being written), not twice.
    drop(arguments);
    finish_tool_call(client, call, &opts).await
} where A: Serialize + Send + Sync + 'a);

/// A `tools/call` encoded on one connection, ready to send on it.
struct ToolCall {
    conn: Arc<Conn>,
    request: EncodedRequest,
    replay: Replay,
    /// The tool as listed, whose output schema the result must match.
    tool: Option<Arc<ToolEntry>>,
    /// Sent with no listing cached: a structured result lists the tools
    /// after the answer, to validate it.
    list_after: bool,
    /// Its standard headers (name and annotated parameters).
    route: Route,
}

/// Encodes the request (whose replay safety depends on the tool), listing
/// the tools first only where sending needs the tool's definition.
///
/// In the stateless era a call carries headers for the tool's annotated
/// parameters, so an uncached listing is fetched before the call. In the
/// `initialize` era the call goes at once: a tool not yet listed is replayed
/// as one without annotations ([`Replay::ByMethod`]), and its output is
/// validated after the answer (see [`finish_tool_call`]).
async fn encode_tool_call<P: Serialize + Sync + ?Sized, A: Serialize + ?Sized>(
    client: &Client,
    name: &str,
    params: &P,
    arguments: &A,
    opts: &RequestOptions,
) -> Result<ToolCall, Error> {
    let tools = &client.shared.hub.tools;
    let mut found = tools.lookup(name);
    let unlisted = found.needs_listing
        && client
            .initialize_result()
            .is_some_and(|r| r.capabilities.tools.is_some());
    let list_after = unlisted && client.era() == Some(Era::Legacy);
    if unlisted && !list_after {
        all_tools(client, &RequestOptions::new()).await?;
        found = tools.lookup(name);
    }
    let replay = if found.entry.as_ref().is_some_and(|t| t.replay_safe()) {
        Replay::Allow
    } else {
        Replay::ByMethod
    };
    let conn = client.conn()?;
    let mut route = Route {
        name: Some(name.to_owned()),
        params: Vec::new(),
    };
    // Only the stateless era sends headers, and only tools that ask for
    // them make the arguments a value tree.
    if let Some(tool) = &found.entry
        && tool.has_param_headers()
        && client.era() == Some(Era::Modern)
    {
        let args =
            serde_json::to_value(arguments).map_err(|e| Error::decode("tool arguments", e))?;
        route.params = tool.param_headers(&args);
    }
    let request = conn
        .engine
        .encode_request("tools/call", Some(params), opts, Some(&route))?;
    Ok(ToolCall {
        conn,
        request,
        replay,
        tool: found.entry,
        list_after,
        route,
    })
}

/// Sends an encoded `tools/call`, decodes its result straight from the
/// answer's bytes and validates its structured content.
///
/// When the tool declares an `outputSchema`, the result's
/// `structuredContent` is validated against it (JSON Schema 2020-12,
/// compiled once per tool and cached until the tool list changes); a
/// mismatch is an [`ErrorKind::SchemaValidation`](crate::ErrorKind) error.
///
/// A call sent before any listing lists the tools once after its answer,
/// and only if the answer has `structuredContent` and is not a tool error.
/// If that listing fails, the result is returned unvalidated with a
/// warning: the call happened, and its answer must not be lost to a failed
/// `tools/list`.
async fn finish_tool_call(
    client: &Client,
    call: ToolCall,
    opts: &RequestOptions,
) -> Result<CallToolResult, Error> {
    let ToolCall {
        conn,
        request,
        replay,
        mut tool,
        list_after,
        route,
    } = call;
    let payload = rounds(client, &conn, Some(&route))
        .call(request, Cow::Borrowed("tools/call"), opts, replay)
        .await?;
    // Consumed: a large answer's text is decoded in its frame's allocation.
    let result: CallToolResult = payload.take().map_err(|e| Error::decode("tools/call", e))?;
    if list_after && result.structured_content.is_some() && result.is_error != Some(true) {
        let name = route.name.as_deref().unwrap_or_default();
        let tools = &client.shared.hub.tools;
        // Another call may have listed them meanwhile.
        let found = tools.lookup(name);
        if !found.needs_listing {
            tool = found.entry;
        } else if let Err(e) = all_tools(client, &RequestOptions::new()).await {
            tracing::warn!(
                tool = name,
                error = %e,
                "tools/list after tools/call failed; result returned without output validation"
            );
        } else {
            tool = tools.lookup(name).entry;
        }
    }
    if let Some(tool) = tool {
        tool.validate(
            result.structured_content.as_ref(),
            result.is_error == Some(true),
        )?;
    }
    Ok(result)
}

/// `resources/read`.
#[derive(Debug)]
pub struct ReadResource<'a> {
    pub(crate) uri: &'a str,
}

operation!(['a] ReadResource<'a> => ReadResourceResult, |this, client, opts| {
    let method = "resources/read";
    let params = json!({ "uri": this.uri });
    let route = Route {
        name: Some(this.uri.to_owned()),
        params: Vec::new(),
    };
    let (payload, _) = cached(client, method, Some(this.uri), &opts, || {
        send_counted(client, method, Some(&params), &opts, Some(&route))
    })
    .await?;
    // In place unless the cache keeps the answer too.
    payload.take().map_err(|e| Error::decode(method, e))
});

/// `resources/subscribe`, or in the stateless era a
/// `subscriptions/listen` stream that includes the resource.
#[derive(Debug)]
pub struct Subscribe<'a> {
    pub(crate) uri: &'a str,
}

operation!(['a] Subscribe<'a> => ResourceSubscription, |this, client, opts| {
    // Listen before asking, so no update between the two is missed.
    let rx = client.shared.hub.updates_for(this.uri);
    if client.era() == Some(Era::Modern) {
        // The stateless era has no `resources/subscribe`: the URI joins the
        // connection's `subscriptions/listen` stream (`crate::session::listen`).
        client.conn()?;
        let timeout = opts.timeout.unwrap_or(client.shared.config.request_timeout);
        listen::change(&client.shared, this.uri, true, timeout).await?;
    } else {
        let params = json!({ "uri": this.uri });
        typed::<_, EmptyResult>(client, "resources/subscribe", Some(&params), &opts, Replay::Allow)
            .await?;
        // Kept, to subscribe again on a new session.
        client.shared.wanted.change(this.uri, true);
    }
    Ok(ResourceSubscription {
        uri: this.uri.to_owned(),
        rx,
    })
});

/// `resources/unsubscribe`, or in the stateless era a
/// `subscriptions/listen` stream without the resource.
#[derive(Debug)]
pub struct Unsubscribe<'a> {
    pub(crate) uri: &'a str,
}

operation!(['a] Unsubscribe<'a> => (), |this, client, opts| {
    if client.era() == Some(Era::Modern) {
        client.conn()?;
        let timeout = opts.timeout.unwrap_or(client.shared.config.request_timeout);
        return listen::change(&client.shared, this.uri, false, timeout).await;
    }
    client.shared.wanted.change(this.uri, false);
    let params = json!({ "uri": this.uri });
    typed::<_, EmptyResult>(client, "resources/unsubscribe", Some(&params), &opts, Replay::Allow)
        .await
        .map(drop)
});

/// `prompts/get`.
#[derive(Debug)]
pub struct GetPrompt<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<Arguments>,
}

operation!(['a] GetPrompt<'a> => GetPromptResult, |this, client, opts| {
    let mut params = json!({ "name": this.name });
    if let Some(args) = this.arguments {
        params["arguments"] = serde_json::Value::Object(args);
    }
    named(client, "prompts/get", this.name, &params, &opts).await
});

/// `completion/complete`.
#[derive(Debug)]
pub struct Complete<'a> {
    pub(crate) reference: CompletionReference,
    pub(crate) name: &'a str,
    pub(crate) value: &'a str,
    pub(crate) context: Option<Arguments>,
}

operation!(['a] Complete<'a> => CompleteResult, |this, client, opts| {
    let mut params = json!({
        "ref": this.reference,
        "argument": {"name": this.name, "value": this.value},
    });
    if let Some(ctx) = this.context {
        params["context"] = json!({ "arguments": ctx });
    }
    typed(client, "completion/complete", Some(&params), &opts, Replay::Allow).await
});

/// `logging/setLevel`.
#[derive(Debug)]
pub struct SetLoggingLevel {
    pub(crate) level: LoggingLevel,
}

/// What [`Client::set_logging_level`](crate::Client::set_logging_level)
/// did, which depends on the server's era.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LevelApplied {
    /// `logging/setLevel` was sent and the server accepted it (the
    /// `initialize` era): it applies to the whole session.
    Sent,
    /// Nothing was sent: the stateless era has no `logging/setLevel`, so
    /// every later request of this connection asks for the level in its
    /// `_meta` (`io.modelcontextprotocol/logLevel`), and the server sends
    /// log messages on those requests' answer streams only.
    Stamped,
}

operation!([] SetLoggingLevel => LevelApplied, |this, client, opts| {
    let params = json!({ "level": this.level });
    if client.era() == Some(Era::Modern) {
        let conn = client.conn()?;
        let stamp = conn.engine.stamp().with_log_level(params["level"].clone());
        conn.engine.set_stamp(stamp);
        return Ok(LevelApplied::Stamped);
    }
    typed::<_, EmptyResult>(client, "logging/setLevel", Some(&params), &opts, Replay::Allow)
        .await
        .map(|_| LevelApplied::Sent)
});

/// Any request, by method name, its result parsed as `R`.
pub struct Request<'a, P: ?Sized, R> {
    pub(crate) method: &'a str,
    pub(crate) params: Option<&'a P>,
    pub(crate) result: PhantomData<fn() -> R>,
}

operation!(['a, P, R] Request<'a, P, R> => R, |this, client, opts| {
    let payload = send(
        client,
        Cow::Owned(this.method.to_owned()),
        this.params,
        &opts,
        Replay::ByMethod,
        None,
    )
    .await?;
    payload
        .deserialize()
        .map_err(|e| Error::decode("result", e))
} where P: Serialize + Sync + ?Sized + 'a, R: DeserializeOwned + Send);

/// The updates of one subscribed resource.
#[derive(Debug)]
pub struct ResourceSubscription {
    uri: String,
    rx: watch::Receiver<Option<ResourceUpdated>>,
}

impl ResourceSubscription {
    /// The subscribed URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Waits for the next update (the latest, if several arrived). `None`
    /// once the client is gone.
    pub async fn changed(&mut self) -> Option<ResourceUpdated> {
        self.rx.changed().await.ok()?;
        self.rx.borrow_and_update().clone()
    }
}
