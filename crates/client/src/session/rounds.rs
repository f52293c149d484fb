//! Sending a request until it has its final answer: the multi round-trip
//! requests of the stateless era (SEP-2322), and re-issuing a request whose
//! answer was lost in transit when that is safe.
//!
//! - **Input rounds.** A result with `resultType: "input_required"` carries
//!   `inputRequests` (sampling, elicitation, roots). Each is answered by the
//!   handler that answers the same server request in the `initialize` era;
//!   then the original request is sent again, with a new id, its params plus
//!   `inputResponses` and the server's opaque `requestState` (echoed as
//!   received, or left out when there was none). At most
//!   [`ClientConfig::max_input_rounds`](crate::ClientConfig::max_input_rounds)
//!   rounds; past them, [`ErrorKind::InputRequired`](crate::ErrorKind).
//!   Only in the stateless era: a result without `resultType` is complete.
//! - **Lost answers.** A request whose answer stream broke
//!   ([`ErrorKind::OutcomeUnknown`](crate::ErrorKind)) is sent again with a
//!   new id if it is safe to repeat (a read, or a call the caller or the
//!   tool's annotations allow); otherwise the caller gets the error.

use std::borrow::Cow;

use mcpwire_codec::jsonrpc::Payload;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::base::error::{Error, ErrorKind};
use crate::base::options::{Replay, RequestOptions};
use crate::base::stamp::Route;
use crate::observe::metrics::Count;
use crate::requests::dispatch::Dispatcher;
use crate::requests::engine::EncodedRequest;
use crate::requests::pending::Cancel;
use crate::session::live::LiveConnection;

/// How many times a request whose answer was lost is sent again.
const MAX_REISSUES: u32 = 2;

/// What one request is, to send it again.
pub(crate) struct Rounds<'a> {
    pub(crate) conn: &'a LiveConnection,
    pub(crate) dispatcher: &'a Dispatcher,
    /// Input rounds are followed (the stateless era).
    pub(crate) modern: bool,
    pub(crate) max_rounds: u32,
    pub(crate) route: Option<&'a Route>,
}

/// Why a request is sent again.
#[derive(Debug, Clone, Copy)]
enum Again {
    /// Its answer was lost and it is safe to repeat.
    Reissue,
    /// The server asked for input first (the stateless era).
    InputRound,
}

/// An `InputRequiredResult`.
#[derive(Deserialize)]
struct InputRequired {
    #[serde(rename = "inputRequests", default)]
    input_requests: Option<Map<String, Value>>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
}

/// One input request.
#[derive(Deserialize)]
struct InputRequest {
    method: String,
    #[serde(default)]
    params: Option<Value>,
}

impl Rounds<'_> {
    /// Sends `request` and every round it needs; the final answer's payload.
    pub(crate) async fn call(
        &self,
        request: EncodedRequest,
        method: Cow<'static, str>,
        opts: &RequestOptions,
        replay: Replay,
    ) -> Result<Payload, Error> {
        let (payload, _rounds) = self.call_counted(request, method, opts, replay).await?;
        Ok(payload)
    }

    /// [`call`](Self::call), also saying how many input rounds it took (an
    /// answer after input rounds depends on the inputs: it is never cached).
    pub(crate) async fn call_counted(
        &self,
        mut request: EncodedRequest,
        method: Cow<'static, str>,
        opts: &RequestOptions,
        replay: Replay,
    ) -> Result<(Payload, u32), Error> {
        let engine = &self.conn.engine;
        let safe = replay == Replay::Allow || opts.replay == Replay::Allow;
        let mut rounds = 0u32;
        let mut reissues = 0u32;
        loop {
            let again;
            // Kept only while it may be sent again: for input rounds (the
            // stateless era) or a reissue (a request safe to repeat).
            // Otherwise the frame is freed once written, not held until the
            // answer arrives: a large argument is then not in memory while
            // a large answer is read.
            let kept = (self.modern || safe).then(|| request.frame().clone());
            let outcome = engine
                .call_encoded(request, method.clone(), opts, replay, Cancel::Notify)
                .await;
            let params = match (outcome, &kept) {
                (Ok(payload), None) => return Ok((payload, rounds)),
                (Ok(payload), Some(frame)) => {
                    let Some(input) = self.input_required(&payload)? else {
                        return Ok((payload, rounds));
                    };
                    if rounds >= self.max_rounds {
                        return Err(Error::input_required(format!(
                            "{method} still asked for input after {rounds} rounds"
                        )));
                    }
                    rounds += 1;
                    let responses = self.fulfil(input.input_requests).await?;
                    again = Again::InputRound;
                    retry_params(frame, responses, input.request_state)?
                }
                (Err(e), Some(frame))
                    if e.kind() == ErrorKind::OutcomeUnknown && safe && reissues < MAX_REISSUES =>
                {
                    reissues += 1;
                    tracing::debug!(%method, error = %e, "the answer was lost: sending the request again");
                    again = Again::Reissue;
                    original_params(frame)?
                }
                (Err(e), _) => return Err(e),
            };
            request = engine.encode_request(&method, Some(&params), opts, self.route)?;
            match again {
                Again::Reissue => {
                    request.trace().sent_again("its answer was lost");
                    engine.metrics().count(Count::Reissue, engine.peer());
                }
                Again::InputRound => request.trace().sent_again("with the input asked for"),
            }
        }
    }

    /// The result as an `InputRequiredResult`, if it is one (only looked
    /// for in the stateless era, and only parsed when its bytes say so).
    fn input_required(&self, payload: &Payload) -> Result<Option<InputRequired>, Error> {
        if !self.modern || !contains(payload.as_bytes(), b"\"input_required\"") {
            return Ok(None);
        }
        #[derive(Deserialize)]
        struct Kind {
            #[serde(rename = "resultType")]
            result_type: Option<String>,
        }
        let kind: Kind = payload
            .deserialize()
            .map_err(|e| Error::decode("result", e))?;
        if kind.result_type.as_deref() != Some("input_required") {
            return Ok(None);
        }
        payload
            .deserialize()
            .map(Some)
            .map_err(|e| Error::decode("input_required result", e))
    }

    /// Answers every input request with its handler.
    async fn fulfil(
        &self,
        requests: Option<Map<String, Value>>,
    ) -> Result<Option<Map<String, Value>>, Error> {
        match requests {
            Some(requests) => answer_inputs(self.dispatcher, requests).await.map(Some),
            None => Ok(None),
        }
    }
}

/// Answers every input request (of an `input_required` result, or of a
/// task) with the handler that answers the same server request in the
/// `initialize` era: the answers, by the requests' keys.
pub(crate) async fn answer_inputs(
    dispatcher: &Dispatcher,
    requests: Map<String, Value>,
) -> Result<Map<String, Value>, Error> {
    let mut responses = Map::new();
    for (key, request) in requests {
        let request: InputRequest =
            serde_json::from_value(request).map_err(|e| Error::decode("input request", e))?;
        let params = request
            .params
            .map(|p| Payload::from_value(&p))
            .transpose()
            .map_err(|e| Error::decode("input request params", e))?;
        let answer = dispatcher
            .fulfil(&key, &request.method, params)
            .await
            .ok_or_else(|| {
                Error::input_required(format!(
                    "the server asked for {} input, which this client has no handler for",
                    request.method
                ))
            })?;
        let bytes = answer.map_err(|e| {
            Error::input_required(format!(
                "the {} handler failed: {}",
                request.method, e.message
            ))
        })?;
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|e| Error::decode("handler result", e))?;
        responses.insert(key, value);
    }
    Ok(responses)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The params of the request in `frame`, without what a previous round
/// added.
fn original_params(frame: &[u8]) -> Result<Value, Error> {
    #[derive(Deserialize)]
    struct Envelope {
        #[serde(default)]
        params: Option<Value>,
    }
    let env: Envelope = serde_json::from_slice(frame).map_err(|e| Error::decode("request", e))?;
    let mut params = env.params.unwrap_or_else(|| Value::Object(Map::new()));
    if let Some(obj) = params.as_object_mut() {
        obj.remove("inputResponses");
        obj.remove("requestState");
    }
    Ok(params)
}

/// The params of the next round: the original ones, this round's
/// responses, and the server's state exactly as it sent it.
fn retry_params(
    frame: &[u8],
    responses: Option<Map<String, Value>>,
    state: Option<String>,
) -> Result<Value, Error> {
    let mut params = original_params(frame)?;
    let Some(obj) = params.as_object_mut() else {
        return Err(Error::protocol(
            "a multi round-trip request needs object params",
        ));
    };
    if let Some(responses) = responses {
        obj.insert("inputResponses".into(), Value::Object(responses));
    }
    if let Some(state) = state {
        obj.insert("requestState".into(), Value::String(state));
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_retry_carries_the_responses_and_the_state_of_this_round_only() {
        let frame = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","inputResponses":{"old":1},"requestState":"old"}}"#;
        let mut responses = Map::new();
        responses.insert("confirm".into(), json!({"action": "accept"}));
        let p = retry_params(frame, Some(responses), Some("{\"n\":1}".into())).unwrap();
        assert_eq!(p["name"], "t");
        assert_eq!(
            p["inputResponses"],
            json!({"confirm": {"action": "accept"}})
        );
        assert_eq!(p["requestState"], "{\"n\":1}");
        let p = retry_params(frame, None, None).unwrap();
        assert!(p.get("requestState").is_none() && p.get("inputResponses").is_none());
    }
}
