//! Shared driving code for the fuzz targets.
//!
//! Every decoder target is differential: the same bytes are decoded once in a
//! single read and once split into reads of fuzzer-chosen sizes, and both
//! runs must agree (the decoders promise that chunking never changes what
//! they produce), besides never panicking, never looping and never exceeding
//! their limits.

use bytes::BytesMut;
use mcpwire_codec::DecodeError;

/// Splits fuzz input into a configuration (a small maximum length and a read
/// size pattern) and the bytes to decode.
pub struct Input<'a> {
    /// The decoder's maximum frame or event length.
    pub max: usize,
    /// Read sizes, cycled.
    pub sizes: Vec<usize>,
    /// The bytes on the wire.
    pub data: &'a [u8],
}

impl<'a> Input<'a> {
    /// Reads the configuration from the first bytes of `raw`.
    pub fn new(raw: &'a [u8]) -> Option<Self> {
        let (&[m, s0, s1, s2], data) = raw.split_first_chunk::<4>()?;
        // Small maxima exercise the limits; 255 stands for "the default".
        let max = if m == 255 { usize::MAX } else { usize::from(m) };
        let sizes = [s0, s1, s2]
            .iter()
            .map(|&s| usize::from(s % 17) + 1)
            .collect();
        Some(Input { max, sizes, data })
    }
}

/// Normalises what legitimately depends on read sizes: how much of an
/// oversized frame had been seen when it was rejected, and how many bytes a
/// given-up Content-Length decoder dropped per call.
pub fn normalise<T>(out: Vec<Result<T, DecodeError>>) -> Vec<Result<T, DecodeError>> {
    out.into_iter()
        .filter(|r| !matches!(r, Err(DecodeError::Desynchronized { .. })))
        .map(|r| match r {
            Err(DecodeError::FrameTooLong { max, .. }) => {
                Err(DecodeError::FrameTooLong { max, len: 0 })
            }
            other => other,
        })
        .collect()
}

/// Feeds `data` in reads of `sizes` (cycled) through `decode`, then ends the
/// input with `decode_eof`; panics if the decoder stops making progress.
pub fn drive<D, T>(
    dec: &mut D,
    data: &[u8],
    sizes: &[usize],
    decode: fn(&mut D, &mut BytesMut) -> Result<Option<T>, DecodeError>,
    decode_eof: fn(&mut D, &mut BytesMut) -> Result<Option<T>, DecodeError>,
) -> Vec<Result<T, DecodeError>> {
    let bound = 4 * data.len() + 16;
    let mut calls = 0;
    let mut out = Vec::new();
    let mut buf = BytesMut::new();
    let mut rest = data;
    let mut sizes = sizes.iter().cycle();
    while !rest.is_empty() {
        let n = (*sizes.next().expect("non-empty sizes")).clamp(1, rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        loop {
            calls += 1;
            assert!(calls <= bound, "decoder made no progress");
            match decode(dec, &mut buf) {
                Ok(Some(item)) => out.push(Ok(item)),
                Ok(None) => break,
                Err(e) => out.push(Err(e)),
            }
        }
    }
    loop {
        calls += 1;
        assert!(calls <= bound, "decoder made no progress at end of input");
        match decode_eof(dec, &mut buf) {
            Ok(Some(item)) => out.push(Ok(item)),
            Ok(None) => break,
            Err(e) => out.push(Err(e)),
        }
    }
    assert!(buf.is_empty(), "decode_eof leaves nothing behind");
    out
}
