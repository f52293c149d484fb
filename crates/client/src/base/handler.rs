//! Handlers for requests the server sends us: sampling, roots, elicitation.

use std::future::Future;
use std::pin::Pin;

use mcpwire_codec::jsonrpc::{ErrorCode, Id};
use serde_json::Value;

use crate::types::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ListRootsResult,
};

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// About the server request a handler is answering.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestContext {
    /// The server's id for the request.
    pub id: Id,
    /// The method.
    pub method: String,
}

/// What a handler answers instead of a result: a JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HandlerError {
    /// The error code.
    pub code: ErrorCode,
    /// A short description.
    pub message: String,
    /// Extra detail.
    pub data: Option<Value>,
}

impl HandlerError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The user (or the application) refused the request.
    pub fn rejected(message: impl Into<String>) -> Self {
        Self::new(ErrorCode(-1), message)
    }
}

/// Answers `sampling/createMessage`: run the conversation through a model.
///
/// Handlers run on their own tasks, never on the task reading the
/// transport, and may take as long as they need (a user approving the
/// request, a model generating). A `notifications/cancelled` from the server
/// aborts the handler's task.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Produces the model's message.
    fn create_message(
        &self,
        params: CreateMessageParams,
        cx: RequestContext,
    ) -> BoxFuture<Result<CreateMessageResult, HandlerError>>;
}

/// Answers `roots/list`.
pub trait RootsHandler: Send + Sync + 'static {
    /// The roots the server may work in.
    fn list_roots(&self, cx: RequestContext) -> BoxFuture<Result<ListRootsResult, HandlerError>>;
}

/// Answers `elicitation/create`, in form or URL mode
/// ([`ElicitParams::is_url_mode`]).
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Asks the user.
    fn elicit(
        &self,
        params: ElicitParams,
        cx: RequestContext,
    ) -> BoxFuture<Result<ElicitResult, HandlerError>>;
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(CreateMessageParams, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
{
    fn create_message(
        &self,
        params: CreateMessageParams,
        cx: RequestContext,
    ) -> BoxFuture<Result<CreateMessageResult, HandlerError>> {
        Box::pin(self(params, cx))
    }
}

impl<F, Fut> RootsHandler for F
where
    F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ListRootsResult, HandlerError>> + Send + 'static,
{
    fn list_roots(&self, cx: RequestContext) -> BoxFuture<Result<ListRootsResult, HandlerError>> {
        Box::pin(self(cx))
    }
}

impl<F, Fut> ElicitationHandler for F
where
    F: Fn(ElicitParams, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
{
    fn elicit(
        &self,
        params: ElicitParams,
        cx: RequestContext,
    ) -> BoxFuture<Result<ElicitResult, HandlerError>> {
        Box::pin(self(params, cx))
    }
}
