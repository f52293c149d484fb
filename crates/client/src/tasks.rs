//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a
//! server may answer a request (`tools/call`) with a task handle instead of
//! its result; the client polls `tasks/get`, answers input the task needs
//! with `tasks/update`, and may `tasks/cancel` it.
//!
//! The redesigned extension has no blocking `tasks/result`: a completed
//! task carries its result in `tasks/get`. [`Client::wait_for_task`] polls
//! until then, honouring the server's `pollIntervalMs`, reporting each
//! status to the caller, and answering `input_required` with the client's
//! handlers (as multi round-trip requests are).

use std::time::Duration;

use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject, Payload};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::base::error::Error;
use crate::base::version::Era;
use crate::client::handle::Client;
use crate::session::rounds::Rounds;
use crate::types::{CallToolResult, Extra};

/// The extension's identifier (what [`ClientConfig::tasks`](crate::ClientConfig::tasks)
/// declares).
pub use crate::config::TASKS_EXTENSION;

/// Polling bounds: a server's `pollIntervalMs` is kept within them.
const MIN_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(30);
const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// Where a task is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Being processed.
    Working,
    /// Waiting for the client's input (`input_requests`).
    InputRequired,
    /// Done; `result` holds the request's result.
    Completed,
    /// Failed; `error` holds the JSON-RPC error.
    Failed,
    /// Cancelled.
    Cancelled,
    /// A status this client does not know.
    #[serde(other)]
    Unknown,
}

impl TaskStatus {
    /// True once the task will not change again.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// A task as `tasks/get`, `notifications/tasks` and a task-creating answer
/// describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Task {
    /// Its identifier.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What the server says about it.
    #[serde(
        rename = "statusMessage",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub status_message: Option<String>,
    /// How often to poll, as the server suggests (milliseconds).
    #[serde(
        rename = "pollIntervalMs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub poll_interval_ms: Option<u64>,
    /// The input it waits for (`input_required`).
    #[serde(
        rename = "inputRequests",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub input_requests: Option<Map<String, Value>>,
    /// The result (`completed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error (`failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// Everything else (`createdAt`, `lastUpdatedAt`, `ttlMs`...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// What a `tools/call` that a server may turn into a task gives.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ToolCallOutcome {
    /// The result, at once.
    Result(CallToolResult),
    /// A task to wait for ([`Client::wait_for_task`]).
    Task(Task),
}

impl Client {
    /// `tools/call` of `name`, accepting a task in place of the result (a
    /// server of the tasks extension decides which). The extension must be
    /// declared: [`ClientConfig::tasks`](crate::ClientConfig::tasks).
    pub async fn call_tool_or_task(
        &self,
        name: &str,
        arguments: &Value,
    ) -> Result<ToolCallOutcome, Error> {
        let value: Value = self
            .request(
                "tools/call",
                Some(&json!({"name": name, "arguments": arguments})),
            )
            .await?;
        if value.get("resultType").and_then(Value::as_str) == Some("task") {
            let task = serde_json::from_value(value).map_err(|e| Error::decode("task", e))?;
            return Ok(ToolCallOutcome::Task(task));
        }
        serde_json::from_value(value)
            .map(ToolCallOutcome::Result)
            .map_err(|e| Error::decode("tools/call", e))
    }

    /// `tasks/get`.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, Error> {
        self.request("tasks/get", Some(&json!({ "taskId": task_id })))
            .await
    }

    /// `tasks/update`: answers to the task's input requests.
    pub async fn update_task(
        &self,
        task_id: &str,
        input_responses: Map<String, Value>,
    ) -> Result<(), Error> {
        let _: Value = self
            .request(
                "tasks/update",
                Some(&json!({ "taskId": task_id, "inputResponses": input_responses })),
            )
            .await?;
        Ok(())
    }

    /// `tasks/cancel` (eventually consistent: the task may still finish).
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), Error> {
        let _: Value = self
            .request("tasks/cancel", Some(&json!({ "taskId": task_id })))
            .await?;
        Ok(())
    }

    /// Polls `task` until it ends, at most `max_wait`: calls `on_status`
    /// with each state seen, answers input requests with the client's
    /// handlers (each key once), and returns the result of a completed task.
    /// A failed task is an [`ErrorKind::Server`](crate::ErrorKind) error, a
    /// cancelled one [`ErrorKind::Cancelled`](crate::ErrorKind), running out
    /// of `max_wait` [`ErrorKind::Timeout`](crate::ErrorKind) (the task is
    /// not cancelled).
    pub async fn wait_for_task(
        &self,
        task: Task,
        max_wait: Duration,
        on_status: impl Fn(&Task) + Send,
    ) -> Result<Value, Error> {
        let deadline = Instant::now() + max_wait;
        let mut answered = std::collections::HashSet::new();
        let mut task = task;
        loop {
            on_status(&task);
            match task.status {
                TaskStatus::Completed => return Ok(task.result.unwrap_or(Value::Null)),
                TaskStatus::Failed => {
                    let error = task.error.unwrap_or(Value::Null);
                    let code = error
                        .get("code")
                        .and_then(Value::as_i64)
                        .and_then(|c| i32::try_from(c).ok())
                        .map_or(ErrorCode::INTERNAL_ERROR, ErrorCode);
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("the task failed");
                    let mut obj = ErrorObject::new(code, message);
                    obj.data = error.get("data").and_then(|d| Payload::from_value(d).ok());
                    return Err(Error::server(obj));
                }
                TaskStatus::Cancelled => return Err(Error::cancelled("the task was cancelled")),
                TaskStatus::InputRequired => {
                    let fresh: Map<String, Value> = task
                        .input_requests
                        .take()
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|(k, _)| !answered.contains(k))
                        .collect();
                    if !fresh.is_empty() {
                        answered.extend(fresh.keys().cloned());
                        let conn = self.conn()?;
                        let rounds = Rounds {
                            conn: &conn,
                            dispatcher: &self.shared.dispatcher,
                            modern: self.era() == Some(Era::Modern),
                            max_rounds: 0,
                            route: None,
                        };
                        let responses = rounds.fulfil(Some(fresh)).await?.unwrap_or_default();
                        self.update_task(&task.task_id, responses).await?;
                    }
                }
                TaskStatus::Working | TaskStatus::Unknown => {}
            }
            let pause = task
                .poll_interval_ms
                .map_or(DEFAULT_POLL, Duration::from_millis)
                .clamp(MIN_POLL, MAX_POLL);
            if Instant::now() + pause > deadline {
                return Err(Error::timeout(max_wait));
            }
            tokio::time::sleep(pause).await;
            task = self.get_task(&task.task_id).await?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_parse_every_status_and_keep_unknown_members() {
        let t: Task = serde_json::from_value(json!({
            "taskId": "t1", "status": "input_required", "pollIntervalMs": 10,
            "inputRequests": {"k": {"method": "roots/list"}}, "createdAt": "now", "ttlMs": null
        }))
        .unwrap();
        assert_eq!(t.status, TaskStatus::InputRequired);
        assert!(!t.status.is_terminal());
        assert_eq!(t.extra["createdAt"], "now");
        let t: Task = serde_json::from_value(json!({"taskId": "t", "status": "paused"})).unwrap();
        assert_eq!(t.status, TaskStatus::Unknown);
        for s in ["completed", "failed", "cancelled"] {
            let t: Task = serde_json::from_value(json!({"taskId": "t", "status": s})).unwrap();
            assert!(t.status.is_terminal());
        }
    }
}
