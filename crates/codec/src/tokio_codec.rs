//! tokio-util [`Decoder`] and [`Encoder`] implementations for the sans-IO
//! decoders and encoders, so they plug into `FramedRead` and `FramedWrite`.
//!
//! The adapters add nothing but the error type tokio-util asks for (one that
//! can hold an I/O error) and route end of input to each decoder's own
//! `decode_eof`, so a truncated final frame is reported the same way as when
//! the decoder is driven directly.
//!
//! Note that tokio-util's `FramedRead` yields `None` once after a decoder
//! error. A caller that wants the decoders' documented recovery (for instance
//! skipping an oversized line) can poll it again, or drive the decoder itself.

use std::io;

use bytes::{Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use crate::{
    ContentLengthDecoder, ContentLengthEncoder, DecodeError, EncodeError, LineDecoder, LineEncoder,
    SseDecoder, SseEvent,
};

/// An error from a codec adapter: reading or writing failed, or the bytes
/// could not be framed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The underlying reader or writer failed.
    #[error("I/O error")]
    Io(#[source] io::Error),
    /// The input could not be decoded into frames.
    #[error("cannot decode frame")]
    Decode(#[source] DecodeError),
    /// A frame could not be encoded.
    #[error("cannot encode frame")]
    Encode(#[source] EncodeError),
}

impl From<io::Error> for CodecError {
    fn from(e: io::Error) -> Self {
        CodecError::Io(e)
    }
}

impl From<DecodeError> for CodecError {
    fn from(e: DecodeError) -> Self {
        CodecError::Decode(e)
    }
}

impl From<EncodeError> for CodecError {
    fn from(e: EncodeError) -> Self {
        CodecError::Encode(e)
    }
}

/// Implements [`Decoder`] by delegating to the inherent methods.
macro_rules! decoder {
    ($ty:ty, $item:ty) => {
        impl Decoder for $ty {
            type Item = $item;
            type Error = CodecError;

            fn decode(&mut self, src: &mut BytesMut) -> Result<Option<$item>, CodecError> {
                Ok(<$ty>::decode(self, src)?)
            }

            fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<$item>, CodecError> {
                Ok(<$ty>::decode_eof(self, src)?)
            }
        }
    };
}

decoder!(LineDecoder, Bytes);
decoder!(ContentLengthDecoder, Bytes);
decoder!(SseDecoder, SseEvent);

/// Implements [`Encoder`] for owned and borrowed frames.
macro_rules! encoder {
    ($ty:ty) => {
        impl Encoder<Bytes> for $ty {
            type Error = CodecError;

            fn encode(&mut self, frame: Bytes, dst: &mut BytesMut) -> Result<(), CodecError> {
                Ok(<$ty>::encode(self, &frame, dst)?)
            }
        }

        impl Encoder<&[u8]> for $ty {
            type Error = CodecError;

            fn encode(&mut self, frame: &[u8], dst: &mut BytesMut) -> Result<(), CodecError> {
                Ok(<$ty>::encode(self, frame, dst)?)
            }
        }
    };
}

encoder!(LineEncoder);
encoder!(ContentLengthEncoder);

#[cfg(test)]
mod tests {
    use futures_util::{SinkExt, StreamExt};
    use tokio_util::codec::{FramedRead, FramedWrite};

    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime")
            .block_on(f)
    }

    #[test]
    fn framed_read_line_decodes_and_reports_truncation_via_decode_eof() {
        block_on(async {
            let input: &[u8] = b"{\"a\":1}\r\n\n{\"b\":2}";
            let frames: Vec<_> = FramedRead::new(input, LineDecoder::new()).collect().await;
            let frames: Vec<Bytes> = frames.into_iter().map(Result::unwrap).collect();
            assert_eq!(frames, vec![&b"{\"a\":1}"[..], &b"{\"b\":2}"[..]]);

            let input: &[u8] = b"Content-Length: 2\r\n\r\n{}Content-Length: 9\r\n\r\n{";
            let mut read = FramedRead::new(input, ContentLengthDecoder::new());
            assert_eq!(read.next().await.unwrap().unwrap(), &b"{}"[..]);
            assert!(matches!(
                read.next().await,
                Some(Err(CodecError::Decode(DecodeError::TruncatedBody {
                    expected: 9,
                    received: 1
                })))
            ));
        });
    }

    #[test]
    fn framed_read_sse_yields_events() {
        block_on(async {
            let input: &[u8] = b"id: 1\ndata: x\n\n: ping\n\ndata: y\n\n";
            let events: Vec<_> = FramedRead::new(input, SseDecoder::new()).collect().await;
            let data: Vec<Bytes> = events.into_iter().map(|e| e.unwrap().data).collect();
            assert_eq!(data, vec![&b"x"[..], &b"y"[..]]);
        });
    }

    #[test]
    fn framed_write_encodes_and_refuses_bad_frames() {
        block_on(async {
            let mut out = Vec::new();
            let mut write = FramedWrite::new(&mut out, LineEncoder::new());
            write.send(Bytes::from_static(b"{}")).await.unwrap();
            let err = write.send(Bytes::from_static(b"{\n}")).await.unwrap_err();
            assert!(matches!(
                err,
                CodecError::Encode(EncodeError::EmbeddedNewline { offset: 1 })
            ));
            drop(write);
            let mut write = FramedWrite::new(&mut out, ContentLengthEncoder::new());
            write.send(&b"[]"[..]).await.unwrap();
            drop(write);
            assert_eq!(out, b"{}\nContent-Length: 2\r\n\r\n[]");
        });
    }
}
