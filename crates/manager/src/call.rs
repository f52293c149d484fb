//! Routed requests ([`Routed`]): [`Manager::call_tool`],
//! [`Manager::get_prompt`], [`Manager::read_resource`]. Each finds its
//! server in the catalogue, starts a lazy server on the way, takes a call
//! slot under the server's concurrency cap; a tool call runs the hooks.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

use mcpwire_client::types::{Arguments, CallToolResult, GetPromptResult, ReadResourceResult};
use mcpwire_client::{Client, RequestOptions};
use serde::Serialize;

use crate::error::{Error, HookStage};
use crate::fleet::Fleet;
use crate::hooks::CallInfo;
use crate::manager::Manager;
use crate::naming::SEPARATOR;
use crate::slot::{Entered, Slot};
use crate::start::{Retry, client_for_call, is_live};

/// A routed request, sent when awaited; options are set on the way, with
/// the same setters as the client's [`Call`](mcpwire_client::Call). Made
/// by [`Manager::call_tool`], [`Manager::get_prompt`] and
/// [`Manager::read_resource`]; `Op` says which request.
#[must_use = "a call does nothing until awaited"]
pub struct Routed<'a, Op> {
    manager: &'a Manager,
    op: Op,
    options: RequestOptions,
    retry: Retry,
}

/// A routed `tools/call`.
pub type ToolCall<'a, A> = Routed<'a, CallTool<'a, A>>;

impl<Op: std::fmt::Debug> std::fmt::Debug for Routed<'_, Op> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routed")
            .field("op", &self.op)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl<'a, Op> Routed<'a, Op> {
    fn new(manager: &'a Manager, op: Op) -> Self {
        Self {
            manager,
            op,
            options: RequestOptions::new(),
            retry: Retry::No,
        }
    }

    mcpwire_client::request_option_setters!(options);

    /// If the server has failed, start it again (once) before the request,
    /// instead of failing with [`Error::ServerFailed`]. A call whose outcome
    /// is unknown is never sent again: this is about the server, not the
    /// call.
    pub fn retry_failed(mut self) -> Self {
        self.retry = Retry::Failed;
        self
    }
}

/// A routed `tools/call` by public name.
pub struct CallTool<'a, A> {
    name: &'a str,
    arguments: A,
}

impl<A> std::fmt::Debug for CallTool<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the arguments: they may hold secrets.
        f.debug_struct("CallTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A routed `prompts/get` by public name.
pub struct GetPrompt<'a> {
    name: &'a str,
    arguments: Option<Arguments>,
}

impl std::fmt::Debug for GetPrompt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the arguments: they may hold secrets.
        f.debug_struct("GetPrompt")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A routed `resources/read`.
#[derive(Debug)]
pub struct ReadResource<'a> {
    uri: &'a str,
}

/// The boxed future awaiting a [`Routed`] gives.
type RoutedFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

impl<'a, A> IntoFuture for Routed<'a, CallTool<'a, A>>
where
    A: Serialize + Send + Sync + 'a,
{
    type Output = Result<CallToolResult, Error>;
    type IntoFuture = RoutedFuture<'a, CallToolResult>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

impl<'a> IntoFuture for Routed<'a, GetPrompt<'a>> {
    type Output = Result<GetPromptResult, Error>;
    type IntoFuture = RoutedFuture<'a, GetPromptResult>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

impl<'a> IntoFuture for Routed<'a, ReadResource<'a>> {
    type Output = Result<ReadResourceResult, Error>;
    type IntoFuture = RoutedFuture<'a, ReadResourceResult>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

impl<A: Serialize + Send + Sync> Routed<'_, CallTool<'_, A>> {
    async fn run(self) -> Result<CallToolResult, Error> {
        let Routed {
            manager,
            op: CallTool { name, arguments },
            options,
            retry,
        } = self;
        let fleet = &manager.fleet;
        if fleet.is_closed() {
            return Err(Error::Closed);
        }
        let (slot, tool, client, _entered) = route_tool(fleet, name, retry).await?;
        let _permit = slot.permit().await;
        let server = slot.name();
        let request = |source| Error::Request {
            server: server.to_owned(),
            source,
        };
        if fleet.options.hooks.is_empty() {
            return client
                .call_tool(&tool, &arguments)
                .options(options)
                .await
                .map_err(request);
        }

        let arguments = serde_json::to_value(&arguments).map_err(|e| Error::Arguments {
            tool: name.to_owned(),
            source: Arc::new(e),
        })?;
        let info = CallInfo {
            name,
            server,
            tool: &tool,
            arguments: &arguments,
            trusted: slot.spec.policy.trust,
            changed: fleet.catalog().changed_since_approval(name),
        };
        let denied = |denial: crate::hooks::Denial, stage| Error::Denied {
            name: name.to_owned(),
            server: server.to_owned(),
            reason: denial.reason().to_owned(),
            stage,
        };
        for hook in &fleet.options.hooks {
            hook.before_call(&info)
                .await
                .map_err(|d| denied(d, HookStage::Before))?;
        }
        let outcome = client
            .call_tool(&tool, &arguments)
            .options(options)
            .await
            .map_err(request);
        for hook in &fleet.options.hooks {
            hook.after_call(&info, outcome.as_ref())
                .await
                .map_err(|d| denied(d, HookStage::After))?;
        }
        outcome
    }
}

/// The server, the tool's own name and the client for public tool `name`,
/// with the call counted as under way on the server.
///
/// A name the catalogue does not know but that starts with the name of a
/// server not started yet (`{server}__{tool}`, a lazy server without a
/// saved catalogue) starts that server, then is looked up again. A server
/// started here is looked up again too: the live lists decide.
async fn route_tool(
    fleet: &Arc<Fleet>,
    name: &str,
    retry: Retry,
) -> Result<(Arc<Slot>, String, Client, Entered), Error> {
    let routing = fleet.routing();
    let routed = routing
        .catalog
        .route_tool(name)
        .map(|r| (routing.roster.slots[r.server].clone(), r.name.clone()));
    let (slot, tool) = match routed {
        Ok(found) => found,
        Err(e @ Error::UnknownTool { .. }) => match not_started(fleet, name) {
            Some(slot) => {
                let own = name[slot.name().len() + SEPARATOR.len()..].to_owned();
                (slot, own)
            }
            None => return Err(e),
        },
        Err(e) => return Err(e),
    };
    let was_live = is_live(&slot);
    let (client, entered) = client_for_call(fleet, &slot, retry).await?;
    if was_live {
        return Ok((slot, tool, client, entered));
    }
    let routing = fleet.routing();
    let route = routing.catalog.route_tool(name)?;
    let now = &routing.roster.slots[route.server];
    if !Arc::ptr_eq(now, &slot) {
        // Another server claims the name now: what the catalogue says wins.
        let other = now.clone();
        let (client, entered) = client_for_call(fleet, &other, retry).await?;
        return Ok((other, route.name.clone(), client, entered));
    }
    Ok((slot, route.name.clone(), client, entered))
}

/// The server named by `name`'s `{server}__` prefix, if it has not offered
/// its live lists yet (lazy, failed, or not started).
fn not_started(fleet: &Fleet, name: &str) -> Option<Arc<Slot>> {
    let (server, tool) = name.split_once(SEPARATOR)?;
    let slot = fleet.slot(server)?;
    (!tool.is_empty() && !is_live(&slot)).then_some(slot)
}

impl Manager {
    /// Calls the tool with public name `name` on the server it routes to:
    /// starts a lazy server first, waits for a call slot under the server's
    /// concurrency cap, runs the hooks. An unknown name fails here, without
    /// sending anything, with the closest names
    /// ([`Error::UnknownTool`]); so does a tool the server's filters leave
    /// out ([`Error::Filtered`]).
    ///
    /// A session that expires under the call is re-initialized by the
    /// client, which sends the call again only if it is safe (a read-only
    /// or idempotent tool); otherwise the outcome is unknown and the
    /// call fails with the client's `OutcomeUnknown` kind as its source.
    pub fn call_tool<'a, A>(&'a self, name: &'a str, arguments: A) -> ToolCall<'a, A>
    where
        A: Serialize + Send + Sync + 'a,
    {
        Routed::new(self, CallTool { name, arguments })
    }

    /// Gets the prompt with public name `name` from its server.
    pub fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<Arguments>,
    ) -> Routed<'a, GetPrompt<'a>> {
        Routed::new(self, GetPrompt { name, arguments })
    }

    /// Reads resource `uri` from the server that owns it: the one that
    /// listed it, else the one with the longest matching template.
    pub fn read_resource<'a>(&'a self, uri: &'a str) -> Routed<'a, ReadResource<'a>> {
        Routed::new(self, ReadResource { uri })
    }
}

impl Routed<'_, GetPrompt<'_>> {
    async fn run(self) -> Result<GetPromptResult, Error> {
        let Routed {
            manager,
            op: GetPrompt { name, arguments },
            options,
            retry,
        } = self;
        let fleet = &manager.fleet;
        if fleet.is_closed() {
            return Err(Error::Closed);
        }
        let (slot, prompt) = {
            let routing = fleet.routing();
            let route = routing.catalog.route_prompt(name)?;
            (
                routing.roster.slots[route.server].clone(),
                route.name.clone(),
            )
        };
        let (client, _entered) = client_for_call(fleet, &slot, retry).await?;
        let _permit = slot.permit().await;
        client
            .get_prompt(&prompt, arguments)
            .options(options)
            .await
            .map_err(|source| Error::Request {
                server: slot.name().to_owned(),
                source,
            })
    }
}

impl Routed<'_, ReadResource<'_>> {
    async fn run(self) -> Result<ReadResourceResult, Error> {
        let Routed {
            manager,
            op: ReadResource { uri },
            options,
            retry,
        } = self;
        let fleet = &manager.fleet;
        if fleet.is_closed() {
            return Err(Error::Closed);
        }
        let slot = {
            let routing = fleet.routing();
            routing.roster.slots[routing.catalog.route_resource(uri)?].clone()
        };
        let (client, _entered) = client_for_call(fleet, &slot, retry).await?;
        let _permit = slot.permit().await;
        client
            .read_resource(uri)
            .options(options)
            .await
            .map_err(|source| Error::Request {
                server: slot.name().to_owned(),
                source,
            })
    }
}
