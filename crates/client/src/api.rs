//! The typed API: one method per server feature. Each request returns a
//! [`Call`] to await (options set on it first, if any); notifications and
//! the server's own messages are plain methods.

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{broadcast, watch};

use crate::base::error::Error;
use crate::client::call::Call;
use crate::client::handle::Client;
use crate::notify::inbox::{ListKind, ServerNotification};
use crate::ops::{
    CallTool, Complete, GetPrompt, ListAll, ListAllTools, ListPage, Ping, ReadResource, Request,
    SetLoggingLevel, Subscribe, Unsubscribe,
};
use crate::types::{
    Arguments, CompletionReference, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, LogMessage, LoggingLevel,
};

impl Client {
    /// Checks that the server is alive: `ping`, or in the stateless era
    /// (2026-07-28), which has no `ping`, `server/discover` (the one request
    /// every server of that era answers; it has no effect and its answer is
    /// not kept). Either way the call succeeds if the server answered.
    pub fn ping(&self) -> Call<'_, Ping> {
        Call::new(self, Ping(()))
    }

    /// One page of `tools/list`.
    pub fn list_tools(&self, cursor: Option<String>) -> Call<'_, ListPage<ListToolsResult>> {
        Call::new(
            self,
            ListPage {
                cursor,
                page: PhantomData,
            },
        )
    }

    /// Every tool, following cursors. Refreshes the cache that output
    /// validation and replay decisions use.
    pub fn list_all_tools(&self) -> Call<'_, ListAllTools> {
        Call::new(self, ListAllTools(()))
    }

    /// `tools/call` of tool `name` with `arguments`: anything that
    /// serializes to a JSON object, by value or by reference (a
    /// `&json!({..})`, a `&MyArgs` struct, a map). The arguments are
    /// serialized once, straight into the request frame: no copy of them is
    /// made, and owned arguments are dropped as soon as the frame is built.
    ///
    /// When the tool declares an `outputSchema`, the result's
    /// `structuredContent` is validated against it (JSON Schema 2020-12,
    /// compiled once per tool and cached until the tool list changes); a
    /// mismatch is an [`ErrorKind::SchemaValidation`](crate::ErrorKind)
    /// error.
    ///
    /// The tool list is fetched once if it is not cached yet, but only when
    /// needed. In the stateless era (2026-07-28) it is fetched before the
    /// call, whose headers depend on the tool. In the `initialize` era the
    /// call is sent at once (a tool not listed yet counts as one without
    /// annotations: not sent again after a lost session), and the list is
    /// fetched after the answer, only if that answer has
    /// `structuredContent` to validate and is not a tool error. A result
    /// without `structuredContent` from a tool not listed yet is returned
    /// as it is, even if the tool declares an output schema (once the tool
    /// is listed, such a result is a `SchemaValidation` error). If the
    /// listing after the answer fails, the result is returned unvalidated
    /// and a warning is logged (`tracing`): the call has happened, and its
    /// answer is not lost to a failed `tools/list`. Call
    /// [`list_all_tools`](Self::list_all_tools) first to validate every
    /// result, the first included, before it is returned.
    ///
    /// ```no_run
    /// # async fn demo(client: mcpwire_client::Client) -> Result<(), mcpwire_client::Error> {
    /// use serde_json::json;
    ///
    /// let result = client.call_tool("add", &json!({"a": 1, "b": 2})).await?;
    ///
    /// #[derive(serde::Serialize)]
    /// struct Echo<'a> {
    ///     message: &'a str,
    /// }
    /// let echo = client.call_tool("echo", &Echo { message: "hi" }).await?;
    /// println!("{} {}", result.text(), echo.text());
    /// # Ok(()) }
    /// ```
    pub fn call_tool<'a, A>(&'a self, name: &'a str, arguments: A) -> Call<'a, CallTool<'a, A>>
    where
        A: Serialize + Send + Sync + 'a,
    {
        Call::new(
            self,
            CallTool {
                name,
                arguments,
                meta: None,
            },
        )
    }

    /// One page of `resources/list`.
    pub fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Call<'_, ListPage<ListResourcesResult>> {
        Call::new(
            self,
            ListPage {
                cursor,
                page: PhantomData,
            },
        )
    }

    /// Every resource, following cursors.
    pub fn list_all_resources(&self) -> Call<'_, ListAll<ListResourcesResult>> {
        Call::new(self, ListAll { page: PhantomData })
    }

    /// One page of `resources/templates/list`.
    pub fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Call<'_, ListPage<ListResourceTemplatesResult>> {
        Call::new(
            self,
            ListPage {
                cursor,
                page: PhantomData,
            },
        )
    }

    /// Every resource template, following cursors.
    pub fn list_all_resource_templates(&self) -> Call<'_, ListAll<ListResourceTemplatesResult>> {
        Call::new(self, ListAll { page: PhantomData })
    }

    /// `resources/read`.
    pub fn read_resource<'a>(&'a self, uri: &'a str) -> Call<'a, ReadResource<'a>> {
        Call::new(self, ReadResource { uri })
    }

    /// Subscribes to `uri`, giving a
    /// [`ResourceSubscription`](crate::ResourceSubscription) that sees
    /// `notifications/resources/updated` for `uri` (and its sub-resources).
    /// Updates coalesce: a slow reader sees the latest.
    ///
    /// In the `initialize` era this is `resources/subscribe`; in the
    /// stateless era the URI joins the connection's `subscriptions/listen`
    /// stream, and the call returns once the server acknowledged a stream
    /// that includes it (a server that leaves it out of its
    /// acknowledgement fails the call). Either way the subscription is
    /// asked for again on every new connection.
    pub fn subscribe_resource<'a>(&'a self, uri: &'a str) -> Call<'a, Subscribe<'a>> {
        Call::new(self, Subscribe { uri })
    }

    /// Ends a subscription: `resources/unsubscribe`, or in the stateless
    /// era a `subscriptions/listen` stream without `uri`.
    pub fn unsubscribe_resource<'a>(&'a self, uri: &'a str) -> Call<'a, Unsubscribe<'a>> {
        Call::new(self, Unsubscribe { uri })
    }

    /// One page of `prompts/list`.
    pub fn list_prompts(&self, cursor: Option<String>) -> Call<'_, ListPage<ListPromptsResult>> {
        Call::new(
            self,
            ListPage {
                cursor,
                page: PhantomData,
            },
        )
    }

    /// Every prompt, following cursors.
    pub fn list_all_prompts(&self) -> Call<'_, ListAll<ListPromptsResult>> {
        Call::new(self, ListAll { page: PhantomData })
    }

    /// `prompts/get` with string arguments.
    pub fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<Arguments>,
    ) -> Call<'a, GetPrompt<'a>> {
        Call::new(self, GetPrompt { name, arguments })
    }

    /// `completion/complete`: values for argument `name` of `reference`, given
    /// what was typed (`value`) and the arguments already chosen (`context`).
    pub fn complete<'a>(
        &'a self,
        reference: CompletionReference,
        name: &'a str,
        value: &'a str,
        context: Option<Arguments>,
    ) -> Call<'a, Complete<'a>> {
        Call::new(
            self,
            Complete {
                reference,
                name,
                value,
                context,
            },
        )
    }

    /// Asks the server for log messages at `level` and above, and says how
    /// ([`LevelApplied`](crate::LevelApplied)): `logging/setLevel` in the
    /// `initialize` era (`Sent`); in the stateless era, which has no such
    /// request, nothing is sent and every later request of this connection
    /// asks for `level` in its `_meta` instead (`Stamped`), so the server's
    /// messages come with those requests' answers. A new connection starts
    /// again from [`ClientConfig::log_level`](crate::ClientConfig::log_level).
    pub fn set_logging_level(&self, level: LoggingLevel) -> Call<'_, SetLoggingLevel> {
        Call::new(self, SetLoggingLevel { level })
    }

    /// Any request (a method this crate has no typed call for), its result
    /// parsed as `R`.
    pub fn request<'a, P, R>(
        &'a self,
        method: &'a str,
        params: Option<&'a P>,
    ) -> Call<'a, Request<'a, P, R>>
    where
        P: Serialize + Sync + ?Sized,
        R: DeserializeOwned + Send,
    {
        Call::new(
            self,
            Request {
                method,
                params,
                result: PhantomData,
            },
        )
    }

    /// Sends a notification (no answer, so no options), waiting for room in
    /// the transport's queue.
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        self.conn()?.engine.notify(method, params).await
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
        self.shared.inbox.logs()
    }

    /// Notifications without a dedicated lane (bounded like the log queue).
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.shared.inbox.other()
    }

    /// A counter bumped by each `list_changed` notification of `kind`.
    /// Repeated notifications coalesce; the tool cache is already
    /// invalidated when the counter moves. In the stateless era the
    /// client asks for the kinds the server advertises on its
    /// `subscriptions/listen` stream.
    pub fn list_changed(&self, kind: ListKind) -> watch::Receiver<u64> {
        self.shared.inbox.list_changed(kind)
    }

    /// Notifications dropped so far because a bounded queue was full.
    pub fn notification_drops(&self) -> u64 {
        self.shared.inbox.drops()
    }
}
