//! Reading answers: an error status into [`Error::Status`] or, for 401 and
//! 403, [`Error::Authorization`]; `Retry-After`; the media type; a whole
//! body within its limits.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use mcpwire_transport::HttpStatus;

use crate::Error;
use crate::error::AuthorizationRequired;
use crate::www_authenticate::Challenge;

/// How much of an error answer's body is kept for diagnostics.
const ERROR_BODY_LIMIT: usize = 1024;

/// Turns an error answer into [`Error::Status`]: status first, then the
/// headers a caller acts on, then the start of the body for diagnostics. The
/// body is never parsed, so a non-JSON answer cannot turn into a parse error.
pub(crate) async fn status_error(resp: Response<Incoming>) -> Error {
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
pub(crate) async fn authorization_error(resp: Response<Incoming>) -> Error {
    let status = resp.status().as_u16();
    let challenges = Challenge::parse_all(
        resp.headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .map(|v| v.as_bytes()),
    );
    let body = error_body(resp.into_body()).await;
    Error::Authorization(Box::new(AuthorizationRequired {
        status,
        challenges,
        body,
    }))
}

/// The start of an error answer's body, lossily decoded. The read is bounded
/// in size and in time: a server that sends an endless error page must not
/// hold the caller.
async fn error_body(mut body: Incoming) -> String {
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
    let _ = tokio::time::timeout(Duration::from_secs(2), read).await;
    String::from_utf8_lossy(&kept).into_owned()
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
/// no copy; trailers are ignored.
pub(crate) async fn read_body(
    mut body: Incoming,
    max: usize,
    timeout: Duration,
) -> Result<Bytes, Error> {
    let read = async {
        let mut first: Option<Bytes> = None;
        let mut rest = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| Error::Request(Box::new(e)))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let len = first.as_ref().map_or(0, Bytes::len) + rest.len() + data.len();
            if len > max {
                return Err(Error::BodyTooLarge { max });
            }
            if let Some(first) = first.take() {
                rest.extend_from_slice(&first);
                rest.extend_from_slice(&data);
            } else if rest.is_empty() {
                first = Some(data);
            } else {
                rest.extend_from_slice(&data);
            }
        }
        Ok(first.unwrap_or_else(|| rest.freeze()))
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(Error::Timeout))
}

#[cfg(test)]
mod tests {
    use super::*;

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
