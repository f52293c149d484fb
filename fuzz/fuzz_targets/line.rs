#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpwire_codec::LineDecoder;
use mcpwire_codec_fuzz::{Input, drive, normalise};

fuzz_target!(|raw: &[u8]| {
    let Some(input) = Input::new(raw) else { return };
    let run = |sizes: &[usize]| {
        let mut dec = LineDecoder::with_max_frame_len(input.max);
        drive(
            &mut dec,
            input.data,
            sizes,
            LineDecoder::decode,
            LineDecoder::decode_eof,
        )
    };
    let whole = run(&[input.data.len().max(1)]);
    let chunked = run(&input.sizes);
    for frame in whole.iter().flatten() {
        assert!(frame.len() <= input.max, "frame over the maximum");
        assert!(!frame.contains(&b'\n'), "frame holds a line end");
    }
    assert_eq!(normalise(whole), normalise(chunked));
});
