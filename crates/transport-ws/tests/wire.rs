//! The handshake and the messages: the `mcp` subprotocol, headers, text
//! and binary messages, limits, pings.

mod support;

use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use mcpwire_transport::{
    Active, CloseReason, ConnectError, SendError, Transport, TransportError, TransportEvent,
    TransportExt,
};
use mcpwire_ws::{Error, HeaderName, HeaderValue, WsConnector, WsTransport};
use support::*;
use tokio::io::AsyncWriteExt;
use tokio_tungstenite::tungstenite::Message;

fn ws_error(e: &TransportError) -> &Error {
    match e {
        TransportError::Other(o) => o.downcast_ref::<Error>().expect("an mcpwire_ws::Error"),
        other => panic!("not a WebSocket error: {other:?}"),
    }
}

#[tokio::test]
async fn messages_go_both_ways_in_order_with_mcp_and_the_configured_headers() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        // Echo three messages, then wait for the client's close.
        for _ in 0..3 {
            let m = ws.next().await.unwrap().unwrap();
            ws.send(m).await.unwrap();
        }
        drain_texts(&mut ws).await
    })
    .await;
    let config = config().header(
        HeaderName::from_static("authorization"),
        HeaderValue::from_static("Bearer abc"),
    );
    let mut t = connect(&server.url, config).await;
    for n in 0..3 {
        t.sender().send(Bytes::from(numbered(n, 64))).await.unwrap();
    }
    t.set_active(Active::Many(3.try_into().unwrap()));
    for n in 0..3 {
        match event(&mut t).await {
            Some(TransportEvent::Frame(f)) => assert_eq!(number_of(&f), n),
            other => panic!("{other:?}"),
        }
    }
    let info = t.info();
    assert_eq!(info.kind, "websocket");
    t.close().await;
    assert!(matches!(
        event(&mut t).await,
        Some(TransportEvent::Closed(CloseReason::Local))
    ));
    assert!(t.next_event().await.is_none());
    let rest = server.task.await.unwrap().unwrap();
    assert!(rest.is_empty(), "{rest:?}");
    let headers = server.headers.lock().unwrap().clone().unwrap();
    assert_eq!(headers["sec-websocket-protocol"], "mcp");
    assert_eq!(headers["authorization"], "Bearer abc");
    assert!(
        headers["user-agent"]
            .to_str()
            .unwrap()
            .starts_with("mcpwire/")
    );
}

#[tokio::test]
async fn a_server_that_selects_no_subprotocol_is_refused() {
    let server = serve(Upgrade::NoSubprotocol, |_ws| async {}).await;
    let connector = WsConnector::new(config()).unwrap();
    let err = WsTransport::connect(&connector, &server.url)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::SubprotocolNotSelected), "{err:?}");
    assert!(err.to_string().contains("`mcp`"));
}

#[tokio::test]
async fn a_server_that_selects_another_subprotocol_is_refused() {
    let server = serve(Upgrade::Subprotocol("graphql-ws"), |_ws| async {}).await;
    let connector = WsConnector::new(config()).unwrap();
    let err = WsTransport::connect(&connector, &server.url)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::SubprotocolMismatch), "{err:?}");
}

#[tokio::test]
async fn a_refused_upgrade_is_a_status_with_its_headers() {
    let server = serve(Upgrade::Refuse(401), |_ws| async {}).await;
    let connector = WsConnector::new(config()).unwrap();
    let err = WsTransport::connect(&connector, &server.url)
        .await
        .unwrap_err();
    let status = err.status().unwrap_or_else(|| panic!("{err:?}"));
    assert_eq!(status.status, 401);
    assert_eq!(
        status.www_authenticate.as_deref(),
        Some("Bearer realm=\"test\"")
    );
    let t: TransportError = err.into();
    assert!(matches!(t, TransportError::Unauthorized(_)), "{t:?}");
}

#[tokio::test]
async fn connect_errors_are_typed() {
    let connector = WsConnector::new(config()).unwrap();
    let err = WsTransport::connect(&connector, "http://127.0.0.1:1/")
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        Error::Connect(ConnectError::UnsupportedScheme { scheme, .. }) if scheme == "http"
    ));
    // A port nothing listens on: refused at once.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let err = WsTransport::connect(&connector, &format!("ws://127.0.0.1:{port}/"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Connect(ConnectError::Unreachable(_))),
        "{err:?}"
    );
    assert!(std::error::Error::source(&err).is_some());
    // A server that accepts TCP and never answers the upgrade: the connect
    // timeout.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/", silent.local_addr().unwrap());
    let connector = WsConnector::new(config().connect_timeout(Duration::from_millis(200))).unwrap();
    let err = WsTransport::connect(&connector, &url).await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
}

#[tokio::test]
async fn a_binary_message_is_reported_without_a_grant_and_skipped() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        ws.send(Message::Binary(Bytes::from_static(b"{\"x\":1}")))
            .await
            .unwrap();
        ws.send(Message::text(numbered(7, 40))).await.unwrap();
        drain_texts(&mut ws).await
    })
    .await;
    let mut t = connect(&server.url, config()).await;
    t.set_active(Active::Once);
    match event(&mut t).await {
        Some(TransportEvent::Error(e)) => {
            assert!(matches!(
                ws_error(&e),
                Error::BinaryMessage { len: 7, total: 1 }
            ));
        }
        other => panic!("{other:?}"),
    }
    // The grant is still there for the text message.
    match event(&mut t).await {
        Some(TransportEvent::Frame(f)) => assert_eq!(number_of(&f), 7),
        other => panic!("{other:?}"),
    }
    t.close().await;
    server.task.await.unwrap();
}

#[tokio::test]
async fn a_20_mib_message_is_refused_and_the_connection_closes_with_1009() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        let big = numbered(1, 20 << 20);
        // The client closes before it has read it all: the send may fail.
        let _ = ws.send(Message::text(big)).await;
        let mut close_code = None;
        while let Some(Ok(m)) = ws.next().await {
            if let Message::Close(Some(frame)) = m {
                close_code = Some(u16::from(frame.code));
            }
        }
        close_code
    })
    .await;
    let mut t = connect(&server.url, config()).await;
    t.set_active(Active::Once);
    let (before, reason) = until_closed(&mut t).await;
    assert!(
        matches!(reason, CloseReason::FrameTooLong { max } if max == 16 << 20),
        "{reason:?}"
    );
    match before.as_slice() {
        [TransportEvent::Error(e)] => assert!(
            matches!(ws_error(e), Error::MessageTooLarge { size, max } if *size > *max && *max == 16 << 20),
            "{e:?}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(server.task.await.unwrap().unwrap(), Some(1009));
}

#[tokio::test]
async fn an_oversized_message_is_refused_from_its_header_before_its_payload() {
    // The server announces a 20 MiB text frame and sends 1 KiB of it: the
    // refusal cannot have waited for (or buffered) the rest.
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        let mut header = vec![0x81, 127];
        header.extend_from_slice(&(20u64 << 20).to_be_bytes());
        header.extend_from_slice(&[b' '; 1024]);
        ws.get_mut().write_all(&header).await.unwrap();
        // Keep the socket open until the client is done.
        read_raw(&mut ws, usize::MAX, Duration::from_secs(10)).await
    })
    .await;
    let mut t = connect(&server.url, config()).await;
    t.set_active(Active::Once);
    let (before, reason) = until_closed(&mut t).await;
    assert!(
        matches!(reason, CloseReason::FrameTooLong { .. }),
        "{reason:?}"
    );
    assert!(matches!(
        before.as_slice(),
        [TransportEvent::Error(e)] if matches!(ws_error(e), Error::MessageTooLarge { size, .. } if *size == 20 << 20)
    ));
    let (bytes, eof) = server.task.await.unwrap().unwrap();
    // Our close frame (masked, opcode 8) reached the server, then the end.
    assert_eq!(bytes.first(), Some(&0x88));
    assert!(eof);
}

#[tokio::test]
async fn a_frame_over_the_limit_is_refused_by_the_sender_and_handed_back() {
    let server = serve(
        Upgrade::Mcp,
        |mut ws| async move { drain_texts(&mut ws).await },
    )
    .await;
    let mut t = connect(&server.url, config().max_frame_len(100)).await;
    let big = Bytes::from(numbered(1, 200));
    match t.sender().try_send(big.clone()) {
        Err(SendError::TooLarge(f, 100)) => assert_eq!(f.frame, big),
        other => panic!("{other:?}"),
    }
    t.close().await;
    assert!(server.task.await.unwrap().unwrap().is_empty());
}

#[tokio::test]
async fn a_frame_that_is_not_utf8_comes_back_undelivered() {
    let server = serve(
        Upgrade::Mcp,
        |mut ws| async move { drain_texts(&mut ws).await },
    )
    .await;
    let mut t = connect(&server.url, config()).await;
    let bad = Bytes::from_static(b"{\"x\":\"\xff\"}");
    t.sender().send(bad.clone()).await.unwrap();
    t.sender().send(Bytes::from(numbered(2, 30))).await.unwrap();
    match event(&mut t).await {
        Some(TransportEvent::Undelivered { frame, error }) => {
            assert_eq!(frame, bad);
            assert!(matches!(ws_error(&error), Error::NotUtf8));
        }
        other => panic!("{other:?}"),
    }
    t.close().await;
    let texts = server.task.await.unwrap().unwrap();
    assert_eq!(texts, [numbered(2, 30)]);
}

#[tokio::test]
async fn a_server_ping_is_answered_with_its_payload() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        ws.send(Message::Ping(Bytes::from_static(b"are you there")))
            .await
            .unwrap();
        let answer = ws.next().await.unwrap().unwrap();
        ws.send(Message::text(numbered(1, 30))).await.unwrap();
        drain_texts(&mut ws).await;
        answer
    })
    .await;
    let mut t = connect(&server.url, config()).await;
    t.set_active(Active::Once);
    assert!(matches!(
        event(&mut t).await,
        Some(TransportEvent::Frame(_))
    ));
    t.close().await;
    let answer = server.task.await.unwrap().unwrap();
    assert_eq!(answer, Message::Pong(Bytes::from_static(b"are you there")));
}
