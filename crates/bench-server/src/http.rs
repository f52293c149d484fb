//! The Streamable HTTP front end: stateless, one JSON-RPC message per POST,
//! answered as `application/json` or as a one-event `text/event-stream`.
//! `GET /connections` answers how many TCP connections it has accepted, so
//! a benchmark can tell a client that keeps its connections from one that
//! opens a new one per request.

use std::convert::Infallible;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::{Bytes, BytesMut};
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

use crate::echo::answer;

/// The largest request body accepted.
const MAX_BODY: usize = 64 << 20;

/// TCP connections accepted since start.
static ACCEPTED: AtomicU64 = AtomicU64::new(0);

/// How answers are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnswerMode {
    /// `Content-Type: application/json`.
    Json,
    /// `Content-Type: text/event-stream`, one `message` event.
    Sse,
}

/// Listens on 127.0.0.1:`port` (0 picks a free port), prints the endpoint
/// URL as the first line of stdout, and serves until killed.
pub(crate) fn serve(mode: AnswerMode, port: u16, threads: usize) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let mut stdout = io::stdout().lock();
        writeln!(stdout, "http://{}/mcp", listener.local_addr()?)?;
        stdout.flush()?;
        drop(stdout);
        loop {
            let (stream, _) = listener.accept().await?;
            ACCEPTED.fetch_add(1, Ordering::Relaxed);
            stream.set_nodelay(true)?;
            tokio::spawn(async move {
                let service = service_fn(move |req| handle(req, mode));
                // A connection error ends that connection only.
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

async fn handle(
    req: Request<Incoming>,
    mode: AnswerMode,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.uri().path() == "/connections" {
        let count = ACCEPTED.load(Ordering::Relaxed).to_string();
        return Ok(Response::new(Full::new(Bytes::from(count))));
    }
    if req.uri().path() != "/mcp" {
        return Ok(status(StatusCode::NOT_FOUND));
    }
    if req.method() != Method::POST {
        // Stateless: no GET stream and no session to delete.
        let mut response = status(StatusCode::METHOD_NOT_ALLOWED);
        response
            .headers_mut()
            .insert(header::ALLOW, header::HeaderValue::from_static("POST"));
        return Ok(response);
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(status(StatusCode::PAYLOAD_TOO_LARGE)),
    };
    let mut out = BytesMut::new();
    if mode == AnswerMode::Sse {
        out.extend_from_slice(b"event: message\ndata: ");
    }
    if !answer(body, &mut out) {
        return Ok(status(StatusCode::ACCEPTED));
    }
    let content_type = match mode {
        AnswerMode::Json => "application/json",
        AnswerMode::Sse => {
            out.extend_from_slice(b"\n\n");
            "text/event-stream"
        }
    };
    let mut response = Response::new(Full::new(out.freeze()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    Ok(response)
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}
