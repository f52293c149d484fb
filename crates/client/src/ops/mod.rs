//! The requests a [`Call`] runs, one type each. Code never
//! needs to name them: the methods of [`Client`] return them inside a
//! `Call`, and awaiting the call runs them.

// Lowest first, like every `mod` list of this crate.
mod send;
mod pages;
mod tool_call;

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::watch;

use crate::base::error::Error;
use crate::base::options::{Replay, RequestOptions};
use crate::base::stamp::Route;
use crate::base::version::Era;
use crate::client::call::{Call, CallFuture, Operation, sealed};
use crate::client::handle::Client;
use crate::session::listen;
use crate::types::{
    Arguments, CallToolResult, CompleteResult, CompletionReference, EmptyResult, GetPromptResult,
    LoggingLevel, Meta, Page, ReadResourceResult, ResourceUpdated, Tool,
};

use pages::{all_tools, cached, page, walk};
pub(crate) use send::typed;
use send::{named, send, send_counted};
use tool_call::{encode_tool_call, finish_tool_call};

/// Implements [`Operation`] for `$ty` (with the impl generics in brackets):
/// `$body` runs with the operation as `$this`.
macro_rules! operation {
    ([$($gen:tt)*] $ty:ty => $output:ty,
     |$this:ident, $client:ident, $opts:ident| $body:block
     $(where $($bound:tt)+)?) => {
        impl<$($gen)*> sealed::Sealed for $ty $(where $($bound)+)? {}

        impl<$($gen)*> Operation for $ty $(where $($bound)+)? {
            type Output = $output;

            fn run<'c>(self, $client: &'c Client, $opts: RequestOptions) -> CallFuture<'c, $output>
            where
                Self: 'c,
            {
                let $this = self;
                Box::pin(async move $body)
            }
        }
    };
}

pub(crate) use operation;

/// `ping`.
#[derive(Debug)]
pub struct Ping(pub(crate) ());

operation!([] Ping => (), |_this, client, opts| {
    let method = client.era().unwrap_or(Era::Legacy).liveness_method();
    typed::<(), serde::de::IgnoredAny>(client, method, None, &opts, Replay::Allow)
        .await
        .map(drop)
});

/// One page of a list (`tools/list`, `resources/list`...).
pub struct ListPage<R> {
    pub(crate) cursor: Option<String>,
    pub(crate) page: PhantomData<fn() -> R>,
}

operation!([R] ListPage<R> => R, |this, client, opts| {
    page::<R>(client, this.cursor, &opts).await
} where R: Page);

/// Every page of a list, following cursors.
pub struct ListAll<R> {
    pub(crate) page: PhantomData<fn() -> R>,
}

operation!([R] ListAll<R> => Vec<R::Item>, |_this, client, opts| {
    walk::<R>(client, &opts).await
} where R: Page);

/// Every tool, following cursors; refreshes the tool cache.
#[derive(Debug)]
pub struct ListAllTools(pub(crate) ());

operation!([] ListAllTools => Vec<Tool>, |_this, client, opts| {
    all_tools(client, &opts).await
});

/// `tools/call`.
pub struct CallTool<'a, A> {
    pub(crate) name: &'a str,
    pub(crate) arguments: A,
    pub(crate) meta: Option<Meta>,
}

impl<A> fmt::Debug for CallTool<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<'c, 'a, A> Call<'c, CallTool<'a, A>> {
    /// `_meta` for the call (a progress token is added to it when progress
    /// is asked for).
    pub fn meta(mut self, meta: Meta) -> Self {
        self.op_mut().meta = Some(meta);
        self
    }
}

/// `tools/call` params borrowing the caller's arguments.
#[derive(Serialize)]
struct ToolParams<'a, A: ?Sized> {
    name: &'a str,
    arguments: &'a A,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a Meta>,
}

operation!(['a, A] CallTool<'a, A> => CallToolResult, |this, client, opts| {
    let CallTool { name, arguments, meta } = this;
    let params = ToolParams {
        name,
        arguments: &arguments,
        meta: meta.as_ref(),
    };
    let call = encode_tool_call(client, name, &params, &arguments, &opts).await?;
    // Encoded: owned arguments go before the answer arrives, so a large
    // one is held once (as the frame being written), not twice.
    drop(arguments);
    finish_tool_call(client, call, &opts).await
} where A: Serialize + Send + Sync + 'a);

/// `resources/read`.
#[derive(Debug)]
pub struct ReadResource<'a> {
    pub(crate) uri: &'a str,
}

operation!(['a] ReadResource<'a> => ReadResourceResult, |this, client, opts| {
    let method = "resources/read";
    let params = json!({ "uri": this.uri });
    let route = Route {
        name: Some(this.uri.to_owned()),
        params: Vec::new(),
    };
    let (payload, _) = cached(client, method, Some(this.uri), &opts, || {
        send_counted(client, method, Some(&params), &opts, Some(&route))
    })
    .await?;
    // In place unless the cache keeps the answer too.
    payload.take().map_err(|e| Error::decode(method, e))
});

/// `resources/subscribe`, or in the stateless era a
/// `subscriptions/listen` stream that includes the resource.
#[derive(Debug)]
pub struct Subscribe<'a> {
    pub(crate) uri: &'a str,
}

operation!(['a] Subscribe<'a> => ResourceSubscription, |this, client, opts| {
    // Listen before asking, so no update between the two is missed.
    let rx = client.shared.inbox.updates_for(this.uri);
    if client.era() == Some(Era::Modern) {
        // The stateless era has no `resources/subscribe`: the URI joins the
        // connection's `subscriptions/listen` stream (`crate::session::listen`).
        client.conn()?;
        let timeout = opts.timeout.unwrap_or(client.shared.config.request_timeout);
        listen::change(&client.shared, this.uri, true, timeout).await?;
    } else {
        let params = json!({ "uri": this.uri });
        typed::<_, EmptyResult>(client, "resources/subscribe", Some(&params), &opts, Replay::Allow)
            .await?;
        // Kept, to subscribe again on a new session.
        client.shared.wanted.change(this.uri, true);
    }
    Ok(ResourceSubscription {
        uri: this.uri.to_owned(),
        rx,
    })
});

/// `resources/unsubscribe`, or in the stateless era a
/// `subscriptions/listen` stream without the resource.
#[derive(Debug)]
pub struct Unsubscribe<'a> {
    pub(crate) uri: &'a str,
}

operation!(['a] Unsubscribe<'a> => (), |this, client, opts| {
    if client.era() == Some(Era::Modern) {
        client.conn()?;
        let timeout = opts.timeout.unwrap_or(client.shared.config.request_timeout);
        return listen::change(&client.shared, this.uri, false, timeout).await;
    }
    client.shared.wanted.change(this.uri, false);
    let params = json!({ "uri": this.uri });
    typed::<_, EmptyResult>(client, "resources/unsubscribe", Some(&params), &opts, Replay::Allow)
        .await
        .map(drop)
});

/// `prompts/get`.
#[derive(Debug)]
pub struct GetPrompt<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<Arguments>,
}

operation!(['a] GetPrompt<'a> => GetPromptResult, |this, client, opts| {
    let mut params = json!({ "name": this.name });
    if let Some(args) = this.arguments {
        params["arguments"] = serde_json::Value::Object(args);
    }
    named(client, "prompts/get", this.name, &params, &opts).await
});

/// `completion/complete`.
#[derive(Debug)]
pub struct Complete<'a> {
    pub(crate) reference: CompletionReference,
    pub(crate) name: &'a str,
    pub(crate) value: &'a str,
    pub(crate) context: Option<Arguments>,
}

operation!(['a] Complete<'a> => CompleteResult, |this, client, opts| {
    let mut params = json!({
        "ref": this.reference,
        "argument": {"name": this.name, "value": this.value},
    });
    if let Some(ctx) = this.context {
        params["context"] = json!({ "arguments": ctx });
    }
    typed(client, "completion/complete", Some(&params), &opts, Replay::Allow).await
});

/// `logging/setLevel`.
#[derive(Debug)]
pub struct SetLoggingLevel {
    pub(crate) level: LoggingLevel,
}

/// What [`Client::set_logging_level`](crate::Client::set_logging_level)
/// did, which depends on the server's era.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LevelApplied {
    /// `logging/setLevel` was sent and the server accepted it (the
    /// `initialize` era): it applies to the whole session.
    Sent,
    /// Nothing was sent: the stateless era has no `logging/setLevel`, so
    /// every later request of this connection asks for the level in its
    /// `_meta` (`io.modelcontextprotocol/logLevel`), and the server sends
    /// log messages on those requests' answer streams only.
    Stamped,
}

operation!([] SetLoggingLevel => LevelApplied, |this, client, opts| {
    let params = json!({ "level": this.level });
    if client.era() == Some(Era::Modern) {
        let conn = client.conn()?;
        let stamp = conn.engine.stamp().with_log_level(params["level"].clone());
        conn.engine.set_stamp(stamp);
        return Ok(LevelApplied::Stamped);
    }
    typed::<_, EmptyResult>(client, "logging/setLevel", Some(&params), &opts, Replay::Allow)
        .await
        .map(|_| LevelApplied::Sent)
});

/// Any request, by method name, its result parsed as `R`.
pub struct Request<'a, P: ?Sized, R> {
    pub(crate) method: &'a str,
    pub(crate) params: Option<&'a P>,
    pub(crate) result: PhantomData<fn() -> R>,
}

operation!(['a, P, R] Request<'a, P, R> => R, |this, client, opts| {
    let payload = send(
        client,
        Cow::Owned(this.method.to_owned()),
        this.params,
        &opts,
        Replay::ByMethod,
        None,
    )
    .await?;
    payload
        .deserialize()
        .map_err(|e| Error::decode("result", e))
} where P: Serialize + Sync + ?Sized + 'a, R: DeserializeOwned + Send);

/// The updates of one subscribed resource.
#[derive(Debug)]
pub struct ResourceSubscription {
    uri: String,
    rx: watch::Receiver<Option<ResourceUpdated>>,
}

impl ResourceSubscription {
    /// The subscribed URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Waits for the next update (the latest, if several arrived). `None`
    /// once the client is gone.
    pub async fn changed(&mut self) -> Option<ResourceUpdated> {
        self.rx.changed().await.ok()?;
        self.rx.borrow_and_update().clone()
    }
}
