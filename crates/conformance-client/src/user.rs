//! Handlers that play the user and the model when a scenario's server asks
//! something of the client.

use mcpwire::client::types::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    ListRootsResult,
};
use mcpwire::client::{ClientConfig, HandlerError, RequestContext};

/// `config` with a sampling, a roots and an elicitation handler.
pub(crate) fn with_handlers(config: ClientConfig) -> ClientConfig {
    config
        .sampling(sample)
        .roots(roots)
        .elicitation(accept_as_offered)
}

/// The "model" answers every conversation with the same sentence.
async fn sample(
    _params: CreateMessageParams,
    _cx: RequestContext,
) -> Result<CreateMessageResult, HandlerError> {
    Ok(CreateMessageResult::text(
        "mcpwire-conformance",
        "This is the conformance client's canned answer.",
    ))
}

/// No roots.
async fn roots(_cx: RequestContext) -> Result<ListRootsResult, HandlerError> {
    Ok(ListRootsResult::new(Vec::new()))
}

/// The "user" submits the form as it was offered: fields the server gave
/// defaults for keep them (the library fills them in), others stay empty. A
/// URL-mode request is declined: there is no browser here.
async fn accept_as_offered(
    params: ElicitParams,
    _cx: RequestContext,
) -> Result<ElicitResult, HandlerError> {
    if params.is_url_mode() {
        return Ok(ElicitResult::new(ElicitAction::Decline, None));
    }
    Ok(ElicitResult::new(
        ElicitAction::Accept,
        Some(serde_json::Map::new()),
    ))
}
