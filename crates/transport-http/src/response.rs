//! Reading answers: an error status into [`Error::Status`] or, for 401 and
//! 403, [`Error::Authorization`]; `Retry-After`; the media type; a whole
//! body within its limits.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, Response};
use http_body_util::BodyExt;
use hyper::body::Body as _;
use mcpwire_codec::grow_frame_buffer;
use mcpwire_codec::jsonrpc::Id;
use mcpwire_transport::HttpStatus;

use crate::Error;
use crate::demand::ResponseBody;
use crate::error::AuthorizationRequired;
use mcpwire_auth::Challenge;

/// How much of an error answer's body is kept for diagnostics.
const ERROR_BODY_LIMIT: usize = 1024;

/// How long an error answer's body is waited for: it is only for the
/// message, and a server that stalls after its status must not hold the
/// error back.
const ERROR_BODY_WAIT: Duration = Duration::from_secs(2);
/// A body up to this size that arrives in one frame is copied out of it.
/// The frame is a slice of the connection's read buffer (hyper's starts at
/// 8 KiB), and an answer kept as that slice would keep the whole buffer
/// allocated until the answer is dropped, while hyper took a fresh buffer
/// for the connection's next answer: with 64 calls in flight, a few hundred
/// KiB more held for 100-byte answers. Copied, the buffer is hyper's alone
/// again and is reused in place.
const COPIED_BODY: usize = 8 << 10;

/// Turns an error answer into [`Error::Status`]: status first, then the
/// headers a caller acts on, then the start of the body for diagnostics. The
/// body is never parsed, so a non-JSON answer cannot turn into a parse error.
pub(crate) async fn status_error(resp: Response<ResponseBody>) -> Error {
    let mut out = HttpStatus::new(resp.status().as_u16());
    out.www_authenticate = resp
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    out.retry_after = retry_after(resp.headers());
    out.body = error_body(resp.into_body()).await;
    Error::Status(Box::new(out))
}

/// Turns a 401 or 403 answer into [`Error::Authorization`], with every
/// challenge of every `WWW-Authenticate` header.
pub(crate) async fn authorization_error(resp: Response<ResponseBody>) -> Error {
    let (required, _) = authorization_required(resp).await;
    Error::Authorization(Box::new(required))
}

/// What a 401 or 403 answer asks for (every challenge of every
/// `WWW-Authenticate` header, the start of the body), and its `DPoP-Nonce`.
/// The body is read (bounded), so the connection is free again.
pub(crate) async fn authorization_required(
    resp: Response<ResponseBody>,
) -> (AuthorizationRequired, Option<String>) {
    let status = resp.status().as_u16();
    let challenges = Challenge::parse_all(
        resp.headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .map(|v| v.as_bytes()),
    );
    let nonce = resp
        .headers()
        .get("dpop-nonce")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = error_body(resp.into_body()).await;
    let required = AuthorizationRequired {
        status,
        challenges,
        body,
    };
    (required, nonce)
}

/// The start of an error answer's body, lossily decoded. The read is bounded
/// in size and in time: a server that sends an endless error page must not
/// hold the caller.
async fn error_body(mut body: ResponseBody) -> String {
    let mut kept = BytesMut::new();
    let read = async {
        while kept.len() < ERROR_BODY_LIMIT {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        let room = ERROR_BODY_LIMIT - kept.len();
                        kept.extend_from_slice(&data[..data.len().min(room)]);
                    }
                }
                _ => break,
            }
        }
    };
    let _ = tokio::time::timeout(ERROR_BODY_WAIT, read).await;
    String::from_utf8_lossy(&kept).into_owned()
}

/// The JSON-RPC error response to the request `id`, if that is what the
/// body of the error answer `error` is. A server of the stateless revision
/// refuses a request with a 4xx status and such a body (400 for an
/// unsupported version or mismatched headers, 404 for a method it does not
/// have): that is the request's answer, not a transport failure. An error
/// for another id (or none, as servers of earlier revisions send for a
/// missing session) is not.
pub(crate) fn rpc_error_answer(error: &Error, id: &Id) -> Option<Bytes> {
    let status = error.status()?;
    if !(400..500).contains(&status.status) {
        return None;
    }
    let body = status.body.trim();
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let is_error = value
        .get("error")
        .and_then(|e| e.get("code"))
        .is_some_and(serde_json::Value::is_i64);
    let same_id = value
        .get("id")
        .and_then(|v| serde_json::from_value::<Id>(v.clone()).ok())
        .is_some_and(|got| got == *id);
    (is_error && same_id).then(|| Bytes::copy_from_slice(body.as_bytes()))
}

/// `Retry-After` as delta-seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

/// An answer's media type, as far as a POST's answer cares.
pub(crate) enum Media {
    Json,
    EventStream,
    /// Anything else, lowercased, for the error.
    Other(String),
}

impl Media {
    /// The answer's media type, parameters aside, in any case; allocates
    /// only for a type it does not know.
    pub(crate) fn of(headers: &HeaderMap) -> Media {
        let value = headers.get(CONTENT_TYPE).map_or(&b""[..], |v| v.as_bytes());
        let end = value.iter().position(|b| *b == b';').unwrap_or(value.len());
        let media = value[..end].trim_ascii();
        if media.eq_ignore_ascii_case(b"application/json") {
            Media::Json
        } else if media.eq_ignore_ascii_case(b"text/event-stream") {
            Media::EventStream
        } else {
            Media::Other(media_type(headers))
        }
    }
}

/// The media type of an answer, lowercased, without parameters.
pub(crate) fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Reads a whole body of at most `max` bytes within `timeout`. A body that
/// arrives as one data frame (most answers) is returned as that frame, with
/// no copy, unless it is small ([`COPIED_BODY`]); trailers are ignored.
pub(crate) async fn read_body(
    mut body: ResponseBody,
    max: usize,
    timeout: Duration,
) -> Result<Bytes, Error> {
    let declared = body
        .size_hint()
        .exact()
        .and_then(|n| usize::try_from(n).ok());
    let read = async {
        let mut gather = Gather::new(declared, max);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| Error::Request(Box::new(e)))?;
            if let Ok(data) = frame.into_data() {
                gather.push(data)?;
            }
        }
        Ok(gather.finish())
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(Error::Timeout))
}

/// A body's data frames gathered into one buffer of at most `max` bytes.
///
/// The buffer grows as the codec's frame buffers do (`grow_frame_buffer`):
/// at once to the length the answer declares (`Content-Length`), and a
/// large body (256 KiB or more) in one step to room for the largest frame
/// allowed. Grown by doubling instead, a 10 MiB answer was copied at every
/// doubling into fresh memory; and sized exactly, a large answer's memory
/// was kept by the allocator's per-thread heaps after the answer was gone
/// (the HTTP W4 1 MiB echo's peak RSS rose by 2 to 6 MiB), where the one
/// large step is mapped apart and goes back to the system when freed.
struct Gather {
    /// The first frame, kept as it is while it is the only one.
    first: Option<Bytes>,
    rest: BytesMut,
    declared: Option<usize>,
    max: usize,
}

impl Gather {
    fn new(declared: Option<usize>, max: usize) -> Self {
        Self {
            first: None,
            rest: BytesMut::new(),
            declared,
            max,
        }
    }

    fn push(&mut self, data: Bytes) -> Result<(), Error> {
        let held = self.first.as_ref().map_or(0, Bytes::len) + self.rest.len();
        let len = held + data.len();
        if len > self.max {
            return Err(Error::BodyTooLarge { max: self.max });
        }
        if let Some(first) = self.first.take() {
            let expected = self.declared.unwrap_or(0).clamp(len, self.max);
            grow_frame_buffer(&mut self.rest, expected, self.max);
            self.rest.extend_from_slice(&first);
            self.rest.extend_from_slice(&data);
        } else if self.rest.is_empty() {
            self.first = Some(data);
        } else {
            grow_frame_buffer(&mut self.rest, data.len(), self.max);
            self.rest.extend_from_slice(&data);
        }
        Ok(())
    }

    fn finish(self) -> Bytes {
        match self.first {
            Some(small) if small.len() <= COPIED_BODY => Bytes::copy_from_slice(&small),
            Some(first) => first,
            None => self.rest.freeze(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 16 << 20;

    fn gathered(declared: Option<usize>, frames: &[&[u8]]) -> Gather {
        let mut gather = Gather::new(declared, MAX);
        for frame in frames {
            gather.push(Bytes::copy_from_slice(frame)).unwrap();
        }
        gather
    }

    /// `frame` alone, gathered: the body, and whether the frame's buffer is
    /// left to its other holder alone.
    fn one_frame(frame: Bytes) -> (Bytes, bool) {
        // As hyper reads: into a buffer with room to spare, the frame split
        // off its front.
        let mut read_buffer = BytesMut::with_capacity(frame.len() + (8 << 10));
        read_buffer.extend_from_slice(&frame);
        let (start, whole) = (read_buffer.as_ptr(), read_buffer.capacity());
        let frame = read_buffer.split().freeze();
        let mut gather = Gather::new(Some(frame.len()), MAX);
        gather.push(frame).unwrap();
        let body = gather.finish();
        // Asked for all of it again, the buffer is reclaimed in place only
        // if nothing else holds it; shared, it is allocated anew.
        read_buffer.reserve(whole);
        (body, read_buffer.as_ptr() == start)
    }

    #[test]
    fn a_large_body_in_one_frame_is_that_frame() {
        let large = Bytes::from(vec![b'x'; COPIED_BODY + 1]);
        let mut gather = Gather::new(Some(large.len()), MAX);
        gather.push(large.clone()).unwrap();
        assert_eq!(gather.finish().as_ptr(), large.as_ptr());
        let (body, released) = one_frame(large);
        assert_eq!(body.len(), COPIED_BODY + 1);
        assert!(!released);
    }

    #[test]
    fn a_small_body_in_one_frame_leaves_the_read_buffer_alone() {
        for len in [7, COPIED_BODY] {
            let frame = Bytes::from(vec![b'y'; len]);
            let (body, released) = one_frame(frame.clone());
            assert_eq!(body, frame);
            assert!(released, "{len} bytes");
        }
    }

    #[test]
    fn frames_are_gathered_in_order() {
        let gather = gathered(None, &[b"ab", b"cd", b"ef"]);
        assert_eq!(&gather.finish()[..], b"abcdef");
        assert!(gathered(None, &[]).finish().is_empty());
    }

    #[test]
    fn a_declared_length_is_reserved_at_once() {
        let gather = gathered(Some(10_000), &[b"ab", b"cd"]);
        assert!(gather.rest.capacity() >= 10_000);
        assert_eq!(&gather.finish()[..], b"abcd");
    }

    #[test]
    fn a_large_body_takes_one_step_to_room_for_the_largest() {
        let whole = mcpwire_codec::grow_frame_buffer_len(MAX);
        let gather = gathered(Some(1 << 20), &[b"ab", b"cd"]);
        assert_eq!(gather.rest.capacity(), whole);
        // Undeclared: doubling while small, then the same one step.
        let chunk = vec![b'x'; 64 << 10];
        let mut gather = gathered(None, &[&chunk, &chunk]);
        assert!(gather.rest.capacity() < whole);
        for _ in 0..3 {
            gather.push(Bytes::from(chunk.clone())).unwrap();
        }
        assert_eq!(gather.rest.capacity(), whole);
        assert_eq!(gather.finish().len(), 5 * chunk.len());
    }

    #[test]
    fn a_body_over_the_limit_is_refused() {
        let mut gather = Gather::new(None, 4);
        gather.push(Bytes::from_static(b"abc")).unwrap();
        gather.push(Bytes::from_static(b"d")).unwrap();
        let refused = gather.push(Bytes::from_static(b"e"));
        assert!(matches!(refused, Err(Error::BodyTooLarge { max: 4 })));
    }

    #[test]
    fn retry_after_takes_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        let later = std::time::SystemTime::now() + Duration::from_secs(120);
        h.insert(RETRY_AFTER, httpdate::fmt_http_date(later).parse().unwrap());
        let d = retry_after(&h).unwrap();
        assert!(d > Duration::from_secs(100) && d <= Duration::from_secs(120));
        h.insert(RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn media_type_ignores_parameters_and_case() {
        let mut h = HeaderMap::new();
        h.insert(
            CONTENT_TYPE,
            "Text/Event-Stream; charset=utf-8".parse().unwrap(),
        );
        assert_eq!(media_type(&h), "text/event-stream");
        assert!(matches!(Media::of(&h), Media::EventStream));
        h.insert(CONTENT_TYPE, " application/JSON ;x=y".parse().unwrap());
        assert!(matches!(Media::of(&h), Media::Json));
        h.insert(CONTENT_TYPE, "text/html".parse().unwrap());
        assert!(matches!(Media::of(&h), Media::Other(m) if m == "text/html"));
        assert!(matches!(Media::of(&HeaderMap::new()), Media::Other(m) if m.is_empty()));
    }
}
