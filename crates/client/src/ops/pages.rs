//! Lists: one page, from the response cache or the server; every page,
//! following cursors (and listing again from the server when a cached
//! cursor is refused); and every tool, which refreshes the tool cache.

use std::borrow::Cow;
use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};

use mcpwire_codec::jsonrpc::Payload;
use serde::de::DeserializeOwned;

use super::send::{rounds, send_counted};
use crate::base::error::{Error, ErrorKind};
use crate::base::headers::param_headers;
use crate::base::options::{CacheMode, Replay, RequestOptions};
use crate::base::version::Era;
use crate::cache::store::{Topic, cacheable};
use crate::cache::view::Lifetime;
use crate::client::handle::Client;
use crate::types::{ListToolsResult, Page, PaginatedParams, Tool};

/// The most pages a walker follows before it gives up (a server whose
/// cursors never end).
const MAX_PAGES: usize = 10_000;

/// One page of the list `R`.
pub(super) async fn page<R: Page>(
    client: &Client,
    cursor: Option<String>,
    opts: &RequestOptions,
) -> Result<R, Error> {
    page_cached(client, cursor, opts).await.map(|(p, _)| p)
}

/// One page of the list `R`, from the cache or the server (per cursor: see
/// [`cached`]), and whether it came from the cache.
pub(super) async fn page_cached<R: Page>(
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
pub(super) fn decode_page<R: Page>(client: &Client, payload: &Payload) -> Result<R, Error> {
    if R::METHOD == "tools/list" && client.era() == Some(Era::Modern) {
        return without_invalid_tools(payload);
    }
    payload
        .deserialize()
        .map_err(|e| Error::decode(R::METHOD, e))
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
pub(super) async fn cached<F, Fut>(
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
    let view = &client.shared.inbox.cache;
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
pub(super) async fn walk<R: Page>(
    client: &Client,
    opts: &RequestOptions,
) -> Result<Vec<R::Item>, Error> {
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
                client.shared.inbox.cache.invalidate(topic);
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
            // Some servers end their last page with an empty cursor.
            Some(c) if c.is_empty() => return Ok(all),
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
pub(super) async fn all_tools(client: &Client, opts: &RequestOptions) -> Result<Vec<Tool>, Error> {
    let cache = &client.shared.inbox.tools;
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
