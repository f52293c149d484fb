//! The methods a client may call, each answered from the fleet: the
//! handshake (`initialize`, or the stateless revision's `server/discover`),
//! `ping`, and the catalogue's tools, prompts and resources under their
//! public names.

use mcpwire_client::types::Arguments;
use mcpwire_client::{CancellationToken, RequestOptions};
use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject, Payload};
use mcpwire_manager::{Error as FleetError, Manager};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::wire::{Outcome, fleet_error, invalid_params};

/// The revisions of the `initialize` era this server speaks, newest
/// first. A client asking for one of them gets it; any other gets the
/// first.
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The stateless revisions this server speaks, newest first: a request
/// declaring one of them in its `_meta` is served on its own, without
/// `initialize`.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// The `_meta` key under which a result of the stateless era names its
/// server.
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The stateless revision's error for a request at a version the server
/// does not speak.
pub(crate) const UNSUPPORTED_VERSION: ErrorCode = ErrorCode(-32022);

/// The stateless revision's error for HTTP header fields that are missing
/// or do not match the request's body.
pub(crate) const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);

/// The stateless revision `version` names, if this server speaks it.
pub(crate) fn modern_version(version: &str) -> Option<&'static str> {
    MODERN_VERSIONS.iter().find(|v| **v == version).copied()
}

/// A request's `_meta`, as far as the era goes: the revision it declares.
#[derive(Deserialize)]
struct EraParams {
    #[serde(rename = "_meta", default)]
    meta: Option<EraMeta>,
}

#[derive(Deserialize)]
struct EraMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    version: Option<Value>,
}

/// The era of a request of `method` with `params`: `Ok(None)` for the
/// `initialize` era (no revision in `_meta`, or `initialize` itself, which
/// selects that era whatever it carries); `Ok(Some(version))` for a
/// stateless revision we speak; an unsupported-version error for any other
/// revision declared.
pub(crate) fn era_of(
    method: &str,
    params: Option<&Payload>,
) -> Result<Option<&'static str>, ErrorObject> {
    if method == "initialize" {
        return Ok(None);
    }
    // Params that are not an object, or a `_meta` that is not one, declare
    // nothing: the method itself says what is wrong with them.
    let Some(Ok(EraParams { meta: Some(meta) })) = params.map(Payload::deserialize::<EraParams>)
    else {
        return Ok(None);
    };
    match meta.version {
        None => Ok(None),
        Some(Value::String(v)) => match modern_version(&v) {
            Some(version) => Ok(Some(version)),
            None => Err(unsupported_version(&Value::String(v))),
        },
        Some(other) => Err(unsupported_version(&other)),
    }
}

/// The unsupported-version error for a request at `requested`: every
/// revision we speak, stateless ones first, so a client of either era
/// learns how to reach us.
pub(crate) fn unsupported_version(requested: &Value) -> ErrorObject {
    let supported: Vec<&str> = MODERN_VERSIONS
        .iter()
        .chain(SUPPORTED_VERSIONS)
        .copied()
        .collect();
    let mut error = ErrorObject::new(
        UNSUPPORTED_VERSION,
        format!("unsupported protocol version {requested}"),
    );
    error.data = Payload::from_value(&json!({"supported": supported, "requested": requested})).ok();
    error
}

/// True if `method` is one this server answers in the stateless era
/// (`modern`) or in the `initialize` era. The stateless revision has no
/// `ping` and no `logging/setLevel`.
pub(crate) fn is_known(method: &str, modern: bool) -> bool {
    match method {
        "server/discover"
        | "tools/list"
        | "tools/call"
        | "prompts/list"
        | "prompts/get"
        | "resources/list"
        | "resources/read"
        | "resources/templates/list"
        | "completion/complete" => true,
        "initialize" | "ping" | "logging/setLevel" => !modern,
        _ => false,
    }
}

/// The `server/discover` result: the stateless revisions we speak, what we
/// serve, who we are. No `listChanged` (this server has no
/// `subscriptions/listen` to send it on) and no `logging` (no log message
/// relates to one stateless request).
pub(crate) fn discover_result(name: &str, instructions: Option<&str>) -> Value {
    let mut result = json!({
        "supportedVersions": MODERN_VERSIONS,
        "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "completions": {}},
        "serverInfo": server_info(name),
    });
    if let Some(text) = instructions {
        result["instructions"] = json!(text);
    }
    result
}

fn server_info(name: &str) -> Value {
    json!({"name": name, "version": env!("CARGO_PKG_VERSION")})
}

/// Completes a result of `method` for the stateless era: `resultType`
/// (every result of the revision has one), the server's identity in
/// `_meta`, and on lists and reads the cache hints the revision requires.
/// The hints keep nothing (`ttlMs` 0): the fleet's catalogue changes when
/// its servers do, and a stateless client has no `list_changed` from us.
pub(crate) fn stateless_result(method: &str, name: &str, result: &mut Value) {
    let Some(object) = result.as_object_mut() else {
        return;
    };
    object
        .entry("resultType")
        .or_insert_with(|| json!("complete"));
    if matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    ) {
        object.entry("ttlMs").or_insert_with(|| json!(0));
        object
            .entry("cacheScope")
            .or_insert_with(|| json!("private"));
    }
    let meta = object.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(META_SERVER_INFO.to_owned(), server_info(name));
    }
}

/// The revision answered to a client that asked for `asked`.
pub(crate) fn negotiate(asked: Option<&str>) -> &'static str {
    asked
        .and_then(|a| SUPPORTED_VERSIONS.iter().find(|v| **v == a))
        .copied()
        .unwrap_or(SUPPORTED_VERSIONS[0])
}

/// `params`, as the method's type; absent params are an empty object.
pub(crate) fn params<T: DeserializeOwned>(params: Option<&Payload>) -> Result<T, ErrorObject> {
    match params {
        Some(p) => p.deserialize().map_err(invalid_params),
        None => serde_json::from_value(json!({})).map_err(invalid_params),
    }
}

/// `initialize` params: only what we use.
#[derive(Deserialize)]
pub(crate) struct InitializeParams {
    #[serde(rename = "protocolVersion")]
    pub(crate) protocol_version: String,
}

/// The `initialize` result for revision `version`.
pub(crate) fn initialize_result(version: &str, name: &str, instructions: Option<&str>) -> Value {
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"listChanged": true},
            "logging": {},
            "completions": {}
        },
        "serverInfo": server_info(name)
    });
    if let Some(text) = instructions {
        result["instructions"] = json!(text);
    }
    result
}

/// `logging/setLevel` params.
#[derive(Deserialize)]
pub(crate) struct SetLevel {
    pub(crate) level: mcpwire_client::types::LoggingLevel,
}

/// A request's `_meta`: only the progress token.
#[derive(Deserialize, Default)]
pub(crate) struct RequestMeta {
    #[serde(rename = "progressToken", default)]
    pub(crate) progress_token: Option<ProgressToken>,
}

/// A progress token: a string or an integer, as the client sent it.
#[derive(Deserialize, serde::Serialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub(crate) enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

/// `tools/call` params.
#[derive(Deserialize)]
pub(crate) struct CallParams {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: Option<Arguments>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: Option<RequestMeta>,
}

/// `prompts/get` params.
#[derive(Deserialize)]
struct PromptParams {
    name: String,
    #[serde(default)]
    arguments: Option<Arguments>,
}

/// `resources/read` params.
#[derive(Deserialize)]
struct ReadParams {
    uri: String,
}

/// Any value as JSON, or an internal error saying which answer failed.
fn to_json<T: serde::Serialize>(what: &str, value: &T) -> Outcome {
    serde_json::to_value(value).map_err(|e| {
        ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("cannot encode {what}: {e}"),
        )
    })
}

pub(crate) fn list_tools(manager: &Manager) -> Outcome {
    let tools: Vec<_> = manager
        .tools()
        .map_err(|e| fleet_error(&e))?
        .iter()
        .map(|t| t.public_tool())
        .collect();
    Ok(json!({ "tools": to_json("the tools", &tools)? }))
}

pub(crate) fn list_prompts(manager: &Manager) -> Outcome {
    let prompts: Vec<_> = manager
        .prompts()
        .map_err(|e| fleet_error(&e))?
        .into_iter()
        .map(|p| {
            let mut prompt = p.prompt;
            prompt.name = p.name;
            prompt
        })
        .collect();
    Ok(json!({ "prompts": to_json("the prompts", &prompts)? }))
}

pub(crate) fn list_resources(manager: &Manager) -> Outcome {
    let resources: Vec<_> = manager
        .resources()
        .into_iter()
        .map(|r| r.resource)
        .collect();
    Ok(json!({ "resources": to_json("the resources", &resources)? }))
}

pub(crate) fn list_templates(manager: &Manager) -> Outcome {
    let templates: Vec<_> = manager
        .resource_templates()
        .into_iter()
        .map(|t| t.template)
        .collect();
    Ok(json!({ "resourceTemplates": to_json("the templates", &templates)? }))
}

pub(crate) async fn get_prompt(manager: &Manager, raw: Option<&Payload>) -> Outcome {
    let p: PromptParams = params(raw)?;
    let result = manager
        .get_prompt(&p.name, p.arguments)
        .await
        .map_err(|e| fleet_error(&e))?;
    to_json("the prompt", &result)
}

pub(crate) async fn read_resource(manager: &Manager, raw: Option<&Payload>) -> Outcome {
    let p: ReadParams = params(raw)?;
    let result = manager
        .read_resource(&p.uri)
        .await
        .map_err(|e| fleet_error(&e))?;
    to_json("the resource", &result)
}

/// Calls the tool through the fleet with `options` (progress, the
/// cancellation token). A hook's denial is a tool error the model can
/// read, not a protocol error: the call was understood and refused.
pub(crate) async fn call_tool(
    manager: &Manager,
    call: CallParams,
    options: RequestOptions,
) -> Outcome {
    let arguments = call.arguments.unwrap_or_default();
    match manager
        .call_tool(&call.name, &arguments)
        .options(options)
        .await
    {
        Ok(result) => to_json("the tool's result", &result),
        Err(e @ FleetError::Denied { .. }) => Ok(json!({
            "content": [{"type": "text", "text": e.to_string()}],
            "isError": true
        })),
        Err(e) => Err(fleet_error(&e)),
    }
}

/// Options for a call the client may cancel with `cancel`.
pub(crate) fn call_options(cancel: CancellationToken) -> RequestOptions {
    RequestOptions::new().cancel_token(cancel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_revision_is_answered_as_asked_and_any_other_with_the_latest() {
        assert_eq!(negotiate(Some("2025-03-26")), "2025-03-26");
        assert_eq!(negotiate(Some("2024-11-05")), "2024-11-05");
        assert_eq!(negotiate(Some("1999-01-01")), "2025-11-25");
        assert_eq!(negotiate(None), "2025-11-25");
    }

    #[test]
    fn a_progress_token_is_a_string_or_an_integer() {
        let meta: RequestMeta = serde_json::from_value(json!({"progressToken": 7})).unwrap();
        assert_eq!(meta.progress_token, Some(ProgressToken::Number(7)));
        let meta: RequestMeta = serde_json::from_value(json!({"progressToken": "t"})).unwrap();
        assert_eq!(meta.progress_token, Some(ProgressToken::String("t".into())));
        assert!(serde_json::from_value::<RequestMeta>(json!({"progressToken": [1]})).is_err());
    }
}
