//! Sending one request of an operation until its final answer (through
//! `crate::session::rounds`), and parsing that answer: what every
//! operation of this module does last.

use std::borrow::Cow;

use mcpwire_codec::jsonrpc::Payload;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::base::error::Error;
use crate::base::options::{Replay, RequestOptions};
use crate::base::stamp::Route;
use crate::base::version::Era;
use crate::client::handle::Client;
use crate::session::live::LiveConnection;
use crate::session::rounds::Rounds;

/// How a request of `client` is sent until its final answer (see
/// [`crate::session::rounds`]).
pub(super) fn rounds<'a>(
    client: &'a Client,
    conn: &'a LiveConnection,
    route: Option<&'a Route>,
) -> Rounds<'a> {
    Rounds {
        conn,
        dispatcher: &client.shared.dispatcher,
        modern: client.era() == Some(Era::Modern),
        max_rounds: client.shared.config.max_input_rounds,
        route,
    }
}

/// Sends `method` (its standard headers named by `route`) and returns its
/// final answer.
pub(super) async fn send<P: Serialize + ?Sized>(
    client: &Client,
    method: Cow<'static, str>,
    params: Option<&P>,
    opts: &RequestOptions,
    replay: Replay,
    route: Option<&Route>,
) -> Result<Payload, Error> {
    let conn = client.conn()?;
    let request = conn.engine.encode_request(&method, params, opts, route)?;
    rounds(client, &conn, route)
        .call(request, method, opts, replay)
        .await
}

/// Sends `method` and parses its result as `R`.
pub(crate) async fn typed<P: Serialize + ?Sized, R: DeserializeOwned>(
    client: &Client,
    method: &'static str,
    params: Option<&P>,
    opts: &RequestOptions,
    replay: Replay,
) -> Result<R, Error> {
    let payload = send(client, Cow::Borrowed(method), params, opts, replay, None).await?;
    payload.deserialize().map_err(|e| Error::decode(method, e))
}

/// [`typed`] for a request whose `Mcp-Name` header is `name`.
pub(super) async fn named<P: Serialize + ?Sized, R: DeserializeOwned>(
    client: &Client,
    method: &'static str,
    name: &str,
    params: &P,
    opts: &RequestOptions,
) -> Result<R, Error> {
    let route = Route {
        name: Some(name.to_owned()),
        params: Vec::new(),
    };
    let payload = send(
        client,
        Cow::Borrowed(method),
        Some(params),
        opts,
        Replay::Allow,
        Some(&route),
    )
    .await?;
    payload.deserialize().map_err(|e| Error::decode(method, e))
}

/// [`send`] of a replayable read, with the input rounds it took.
pub(super) async fn send_counted<P: Serialize + ?Sized>(
    client: &Client,
    method: &'static str,
    params: Option<&P>,
    opts: &RequestOptions,
    route: Option<&Route>,
) -> Result<(Payload, u32), Error> {
    let conn = client.conn()?;
    let request = conn.engine.encode_request(method, params, opts, route)?;
    rounds(client, &conn, route)
        .call_counted(request, Cow::Borrowed(method), opts, Replay::Allow)
        .await
}
