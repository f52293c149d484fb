//! The typed API: one method per server feature.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};

use crate::Error;
use crate::client::Client;
use crate::engine::{EncodedRequest, Engine, RequestOptions};
use crate::notify::{ListKind, ServerNotification};
use crate::schema::ToolEntry;
use crate::types::{
    Arguments, CallToolParams, CallToolResult, CompleteResult, CompletionReference, EmptyResult,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LogMessage, LoggingLevel, Page, PaginatedParams, Prompt, ReadResourceResult,
    Resource, ResourceTemplate, ResourceUpdated, Tool,
};

/// The most pages a walker follows before it gives up (a server whose
/// cursors never end).
const MAX_PAGES: usize = 10_000;

impl Client {
    async fn typed<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Option<&P>,
        opts: &RequestOptions,
        replay: bool,
    ) -> Result<R, Error> {
        let payload = self.call_raw(method, params, opts, replay).await?;
        payload.deserialize().map_err(|e| Error::decode(method, e))
    }

    async fn page<R: Page>(&self, cursor: Option<String>) -> Result<R, Error> {
        let params = PaginatedParams {
            cursor,
            ..Default::default()
        };
        self.typed(R::METHOD, Some(&params), &RequestOptions::new(), true)
            .await
    }

    /// Follows `nextCursor` until the last page.
    async fn walk<R: Page>(&self) -> Result<Vec<R::Item>, Error> {
        let first = self.page::<R>(None).await?;
        self.walk_from(first).await
    }

    /// Follows `nextCursor` from the `first` page until the last page.
    async fn walk_from<R: Page>(&self, first: R) -> Result<Vec<R::Item>, Error> {
        let method = R::METHOD;
        let mut all = Vec::new();
        let mut page = Some(first);
        let mut cursor = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_PAGES {
            let this = match page.take() {
                Some(p) => p,
                None => self.page::<R>(cursor).await?,
            };
            let (items, next) = this.into_parts();
            all.extend(items);
            match next {
                // A cursor seen before would loop forever.
                Some(c) if !seen.insert(c.clone()) => {
                    return Err(Error::protocol(
                        format!("{method} returned a cursor it returned before"),
                        None,
                    ));
                }
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
        Err(Error::protocol(
            format!("{method} returned more than {MAX_PAGES} pages"),
            None,
        ))
    }

    /// `ping`.
    pub async fn ping(&self) -> Result<(), Error> {
        self.typed::<(), EmptyResult>("ping", None, &RequestOptions::new(), true)
            .await
            .map(drop)
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, Error> {
        self.page(cursor).await
    }

    /// Every tool, following cursors. Refreshes the cache that output
    /// validation and replay decisions use.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, Error> {
        let cache = &self.inner.hub.tools;
        let generation = cache.generation();
        // The first page is sent here rather than by the walker so that its
        // id is known: a `list_changed` that arrives before its answer is
        // reflected in it and does not make the listing stale.
        let engine = self.engine()?;
        let opts = RequestOptions::new();
        let request = engine.encode_request(
            ListToolsResult::METHOD,
            Some(&PaginatedParams::default()),
            &opts,
        )?;
        let first_page = request.id();
        cache.begin_listing(first_page);
        let first: ListToolsResult = engine
            .call_encoded(
                request,
                Cow::Borrowed(ListToolsResult::METHOD),
                &opts,
                true,
                true,
            )
            .await?
            .deserialize()
            .map_err(|e| Error::decode(ListToolsResult::METHOD, e))?;
        drop(engine);
        let tools = self.walk_from(first).await?;
        cache.store(generation, first_page, &tools);
        Ok(tools)
    }

    /// `tools/call` with JSON `arguments` (an object).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.call_tool_with(CallToolParams::new(name, arguments), &RequestOptions::new())
            .await
    }

    /// `tools/call` with any serializable `arguments`, which must serialize
    /// to a JSON object (a struct, a map, a `json!({...})`).
    ///
    /// Unlike [`call_tool`](Self::call_tool) this takes the arguments by
    /// reference and serializes them straight into the request frame: no
    /// `serde_json::Value` tree is built for them, and a large argument
    /// stays owned (and freed) by the caller.
    pub async fn call_tool_args<A: Serialize + ?Sized>(
        &self,
        name: &str,
        arguments: &A,
    ) -> Result<CallToolResult, Error> {
        let params = ArgsParams { name, arguments };
        self.call_tool_params(name, &params, &RequestOptions::new())
            .await
    }

    /// `tools/call` with full params and options.
    ///
    /// When the tool declares an `outputSchema`, the result's
    /// `structuredContent` is validated against it (JSON Schema 2020-12,
    /// compiled once per tool and cached until the tool list changes); a
    /// mismatch is an [`ErrorKind::SchemaValidation`](crate::ErrorKind)
    /// error. The tool list is fetched once if it is not cached yet.
    pub async fn call_tool_with(
        &self,
        params: CallToolParams,
        opts: &RequestOptions,
    ) -> Result<CallToolResult, Error> {
        // Encode first and let the arguments go before the answer arrives:
        // a large argument is then held once (as the frame being written),
        // not twice, while the answer is read.
        let request = self.encode_tool_call(&params.name, &params, opts).await?;
        drop(params);
        self.finish_tool_call(request, opts).await
    }

    /// `tools/call` with params of any serializable shape.
    async fn call_tool_params<P: Serialize + ?Sized>(
        &self,
        name: &str,
        params: &P,
        opts: &RequestOptions,
    ) -> Result<CallToolResult, Error> {
        let request = self.encode_tool_call(name, params, opts).await?;
        self.finish_tool_call(request, opts).await
    }

    /// Lists the tools once if output validation needs them, and encodes
    /// the request (whose replay safety depends on the tool).
    async fn encode_tool_call<P: Serialize + ?Sized>(
        &self,
        name: &str,
        params: &P,
        opts: &RequestOptions,
    ) -> Result<ToolCall, Error> {
        let tools = &self.inner.hub.tools;
        let mut found = tools.lookup(name);
        if found.needs_listing
            && self
                .initialize_result()
                .is_some_and(|r| r.capabilities.tools.is_some())
        {
            self.list_all_tools().await?;
            found = tools.lookup(name);
        }
        let replay = found.entry.as_ref().is_some_and(|t| t.replay_safe());
        let engine = self.engine()?;
        let request = engine.encode_request("tools/call", Some(params), opts)?;
        Ok(ToolCall {
            engine,
            request,
            replay,
            tool: found.entry,
        })
    }

    /// Sends an encoded `tools/call`, decodes its result straight from the
    /// answer's bytes and validates its structured content.
    async fn finish_tool_call(
        &self,
        call: ToolCall,
        opts: &RequestOptions,
    ) -> Result<CallToolResult, Error> {
        let ToolCall {
            engine,
            request,
            replay,
            tool,
        } = call;
        let payload = engine
            .call_encoded(request, Cow::Borrowed("tools/call"), opts, replay, true)
            .await?;
        let result: CallToolResult = payload
            .deserialize()
            .map_err(|e| Error::decode("tools/call", e))?;
        drop(payload);
        if let Some(tool) = tool {
            tool.validate(
                result.structured_content.as_ref(),
                result.is_error == Some(true),
            )?;
        }
        Ok(result)
    }

    /// One page of `resources/list`.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, Error> {
        self.page(cursor).await
    }

    /// Every resource, following cursors.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, Error> {
        self.walk::<ListResourcesResult>().await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        self.page(cursor).await
    }

    /// Every resource template, following cursors.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.walk::<ListResourceTemplatesResult>().await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.typed(
            "resources/read",
            Some(&json!({ "uri": uri })),
            &RequestOptions::new(),
            true,
        )
        .await
    }

    /// `resources/subscribe`, returning a subscription that sees
    /// `notifications/resources/updated` for `uri` (and its sub-resources).
    /// Updates coalesce: a slow reader sees the latest.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<ResourceSubscription, Error> {
        // Listen before asking, so no update between the two is missed.
        let rx = self.inner.hub.updates_for(uri);
        self.typed::<_, EmptyResult>(
            "resources/subscribe",
            Some(&json!({ "uri": uri })),
            &RequestOptions::new(),
            true,
        )
        .await?;
        Ok(ResourceSubscription {
            uri: uri.to_owned(),
            rx,
        })
    }

    /// `resources/unsubscribe`.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), Error> {
        self.typed::<_, EmptyResult>(
            "resources/unsubscribe",
            Some(&json!({ "uri": uri })),
            &RequestOptions::new(),
            true,
        )
        .await
        .map(drop)
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, Error> {
        self.page(cursor).await
    }

    /// Every prompt, following cursors.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.walk::<ListPromptsResult>().await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Arguments>,
    ) -> Result<GetPromptResult, Error> {
        let mut params = json!({ "name": name });
        if let Some(args) = arguments {
            params["arguments"] = Value::Object(args);
        }
        self.typed("prompts/get", Some(&params), &RequestOptions::new(), true)
            .await
    }

    /// `completion/complete`: values for argument `name` of `reference`, given
    /// what was typed (`value`) and the arguments already chosen (`context`).
    pub async fn complete(
        &self,
        reference: CompletionReference,
        name: &str,
        value: &str,
        context: Option<Arguments>,
    ) -> Result<CompleteResult, Error> {
        let mut params = json!({
            "ref": reference,
            "argument": {"name": name, "value": value},
        });
        if let Some(ctx) = context {
            params["context"] = json!({ "arguments": ctx });
        }
        self.typed(
            "completion/complete",
            Some(&params),
            &RequestOptions::new(),
            true,
        )
        .await
    }

    /// `logging/setLevel`.
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), Error> {
        self.typed::<_, EmptyResult>(
            "logging/setLevel",
            Some(&json!({ "level": level })),
            &RequestOptions::new(),
            true,
        )
        .await
        .map(drop)
    }

    /// Tells the server the roots changed (`notifications/roots/list_changed`);
    /// it will ask again with `roots/list`. Enable
    /// [`ClientConfig::roots_list_changed`](crate::ClientConfig::roots_list_changed)
    /// to advertise it.
    pub async fn roots_list_changed(&self) -> Result<(), Error> {
        self.notify::<()>("notifications/roots/list_changed", None)
            .await
    }

    /// The server's log messages (`notifications/message`), also sent to
    /// `tracing` under target `mcp_server`. The queue is bounded: a reader
    /// that falls behind loses the oldest (it sees `Lagged(n)`).
    pub fn log_messages(&self) -> broadcast::Receiver<LogMessage> {
        self.inner.hub.logs()
    }

    /// Notifications without a dedicated lane (bounded like the log queue).
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.inner.hub.other()
    }

    /// A counter bumped by each `list_changed` notification of `kind`.
    /// Repeated notifications coalesce; the tool cache is already
    /// invalidated when the counter moves.
    pub fn list_changed(&self, kind: ListKind) -> watch::Receiver<u64> {
        self.inner.hub.list_changed(kind)
    }

    /// Notifications dropped so far because a bounded queue was full.
    pub fn notification_drops(&self) -> u64 {
        self.inner.hub.drops()
    }
}

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

/// `tools/call` params borrowing the caller's arguments.
#[derive(Serialize)]
struct ArgsParams<'a, A: ?Sized> {
    name: &'a str,
    arguments: &'a A,
}

/// A `tools/call` encoded on one connection, ready to send on it.
struct ToolCall {
    engine: Arc<Engine>,
    request: EncodedRequest,
    replay: bool,
    /// The tool as listed, whose output schema the result must match.
    tool: Option<Arc<ToolEntry>>,
}
