//! The demo server over Streamable HTTP: stateless, bound to 127.0.0.1,
//! one POST per message. A request is answered with an SSE stream carrying,
//! as it happens, what the server sends while handling it (progress, log
//! messages), then its response; a notification or response gets
//! `202 Accepted`. There is
//! no GET stream and no session, so the tools that ask the client something
//! (`ask_llm`, `ask_user`) say the client does not offer it.

use std::convert::Infallible;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use mcpwire_codec::jsonrpc::{Id, Message};
use mcpwire_transport::FrameSender;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::peer::Server;

/// The largest request body accepted.
const MAX_BODY: usize = 16 << 20;

/// Listens on 127.0.0.1:`port` (0 picks a free port), prints the endpoint
/// URL as the first line of stdout, and serves until killed. With a
/// `token`, a request without `Authorization: Bearer <token>` is answered
/// 401, and no OAuth metadata is published.
pub(crate) async fn serve(port: u16, token: Option<String>) -> io::Result<()> {
    let token: Arc<Option<String>> = Arc::new(token.map(|t| format!("Bearer {t}")));
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
    {
        let mut stdout = io::stdout().lock();
        writeln!(stdout, "http://{}/mcp", listener.local_addr()?)?;
        stdout.flush()?;
    }
    loop {
        let (stream, _) = listener.accept().await?;
        let token = token.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| handle(req, token.clone()));
            // A connection error ends that connection only.
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// An answer's body: a whole one, or SSE events as they come.
enum Answer {
    Whole(Full<Bytes>),
    Events(mpsc::Receiver<Bytes>),
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Answer::Whole(full) => Pin::new(full).poll_frame(cx),
            Answer::Events(rx) => rx.poll_recv(cx).map(|e| e.map(|b| Ok(Frame::data(b)))),
        }
    }
}

async fn handle(
    req: Request<Incoming>,
    token: Arc<Option<String>>,
) -> Result<Response<Answer>, Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(status(StatusCode::NOT_FOUND));
    }
    if let Some(expected) = token.as_deref()
        && req
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes())
            != Some(expected.as_bytes())
    {
        let mut response = status(StatusCode::UNAUTHORIZED);
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        return Ok(response);
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
    let id = match Message::parse(body.clone()) {
        Ok(Message::Request(r)) => r.id,
        Ok(_) => {
            // A notification or a response: nothing to answer here (and no
            // request of ours waits for a response, with no session).
            return Ok(status(StatusCode::ACCEPTED));
        }
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    Ok(answer_stream(body, id).await)
}

/// Runs one request on a server of its own and streams what it sends, as
/// SSE events, until the response.
async fn answer_stream(request: Bytes, id: Id) -> Response<Answer> {
    let (sender, mut rx) = FrameSender::channel(64);
    // Only the request's task keeps the server (and its sender): if it ends
    // without a response, the stream ends.
    Arc::new(Server::with_sender(sender)).on_frame(request);
    let (events, body) = mpsc::channel(16);
    tokio::spawn(async move {
        while let Some(frame) = rx.recv().await {
            let frame = frame.frame;
            let last = matches!(
                Message::parse(frame.clone()),
                Ok(Message::Response(ref r)) if r.id.as_ref() == Some(&id)
            );
            let mut event = BytesMut::with_capacity(frame.len() + 24);
            event.extend_from_slice(b"event: message\ndata: ");
            event.extend_from_slice(&frame);
            event.extend_from_slice(b"\n\n");
            if events.send(event.freeze()).await.is_err() || last {
                break;
            }
        }
    });
    let mut response = Response::new(Answer::Events(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    response
}

fn status(code: StatusCode) -> Response<Answer> {
    let mut response = Response::new(Answer::Whole(Full::new(Bytes::new())));
    *response.status_mut() = code;
    response
}
