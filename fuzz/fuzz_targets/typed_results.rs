#![no_main]

//! Every type the client decodes from what a server sends (results, the
//! params of server requests, notifications), through the path the client
//! takes: the input is the `result` of a response frame, parsed by the
//! envelope parser, then deserialized from the payload.
//!
//! What parses must serialize, re-parse, and serialize to the same JSON
//! (unknown members kept, nothing invented); nothing may panic, including
//! the accessors a user calls on a result.

use bytes::{BufMut, Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use mcpwire_client::types::{
    CallToolResult, Cancelled, CompleteResult, CreateMessageParams, ElicitParams, EmptyResult,
    GetPromptResult, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListRootsResult, ListToolsResult, LogMessage, Progress,
    ReadResourceResult, ResourceUpdated,
};
use mcpwire_codec::jsonrpc::{Message, Payload};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Decodes `payload` as `T`; whatever decodes must survive a round trip.
fn check<T: Serialize + DeserializeOwned>(payload: &Payload) -> Option<T> {
    let value: T = payload.deserialize().ok()?;
    let once = serde_json::to_value(&value).expect("a decoded value serializes");
    let again: T = serde_json::from_value(once.clone()).expect("what we wrote reads back");
    let twice = serde_json::to_value(&again).expect("serializes again");
    assert_eq!(once, twice, "a round trip changed the value");
    Some(value)
}

fuzz_target!(|raw: &[u8]| {
    let mut frame = BytesMut::with_capacity(raw.len() + 40);
    frame.put_slice(br#"{"jsonrpc":"2.0","id":1,"result":"#);
    frame.put_slice(raw);
    frame.put_u8(b'}');
    let Ok(Message::Response(response)) = Message::parse(Bytes::from(frame)) else {
        return;
    };
    let Ok(payload) = response.outcome else {
        return;
    };
    if let Some(r) = check::<CallToolResult>(&payload) {
        let _ = r.text();
    }
    check::<InitializeResult>(&payload);
    check::<ListToolsResult>(&payload);
    check::<ListResourcesResult>(&payload);
    check::<ListResourceTemplatesResult>(&payload);
    check::<ListPromptsResult>(&payload);
    check::<ReadResourceResult>(&payload);
    check::<GetPromptResult>(&payload);
    check::<CompleteResult>(&payload);
    check::<EmptyResult>(&payload);
    check::<ListRootsResult>(&payload);
    check::<CreateMessageParams>(&payload);
    check::<ElicitParams>(&payload);
    check::<LogMessage>(&payload);
    check::<Progress>(&payload);
    check::<ResourceUpdated>(&payload);
    check::<Cancelled>(&payload);
});
