#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use mcpwire_codec::jsonrpc::{Frame, Message, Payload};
use serde::de::IgnoredAny;

/// Every payload the parser hands out must be one well-formed JSON value.
fn check_payload(p: &Payload) {
    assert!(
        p.deserialize::<IgnoredAny>().is_ok(),
        "payload is not JSON: {p:?}"
    );
    assert_eq!(p.as_str().len(), p.as_bytes().len(), "payload is not UTF-8");
}

fn check(m: &Message) {
    match m {
        Message::Request(r) => r.params.iter().for_each(check_payload),
        Message::Notification(n) => n.params.iter().for_each(check_payload),
        Message::Response(r) => match &r.outcome {
            Ok(result) => check_payload(result),
            Err(e) => e.data.iter().for_each(check_payload),
        },
    }
}

fuzz_target!(|raw: &[u8]| {
    let frame = Bytes::copy_from_slice(raw);
    let single = Message::parse(frame.clone());
    if let Ok(m) = &single {
        check(m);
    }
    match Message::parse_frame(frame) {
        Ok(Frame::Single(m)) => {
            check(&m);
            assert_eq!(
                Some(&m),
                single.as_ref().ok(),
                "parse and parse_frame disagree"
            );
        }
        Ok(Frame::Batch(items)) => {
            assert!(!items.is_empty());
            items.iter().flatten().for_each(check);
        }
        Err(_) => {}
    }
});
