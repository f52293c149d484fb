//! `completion/complete` through the fleet: a prompt's argument goes to
//! the server that owns the prompt (by its public name, asked under its
//! own), a resource template's variable to the server that lists the
//! template (or the resource), each through that server's client.
//!
//! The manager routes no completions itself, so this asks the owning
//! server's client directly ([`Manager::client`]): the manager's call hooks
//! and concurrency cap do not apply, its filters do (a filtered prompt is
//! not in the catalogue, so it is not found).

use mcpwire_client::types::{Arguments, CompletionReference};
use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject, Payload};
use mcpwire_manager::Manager;
use serde::Deserialize;

use crate::methods::params;
use crate::wire::{Outcome, chain, fleet_error, invalid_params};

/// `completion/complete` params.
#[derive(Deserialize)]
struct CompleteParams {
    #[serde(rename = "ref")]
    reference: CompletionReference,
    argument: Argument,
    #[serde(default)]
    context: Option<Context>,
}

#[derive(Deserialize)]
struct Argument {
    name: String,
    value: String,
}

#[derive(Deserialize)]
struct Context {
    #[serde(default)]
    arguments: Option<Arguments>,
}

/// The server owning `reference` (public names), and the reference as
/// that server knows it.
fn route(
    manager: &Manager,
    reference: CompletionReference,
) -> Result<(String, CompletionReference), ErrorObject> {
    match reference {
        CompletionReference::Prompt { name } => {
            let prompts = manager.prompts().map_err(|e| fleet_error(&e))?;
            let routed = prompts
                .into_iter()
                .find(|p| p.name == name)
                .ok_or_else(|| invalid_params(format!("unknown prompt {name:?}")))?;
            let own = CompletionReference::Prompt {
                name: routed.prompt.name,
            };
            Ok((routed.server, own))
        }
        CompletionReference::Resource { uri } => {
            let server = manager
                .resource_templates()
                .into_iter()
                .find(|t| t.template.uri_template == uri)
                .map(|t| t.server)
                .or_else(|| {
                    let resources = manager.resources();
                    resources
                        .into_iter()
                        .find(|r| r.resource.uri == uri)
                        .map(|r| r.server)
                })
                .ok_or_else(|| {
                    ErrorObject::new(
                        ErrorCode::RESOURCE_NOT_FOUND,
                        format!("no server lists the resource template {uri:?}"),
                    )
                })?;
            Ok((server, CompletionReference::Resource { uri }))
        }
        _ => Err(invalid_params("an unknown kind of reference")),
    }
}

/// Answers `completion/complete` from the server that owns the reference.
pub(crate) async fn complete(manager: &Manager, raw: Option<&Payload>) -> Outcome {
    let p: CompleteParams = params(raw)?;
    let (server, reference) = route(manager, p.reference)?;
    // A lazy server listed from a saved catalogue is started first.
    let client = match manager.client(&server) {
        Some(client) => client,
        None => {
            manager
                .connect(&server)
                .await
                .map_err(|e| fleet_error(&e))?;
            manager.client(&server).ok_or_else(|| {
                ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("server {server} is not connected"),
                )
            })?
        }
    };
    let context = p.context.and_then(|c| c.arguments);
    let result = client
        .complete(reference, &p.argument.name, &p.argument.value, context)
        .await
        .map_err(|e| match e.server_error() {
            // What the server answered, as it came.
            Some(upstream) => upstream.clone(),
            None => ErrorObject::new(ErrorCode::INTERNAL_ERROR, chain(&e)),
        })?;
    serde_json::to_value(&result).map_err(|e| {
        ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("cannot encode the completion: {e}"),
        )
    })
}
