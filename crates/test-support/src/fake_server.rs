//! A scriptable fake MCP server on the peer end of an in-memory pair.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mcpwire_codec::jsonrpc::{
    ErrorCode, ErrorObject, Id, Message, Notification, Request, Response, encode_error_response,
    encode_notification, encode_request, encode_result,
};
use mcpwire_transport::{CloseReason, ExitInfo, TransportError};
use serde_json::{Value, json};

use crate::memory::MemoryPeer;

/// How long any `expect_*` waits before it panics: generous, because a test
/// machine may be loaded; it only bounds a test that is already failing.
pub const EXPECT_TIMEOUT: Duration = Duration::from_secs(20);

/// A fake MCP server: reads what the client sent, answers, notifies, sends
/// its own requests, stalls or crashes, as a test says.
///
/// Every `expect_*` method panics with a clear message when the client sent
/// something else, or nothing within [`EXPECT_TIMEOUT`]; tests use it as an
/// assertion.
#[derive(Debug)]
pub struct FakeServer {
    peer: MemoryPeer,
}

/// One step of a [`Script`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Step {
    /// Expect a request with this method, then answer it.
    Expect {
        /// The method expected.
        method: String,
        /// The answer.
        reply: Reply,
    },
    /// Expect a notification with this method.
    ExpectNotification(String),
    /// Send a notification.
    Notify {
        /// Its method.
        method: String,
        /// Its params.
        params: Value,
    },
    /// Send a request of our own.
    Request {
        /// Its id.
        id: Id,
        /// Its method.
        method: String,
        /// Its params.
        params: Value,
    },
    /// Expect the client's response to our request with this id.
    ExpectResponse(Id),
    /// Send raw bytes as one frame (malformed input).
    Raw(Bytes),
    /// Wait.
    Delay(Duration),
    /// Crash: close as an exited process with this status.
    Crash(i32),
}

/// How a [`Step::Expect`] answers.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Reply {
    /// A success result.
    Result(Value),
    /// A JSON-RPC error.
    Error(i32, String),
    /// No answer at all (a server that drops the request).
    Drop,
}

/// A list of steps, run in order by [`FakeServer::run`].
pub type Script = Vec<Step>;

impl Step {
    /// `Expect` answering `result`.
    pub fn expect(method: &str, result: Value) -> Step {
        Step::Expect {
            method: method.into(),
            reply: Reply::Result(result),
        }
    }

    /// `Notify`.
    pub fn notify(method: &str, params: Value) -> Step {
        Step::Notify {
            method: method.into(),
            params,
        }
    }
}

/// A typical `initialize` result for `version`, with every server capability.
pub fn initialize_result(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "logging": {},
            "completions": {}
        },
        "serverInfo": {"name": "fake", "version": "1.0.0", "title": "Fake server"},
        "instructions": "be nice"
    })
}

impl FakeServer {
    /// A fake server driving `peer`.
    pub fn new(peer: MemoryPeer) -> Self {
        Self { peer }
    }

    /// The peer end, for raw access.
    pub fn peer(&self) -> &MemoryPeer {
        &self.peer
    }

    /// The next message the client sent, parsed; `None` once it closed.
    /// Panics on a frame that is not a JSON-RPC message (the client must never
    /// send one) or after [`EXPECT_TIMEOUT`].
    pub async fn recv(&mut self) -> Option<Message> {
        let frame = tokio::time::timeout(EXPECT_TIMEOUT, self.peer.recv_frame())
            .await
            .expect("the client sent nothing in time")?;
        Some(Message::parse(frame.clone()).unwrap_or_else(|e| {
            panic!(
                "client sent a malformed frame ({e}): {}",
                String::from_utf8_lossy(&frame)
            )
        }))
    }

    /// The next raw frame the client sent, or `None` once it closed.
    pub async fn recv_frame(&mut self) -> Option<Bytes> {
        tokio::time::timeout(EXPECT_TIMEOUT, self.peer.recv_frame())
            .await
            .expect("the client sent nothing in time")
    }

    /// Expects the next message to be a request for `method`.
    ///
    /// Like a server of the `initialize` era, it answers a `server/discover`
    /// (the era probe of a client left on its default settings) with
    /// `-32601` on the way, unless `method` is `server/discover` itself.
    pub async fn expect_request(&mut self, method: &str) -> Request {
        loop {
            match self.recv().await {
                Some(Message::Request(r)) if r.method == method => return r,
                Some(Message::Request(r)) if r.method == "server/discover" => {
                    self.respond_error(&r.id, -32601, "Method not found").await;
                }
                other => panic!("expected a {method} request, got {other:?}"),
            }
        }
    }

    /// Expects the next message to be a notification for `method`.
    pub async fn expect_notification(&mut self, method: &str) -> Notification {
        match self.recv().await {
            Some(Message::Notification(n)) if n.method == method => n,
            other => panic!("expected a {method} notification, got {other:?}"),
        }
    }

    /// Expects the next message to be a response to our request `id`.
    pub async fn expect_response(&mut self, id: &Id) -> Response {
        match self.recv().await {
            Some(Message::Response(r)) if r.id.as_ref() == Some(id) => r,
            other => panic!("expected a response to {id}, got {other:?}"),
        }
    }

    /// Expects the client to have closed: no more messages.
    pub async fn expect_closed(&mut self) {
        if let Some(m) = self.recv().await {
            panic!("expected the client to close, got {m:?}");
        }
    }

    /// Answers `initialize` with `result`, then expects
    /// `notifications/initialized`. Returns the client's `initialize` params.
    pub async fn handshake_with(&mut self, result: Value) -> Value {
        let init = self.expect_request("initialize").await;
        self.respond(&init.id, result).await;
        self.expect_notification("notifications/initialized").await;
        init.params
            .map(|p| p.deserialize().expect("params are JSON"))
            .unwrap_or(Value::Null)
    }

    /// [`handshake_with`](Self::handshake_with) a typical result for the
    /// latest version.
    pub async fn handshake(&mut self) -> Value {
        self.handshake_with(initialize_result("2025-11-25")).await
    }

    /// Sends one raw frame.
    pub async fn send_raw(&self, frame: impl Into<Bytes>) {
        assert!(self.peer.send_frame(frame).await, "client is gone");
    }

    /// Sends a success response.
    pub async fn respond(&self, id: &Id, result: Value) {
        let mut buf = BytesMut::new();
        encode_result(&mut buf, id, &result).expect("encodes");
        self.send_raw(buf.freeze()).await;
    }

    /// Sends an error response.
    pub async fn respond_error(&self, id: &Id, code: i32, message: &str) {
        let mut buf = BytesMut::new();
        let err = ErrorObject::new(ErrorCode(code), message);
        encode_error_response(&mut buf, Some(id), &err).expect("encodes");
        self.send_raw(buf.freeze()).await;
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) {
        let mut buf = BytesMut::new();
        encode_notification(&mut buf, method, Some(&params)).expect("encodes");
        self.send_raw(buf.freeze()).await;
    }

    /// Sends a request of our own.
    pub async fn request(&self, id: impl Into<Id>, method: &str, params: Value) {
        let mut buf = BytesMut::new();
        encode_request(&mut buf, &id.into(), method, Some(&params)).expect("encodes");
        self.send_raw(buf.freeze()).await;
    }

    /// Hands a frame back as undelivered (what an HTTP transport does when a
    /// POST fails, or the session expired).
    pub async fn undeliver(&self, frame: Bytes, error: TransportError) {
        assert!(self.peer.undeliver(frame, error).await, "client is gone");
    }

    /// Crashes: the client sees the process exit with `code` and `stderr`.
    pub async fn crash(self, code: i32, stderr: &[&str]) {
        let mut info = ExitInfo::new(Some(code), None);
        info.stderr_tail = stderr.iter().map(|s| s.to_string()).collect();
        self.peer.close(CloseReason::Exited(info)).await;
    }

    /// Runs `script`, step by step, panicking on the first mismatch.
    pub async fn run(mut self, script: Script) -> FakeServer {
        for step in script {
            match step {
                Step::Expect { method, reply } => {
                    let req = self.expect_request(&method).await;
                    match reply {
                        Reply::Result(v) => self.respond(&req.id, v).await,
                        Reply::Error(code, msg) => self.respond_error(&req.id, code, &msg).await,
                        Reply::Drop => {}
                    }
                }
                Step::ExpectNotification(method) => {
                    self.expect_notification(&method).await;
                }
                Step::Notify { method, params } => self.notify(&method, params).await,
                Step::Request { id, method, params } => self.request(id, &method, params).await,
                Step::ExpectResponse(id) => {
                    self.expect_response(&id).await;
                }
                Step::Raw(bytes) => self.send_raw(bytes).await,
                Step::Delay(d) => tokio::time::sleep(d).await,
                Step::Crash(code) => {
                    self.crash(code, &[]).await;
                    return FakeServer::new(crate::memory_pair(1).1);
                }
            }
        }
        self
    }
}
