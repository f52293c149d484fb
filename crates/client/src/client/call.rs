//! [`Call`]: every typed request is a builder that runs when awaited, so
//! each takes [`RequestOptions`] the same way.
//!
//! ```no_run
//! # async fn demo(client: mcpwire_client::Client) -> Result<(), mcpwire_client::Error> {
//! use std::time::Duration;
//! use serde_json::json;
//!
//! // The defaults: just await it.
//! let tools = client.list_all_tools().await?;
//! // Options on the way.
//! let result = client
//!     .call_tool("slow", &json!({"steps": 3}))
//!     .timeout(Duration::from_secs(5))
//!     .on_progress(|p| println!("{:?}/{:?}", p.progress, p.total))
//!     .await?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::base::error::Error;
use crate::base::options::{CacheMode, Deadline, Replay, RequestOptions, TraceContext};
use crate::client::handle::Client;
use crate::types::Progress;

/// What awaiting a [`Call`] gives: a boxed, sendable future borrowing the
/// client.
pub type CallFuture<'c, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'c>>;

/// A request to the server, with its options; nothing is sent until it is
/// awaited. `Op` says which request (see [`crate::ops`]).
#[must_use = "a request does nothing until it is awaited"]
pub struct Call<'c, Op> {
    client: &'c Client,
    op: Op,
    opts: RequestOptions,
}

impl<Op> fmt::Debug for Call<'_, Op> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("op", &std::any::type_name::<Op>())
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

impl<'c, Op> Call<'c, Op> {
    pub(crate) fn new(client: &'c Client, op: Op) -> Self {
        Self {
            client,
            op,
            opts: RequestOptions::new(),
        }
    }

    /// The operation, for options only it has.
    pub(crate) fn op_mut(&mut self) -> &mut Op {
        &mut self.op
    }

    /// Every option at once (replacing what was set before).
    pub fn options(mut self, opts: RequestOptions) -> Self {
        self.opts = opts;
        self
    }

    /// This request's timeout (instead of the client's).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.opts = self.opts.timeout(timeout);
        self
    }

    /// When the timeout runs out: see [`RequestOptions::deadline`].
    pub fn deadline(mut self, deadline: Deadline) -> Self {
        self.opts = self.opts.deadline(deadline);
        self
    }

    /// The longest the request may take in total, progress or not.
    pub fn max_total(mut self, max: Duration) -> Self {
        self.opts = self.opts.max_total(max);
        self
    }

    /// Calls `f` with each progress notification: see
    /// [`RequestOptions::on_progress`].
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.opts = self.opts.on_progress(f);
        self
    }

    /// Whether the request may be sent again after its session expired.
    pub fn replay(mut self, replay: Replay) -> Self {
        self.opts = self.opts.replay(replay);
        self
    }

    /// Cancels the request when `token` is cancelled.
    pub fn cancel_token(mut self, token: CancellationToken) -> Self {
        self.opts = self.opts.cancel_token(token);
        self
    }

    /// Carries a W3C trace context in the request's `_meta`.
    pub fn trace_context(mut self, trace: TraceContext) -> Self {
        self.opts = self.opts.trace_context(trace);
        self
    }

    /// How the request uses the client's cache: see [`CacheMode`].
    pub fn cache(mut self, mode: CacheMode) -> Self {
        self.opts = self.opts.cache(mode);
        self
    }
}

impl<'c, Op: Operation + 'c> IntoFuture for Call<'c, Op> {
    type Output = Result<Op::Output, Error>;
    type IntoFuture = CallFuture<'c, Op::Output>;

    fn into_future(self) -> Self::IntoFuture {
        self.op.run(self.client, self.opts)
    }
}

/// One kind of request a [`Call`] runs. Implemented by the types of
/// [`crate::ops`] only.
pub trait Operation: Send + sealed::Sealed {
    /// What the request gives.
    type Output;

    /// Sends the request on `client` with `opts` and waits for its result.
    #[doc(hidden)]
    fn run<'c>(self, client: &'c Client, opts: RequestOptions) -> CallFuture<'c, Self::Output>
    where
        Self: 'c;
}

pub(crate) mod sealed {
    /// Keeps [`Operation`](super::Operation) to this crate's types.
    pub trait Sealed {}
}
