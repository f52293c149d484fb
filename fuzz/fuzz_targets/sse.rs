#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpwire_codec::SseDecoder;
use mcpwire_codec_fuzz::{Input, drive, normalise};

fuzz_target!(|raw: &[u8]| {
    let Some(input) = Input::new(raw) else { return };
    let run = |sizes: &[usize]| {
        let mut dec = SseDecoder::with_max_event_len(input.max);
        let out = drive(
            &mut dec,
            input.data,
            sizes,
            SseDecoder::decode,
            SseDecoder::decode_eof,
        );
        (out, dec.last_event_id().map(str::to_owned))
    };
    let (whole, whole_id) = run(&[input.data.len().max(1)]);
    let (chunked, chunked_id) = run(&input.sizes);
    for event in whole.iter().flatten() {
        assert!(event.data.len() <= input.max, "event over the maximum");
        assert!(!event.event.is_empty(), "event type defaults to message");
        assert!(
            !event.id.as_deref().unwrap_or("").contains('\0'),
            "id with NUL"
        );
    }
    assert_eq!(normalise(whole), normalise(chunked));
    assert_eq!(whole_id, chunked_id);
});
