//! `tools/call`: encoding the call (its replay safety and headers come
//! from the tool's listed definition), then sending it and validating its
//! structured result against the tool's output schema.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;

use super::pages::all_tools;
use super::send::rounds;
use crate::base::error::Error;
use crate::base::options::{Replay, RequestOptions};
use crate::base::stamp::Route;
use crate::base::version::Era;
use crate::cache::schema::ToolEntry;
use crate::client::handle::Client;
use crate::requests::engine::EncodedRequest;
use crate::session::live::LiveConnection;
use crate::types::CallToolResult;

/// A `tools/call` encoded on one connection, ready to send on it.
pub(super) struct ToolCall {
    conn: Arc<LiveConnection>,
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
pub(super) async fn encode_tool_call<P: Serialize + Sync + ?Sized, A: Serialize + ?Sized>(
    client: &Client,
    name: &str,
    params: &P,
    arguments: &A,
    opts: &RequestOptions,
) -> Result<ToolCall, Error> {
    let tools = &client.shared.inbox.tools;
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
pub(super) async fn finish_tool_call(
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
        let tools = &client.shared.inbox.tools;
        // Another call may have listed them meanwhile. The listing is
        // boxed: it happens once, and inline its state would make this
        // function's state, which every call in flight carries, half again
        // as large.
        let found = tools.lookup(name);
        if !found.needs_listing {
            tool = found.entry;
        } else if let Err(e) = Box::pin(all_tools(client, &RequestOptions::new())).await {
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
