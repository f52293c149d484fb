//! The live connection, and what its parts share: its request [`Engine`], its
//! running server-request handlers, the tail of the server's stderr, and the
//! frames whose delivery failed because the session expired.

use std::collections::VecDeque;

use bytes::Bytes;
use mcpwire_transport::TransportError;
use tokio::sync::Notify;

use crate::base::lock::Mutex;
use crate::requests::dispatch::Running;
use crate::requests::engine::Engine;

/// How many stderr lines are kept for error messages.
const STDERR_TAIL: usize = 20;

/// The live connection: one transport session of a client, while it lasts.
pub(crate) struct LiveConnection {
    pub(crate) engine: Engine,
    pub(crate) running: std::sync::Arc<Running>,
    stderr_tail: Mutex<VecDeque<String>>,
    /// Frames whose delivery failed with an expired session, waiting for
    /// the session to be re-initialized; `Some` while that is under way.
    expired: Mutex<Option<Vec<(Bytes, TransportError)>>>,
    /// Told when the first such frame arrives: re-initialize.
    pub(crate) reinit: Notify,
    /// Told by the driver when it has read the transport's session.
    pub(crate) session_read: Notify,
}

impl LiveConnection {
    pub(crate) fn new(engine: Engine) -> Self {
        Self {
            engine,
            running: Default::default(),
            stderr_tail: Mutex::new(VecDeque::new()),
            expired: Mutex::new(None),
            reinit: Notify::new(),
            session_read: Notify::new(),
        }
    }

    pub(crate) fn push_stderr(&self, line: String) {
        let mut tail = self.stderr_tail.lock();
        if tail.len() == STDERR_TAIL {
            tail.pop_front();
        }
        tail.push_back(line);
    }

    /// The last lines the server wrote to stderr, oldest first.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail.lock().iter().cloned().collect()
    }

    /// Keeps a frame the expired session did not deliver; the first one
    /// asks for a new session.
    pub(crate) fn session_expired(&self, frame: Bytes, error: TransportError) {
        let first = {
            let mut expired = self.expired.lock();
            let first = expired.is_none();
            expired.get_or_insert_with(Vec::new).push((frame, error));
            first
        };
        if first {
            self.reinit.notify_one();
        }
    }

    /// The frames kept since the session expired (a new one is up).
    pub(crate) fn take_expired(&self) -> Vec<(Bytes, TransportError)> {
        self.expired.lock().take().unwrap_or_default()
    }
}
