//! [`CallHook`]: code that runs before and after every routed tool call,
//! for approval, policy and logging, and can deny the call.

use std::future::Future;
use std::pin::Pin;

use mcpwire_client::types::CallToolResult;
use serde_json::Value;

use crate::error::Error;

/// What a hook returns: go on, or deny with a reason.
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<(), Denial>> + Send + 'a>>;

/// A tool call about to be sent, or just answered.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CallInfo<'a> {
    /// The public name called (`github__create_issue`).
    pub name: &'a str,
    /// The server it routes to.
    pub server: &'a str,
    /// The tool's own name on that server.
    pub tool: &'a str,
    /// The arguments, as they will be (or were) sent.
    pub arguments: &'a Value,
    /// The server is trusted (Gemini CLI's `trust`): its calls need no
    /// confirmation. An approval hook reads it; the manager does not.
    pub trusted: bool,
    /// The tool's definition changed since it was approved, and the
    /// server's pin policy ([`PinPolicy::Warn`](crate::PinPolicy::Warn))
    /// keeps it offered: an approval hook may ask again.
    pub changed: bool,
}

/// A hook's refusal, with a reason for the caller (and, through it, the
/// model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    reason: String,
}

impl Denial {
    /// Denies with `reason`.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Runs around every tool call the manager routes, in the order hooks were
/// added: [`before_call`](Self::before_call) before anything is sent (a
/// denial means the server never sees the call), and
/// [`after_call`](Self::after_call) once it is answered (a denial withholds
/// the answer and the caller gets
/// [`Error::Denied`](crate::Error::Denied)). Both default to allowing.
///
/// Hooks may wait (ask a person); the call waits with them, within no
/// timeout of the manager's. With a hook installed, the arguments are
/// turned into a JSON value once, for the hooks, and that value is sent.
///
/// ```
/// use mcpwire_manager::{CallHook, CallInfo, Denial, HookFuture};
///
/// struct NoDeletes;
///
/// impl CallHook for NoDeletes {
///     fn before_call<'a>(&'a self, call: &'a CallInfo<'a>) -> HookFuture<'a> {
///         let verdict = if call.tool.starts_with("delete") && !call.trusted {
///             Err(Denial::new("deleting needs a person's approval"))
///         } else {
///             Ok(())
///         };
///         Box::pin(std::future::ready(verdict))
///     }
/// }
/// ```
pub trait CallHook: Send + Sync + 'static {
    /// Before the call is sent.
    fn before_call<'a>(&'a self, call: &'a CallInfo<'a>) -> HookFuture<'a> {
        let _ = call;
        Box::pin(std::future::ready(Ok(())))
    }

    /// After the call was answered, with its outcome.
    fn after_call<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        outcome: Result<&'a CallToolResult, &'a Error>,
    ) -> HookFuture<'a> {
        let _ = (call, outcome);
        Box::pin(std::future::ready(Ok(())))
    }
}
