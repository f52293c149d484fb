//! The raw HTTP baseline: hyper's pooled client with keep-alive, requests
//! written by hand, answers read with one borrowed parse.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::{Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::raw_wire::{INITIALIZE, INITIALIZED, echo_request, parse_answer};
use crate::workload::Caller;

/// A raw HTTP "session" (the server is stateless).
#[derive(Clone)]
pub(crate) struct RawHttp {
    client: Client<HttpConnector, Full<Bytes>>,
    url: Uri,
    next_id: Arc<AtomicU64>,
}

/// The process-wide hyper client.
pub(crate) fn http_client() -> Client<HttpConnector, Full<Bytes>> {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new()).build(connector)
}

impl RawHttp {
    /// Initializes a session on `url`.
    pub(crate) async fn connect(
        client: &Client<HttpConnector, Full<Bytes>>,
        url: &str,
    ) -> Result<Self, String> {
        let this = RawHttp {
            client: client.clone(),
            url: url
                .parse()
                .map_err(|e: http::uri::InvalidUri| e.to_string())?,
            next_id: Arc::new(AtomicU64::new(1)),
        };
        this.post(Bytes::from_static(INITIALIZE)).await?;
        this.post(Bytes::from_static(INITIALIZED)).await?;
        Ok(this)
    }

    /// Posts one message; the JSON of the answer, empty for 202.
    async fn post(&self, body: Bytes) -> Result<Bytes, String> {
        let request = Request::builder()
            .method(Method::POST)
            .uri(self.url.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .body(Full::new(body))
            .map_err(|e| e.to_string())?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let sse = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        match status {
            StatusCode::ACCEPTED => Ok(Bytes::new()),
            StatusCode::OK if sse => sse_data(body),
            StatusCode::OK => Ok(body),
            other => Err(format!("HTTP {other}")),
        }
    }
}

/// The `data` of the first event of an SSE body (one line: compact JSON).
fn sse_data(body: Bytes) -> Result<Bytes, String> {
    let start = find(&body, b"data: ").ok_or("an SSE answer without data")? + 6;
    let end = start + memchr::memchr(b'\n', &body[start..]).unwrap_or(body.len() - start);
    Ok(body.slice(start..end))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

impl Caller for RawHttp {
    async fn echo(&self, message: &str) -> Result<usize, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut body = Vec::new();
        echo_request(&mut body, id, message);
        let answer = self.post(body.into()).await?;
        let (got, len) = parse_answer(&answer)?;
        if got != id {
            return Err(format!("answer {got} to request {id}"));
        }
        Ok(len)
    }

    async fn close(self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_data_is_the_first_data_line() {
        let body = Bytes::from_static(b"event: message\ndata: {\"id\":1}\n\n");
        assert_eq!(sse_data(body).as_deref(), Ok(&b"{\"id\":1}"[..]));
        assert!(sse_data(Bytes::from_static(b"event: x\n\n")).is_err());
    }
}
