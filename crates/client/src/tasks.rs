//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a
//! server may answer a request (`tools/call`) with a task handle instead of
//! its result; the client polls `tasks/get`, answers input the task needs
//! with `tasks/update`, and may `tasks/cancel` it.
//!
//! The redesigned extension has no blocking `tasks/result`: a completed
//! task carries its result in `tasks/get`. [`Tasks::wait`] polls
//! until then, honouring the server's `pollIntervalMs`, reporting each
//! status to the caller, and answering `input_required` with the client's
//! handlers (as multi round-trip requests are).

use std::time::Duration;

use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject, Payload};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::base::error::Error;
use crate::base::options::{Replay, RequestOptions};
use crate::client::call::{Call, CallFuture, Operation, sealed};
use crate::client::handle::Client;
use crate::ops::{operation, typed};
use crate::session::rounds::answer_inputs;
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
    /// A task to wait for ([`Tasks::wait`]).
    Task(Task),
}

impl Client {
    /// The tasks extension's requests: see [`Tasks`].
    pub fn tasks(&self) -> Tasks<'_> {
        Tasks { client: self }
    }
}

/// The requests of the tasks extension on one client, from
/// [`Client::tasks`]. Each is a [`Call`]: it takes the same options as
/// every other request, and runs when awaited. The extension must be
/// declared: [`ClientConfig::tasks`](crate::ClientConfig::tasks).
#[derive(Debug, Clone, Copy)]
pub struct Tasks<'c> {
    client: &'c Client,
}

impl<'c> Tasks<'c> {
    /// `tools/call` of `name`, accepting a task in place of the result (a
    /// server of the tasks extension decides which).
    pub fn call_tool<'a>(&self, name: &'a str, arguments: &'a Value) -> Call<'a, CallToolOrTask<'a>>
    where
        'c: 'a,
    {
        Call::new(self.client, CallToolOrTask { name, arguments })
    }

    /// `tasks/get`.
    pub fn get<'a>(&self, task_id: &'a str) -> Call<'a, GetTask<'a>>
    where
        'c: 'a,
    {
        Call::new(self.client, GetTask { task_id })
    }

    /// `tasks/update`: answers to the task's input requests.
    pub fn update<'a>(
        &self,
        task_id: &'a str,
        input_responses: Map<String, Value>,
    ) -> Call<'a, UpdateTask<'a>>
    where
        'c: 'a,
    {
        Call::new(
            self.client,
            UpdateTask {
                task_id,
                input_responses,
            },
        )
    }

    /// `tasks/cancel` (eventually consistent: the task may still finish).
    pub fn cancel<'a>(&self, task_id: &'a str) -> Call<'a, CancelTask<'a>>
    where
        'c: 'a,
    {
        Call::new(self.client, CancelTask { task_id })
    }

    /// Polls `task` until it ends, at most `max_wait`: calls `on_status`
    /// with each state seen, answers input requests with the client's
    /// handlers (each key once), and returns the result of a completed task.
    /// A failed task is an [`ErrorKind::Server`](crate::ErrorKind) error, a
    /// cancelled one [`ErrorKind::Cancelled`](crate::ErrorKind), running out
    /// of `max_wait` [`ErrorKind::Timeout`](crate::ErrorKind) (the task is
    /// not cancelled). The call's options apply to each `tasks/get` and
    /// `tasks/update` it sends.
    pub fn wait<F>(&self, task: Task, max_wait: Duration, on_status: F) -> Call<'c, WaitForTask<F>>
    where
        F: Fn(&Task) + Send,
    {
        Call::new(
            self.client,
            WaitForTask {
                task,
                max_wait,
                on_status,
            },
        )
    }
}

/// `tools/call`, answered with a result or a task.
#[derive(Debug)]
pub struct CallToolOrTask<'a> {
    name: &'a str,
    arguments: &'a Value,
}

operation!(['a] CallToolOrTask<'a> => ToolCallOutcome, |this, client, opts| {
    let params = json!({"name": this.name, "arguments": this.arguments});
    let value: Value = typed(client, "tools/call", Some(&params), &opts, Replay::ByMethod).await?;
    if value.get("resultType").and_then(Value::as_str) == Some("task") {
        let task = serde_json::from_value(value).map_err(|e| Error::decode("task", e))?;
        return Ok(ToolCallOutcome::Task(task));
    }
    serde_json::from_value(value)
        .map(ToolCallOutcome::Result)
        .map_err(|e| Error::decode("tools/call", e))
});

/// `tasks/get`.
#[derive(Debug)]
pub struct GetTask<'a> {
    task_id: &'a str,
}

operation!(['a] GetTask<'a> => Task, |this, client, opts| {
    get(client, this.task_id, &opts).await
});

/// `tasks/update`.
#[derive(Debug)]
pub struct UpdateTask<'a> {
    task_id: &'a str,
    input_responses: Map<String, Value>,
}

operation!(['a] UpdateTask<'a> => (), |this, client, opts| {
    update(client, this.task_id, this.input_responses, &opts).await
});

/// `tasks/cancel`.
#[derive(Debug)]
pub struct CancelTask<'a> {
    task_id: &'a str,
}

operation!(['a] CancelTask<'a> => (), |this, client, opts| {
    let params = json!({ "taskId": this.task_id });
    let _: Value = typed(client, "tasks/cancel", Some(&params), &opts, Replay::ByMethod).await?;
    Ok(())
});

/// Polling a task until it ends.
pub struct WaitForTask<F> {
    task: Task,
    max_wait: Duration,
    on_status: F,
}

impl<F> std::fmt::Debug for WaitForTask<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitForTask")
            .field("task", &self.task.task_id)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}

operation!([F] WaitForTask<F> => Value, |this, client, opts| {
    wait(client, this, &opts).await
} where F: Fn(&Task) + Send);

/// `tasks/get` of `task_id`: a read, so safe to send again.
async fn get(client: &Client, task_id: &str, opts: &RequestOptions) -> Result<Task, Error> {
    let params = json!({ "taskId": task_id });
    typed(client, "tasks/get", Some(&params), opts, Replay::Allow).await
}

/// `tasks/update` of `task_id`.
async fn update(
    client: &Client,
    task_id: &str,
    input_responses: Map<String, Value>,
    opts: &RequestOptions,
) -> Result<(), Error> {
    let params = json!({ "taskId": task_id, "inputResponses": input_responses });
    let _: Value = typed(
        client,
        "tasks/update",
        Some(&params),
        opts,
        Replay::ByMethod,
    )
    .await?;
    Ok(())
}

/// The body of [`Tasks::wait`].
async fn wait<F: Fn(&Task) + Send>(
    client: &Client,
    wait: WaitForTask<F>,
    opts: &RequestOptions,
) -> Result<Value, Error> {
    let WaitForTask {
        mut task,
        max_wait,
        on_status,
    } = wait;
    let deadline = Instant::now() + max_wait;
    let mut answered = std::collections::HashSet::new();
    loop {
        on_status(&task);
        match task.status {
            TaskStatus::Completed => return Ok(task.result.unwrap_or(Value::Null)),
            TaskStatus::Failed => return Err(failure(task.error.unwrap_or(Value::Null))),
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
                    let responses = answer_inputs(&client.shared.dispatcher, fresh).await?;
                    update(client, &task.task_id, responses, opts).await?;
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
        task = get(client, &task.task_id, opts).await?;
    }
}

/// The error of a failed task, from its JSON-RPC `error`.
fn failure(error: Value) -> Error {
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
    Error::server(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_shows_its_task_and_bound() {
        let task: Task =
            serde_json::from_value(json!({"taskId": "t9", "status": "working"})).unwrap();
        let wait = WaitForTask {
            task,
            max_wait: Duration::from_secs(7),
            on_status: |_: &Task| {},
        };
        let shown = format!("{wait:?}");
        assert!(shown.starts_with("WaitForTask {"), "{shown}");
        assert!(shown.contains("\"t9\"") && shown.contains("7s"), "{shown}");
    }

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
