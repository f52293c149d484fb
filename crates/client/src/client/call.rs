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

use crate::base::error::Error;
use crate::base::options::RequestOptions;
use crate::client::handle::Client;

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

    request_option_setters!(opts);
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
