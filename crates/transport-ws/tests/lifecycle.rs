//! Closing (ours and the server's), the keepalive, and what happens to
//! frames when the connection fails.

mod support;

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use mcpwire_transport::{
    Active, CloseReason, SendError, Transport, TransportError, TransportEvent, TransportExt,
};
use mcpwire_ws::Error;
use support::*;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

fn ws_error(e: &TransportError) -> Option<&Error> {
    match e {
        TransportError::Other(o) => o.downcast_ref::<Error>(),
        _ => None,
    }
}

#[tokio::test]
async fn close_sends_queued_frames_then_runs_the_closing_handshake() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        let mut texts = Vec::new();
        let mut code = None;
        while let Some(Ok(m)) = ws.next().await {
            match m {
                Message::Text(t) => texts.push(t.to_string()),
                Message::Close(f) => code = f.map(|f| u16::from(f.code)),
                _ => {}
            }
        }
        (texts, code)
    })
    .await;
    let mut t = connect(&server.url, config()).await;
    let sender = t.sender();
    for n in 0..5 {
        sender.try_send(Bytes::from(numbered(n, 50))).unwrap();
    }
    t.close().await;
    assert!(matches!(
        event(&mut t).await,
        Some(TransportEvent::Closed(CloseReason::Local))
    ));
    assert!(t.next_event().await.is_none());
    assert!(matches!(
        sender.try_send(Bytes::from_static(b"{}")),
        Err(SendError::Closed(_))
    ));
    let (texts, code) = server.task.await.unwrap().unwrap();
    let expected: Vec<_> = (0..5).map(|n| numbered(n, 50)).collect();
    assert_eq!(texts, expected);
    assert_eq!(code, Some(1000));
}

#[tokio::test]
async fn close_gives_up_on_a_server_that_never_answers_and_drops_the_socket() {
    // The server reads raw bytes and never answers anything.
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        let mut seen = Vec::new();
        let eof = loop {
            let (bytes, eof) = read_raw(&mut ws, 1 << 16, Duration::from_secs(20)).await;
            seen.extend(bytes);
            if eof || seen.len() >= 1 << 16 {
                break eof;
            }
        };
        (seen, eof, Instant::now())
    })
    .await;
    let bound = Duration::from_millis(300);
    let mut t = connect(&server.url, config().close_timeout(bound)).await;
    let started = Instant::now();
    t.close().await;
    let closed_after = started.elapsed();
    assert!(matches!(
        event(&mut t).await,
        Some(TransportEvent::Closed(CloseReason::Local))
    ));
    let (seen, eof, dropped_at) = server.task.await.unwrap().unwrap();
    // Our close frame went out (masked, opcode 8), then the connection was
    // dropped: by the driver's bound, not the transport's backstop (bound
    // plus one second).
    assert_eq!(seen.first(), Some(&0x88), "{seen:?}");
    assert!(eof);
    assert!(closed_after >= bound, "{closed_after:?}");
    assert!(
        dropped_at.duration_since(started) < bound + Duration::from_millis(900),
        "{:?}",
        dropped_at.duration_since(started)
    );
}

#[tokio::test]
async fn a_normal_close_from_the_server_is_eof_after_its_messages() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        ws.send(Message::text(numbered(1, 30))).await.unwrap();
        ws.close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "bye".into(),
        }))
        .await
        .unwrap();
        // Our answer to the close arrives, then the stream ends.
        drain_texts(&mut ws).await
    })
    .await;
    let mut t = connect(&server.url, config()).await;
    // Paused: nothing is read, not even the close.
    assert!(
        tokio::time::timeout(Duration::from_millis(100), t.next_event())
            .await
            .is_err()
    );
    t.set_active(Active::Many(8.try_into().unwrap()));
    assert!(matches!(
        event(&mut t).await,
        Some(TransportEvent::Frame(_))
    ));
    assert!(matches!(
        event(&mut t).await,
        Some(TransportEvent::Closed(CloseReason::Eof))
    ));
    assert!(t.next_event().await.is_none());
    assert!(server.task.await.unwrap().unwrap().is_empty());
}

#[tokio::test]
async fn an_error_close_from_the_server_carries_its_code_and_reason() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        ws.close(Some(CloseFrame {
            code: CloseCode::Error,
            reason: "database down".into(),
        }))
        .await
        .unwrap();
        drain_texts(&mut ws).await
    })
    .await;
    let mut t = connect(&server.url, config()).await;
    t.set_active(Active::Once);
    let (before, reason) = until_closed(&mut t).await;
    assert!(before.is_empty(), "{before:?}");
    let CloseReason::Error(e) = &reason else {
        panic!("{reason:?}")
    };
    assert!(matches!(
        ws_error(e),
        Some(Error::ClosedByPeer { code: 1011, reason }) if reason == "database down"
    ));
    assert_eq!(
        describe(&reason),
        "the server closed the WebSocket with code 1011: database down"
    );
    server.task.await.unwrap();
}

#[tokio::test]
async fn a_dropped_connection_without_a_close_is_a_reset() {
    let server = serve(Upgrade::Mcp, |ws| async move { drop(ws) }).await;
    let mut t = connect(&server.url, config()).await;
    t.set_active(Active::Once);
    let (_, reason) = until_closed(&mut t).await;
    let CloseReason::Error(e) = &reason else {
        panic!("{reason:?}")
    };
    assert!(matches!(ws_error(e), Some(Error::Reset)), "{e:?}");
    server.task.await.unwrap();
}

#[tokio::test]
async fn frames_that_could_not_be_written_come_back_undelivered_in_order() {
    // The server reads nothing; once the client's writes are stuck, it
    // drops the connection with unread data, which resets it.
    let (stuck_tx, stuck_rx) = tokio::sync::oneshot::channel::<()>();
    let server = serve(Upgrade::Mcp, |ws| async move {
        let _ = stuck_rx.await;
        drop(ws);
    })
    .await;
    let mut t = connect(&server.url, config()).await;
    t.set_active(Active::Once);
    let sender = t.sender();
    let mut sent = Vec::new();
    let mut busy_since = None;
    let mut n = 0;
    loop {
        let frame = Bytes::from(numbered(n, 64 << 10));
        match sender.try_send(frame) {
            Ok(()) => {
                sent.push(n);
                n += 1;
                busy_since = None;
            }
            Err(SendError::Busy(_)) => {
                let since = *busy_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_millis(300) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Err(other) => panic!("{other:?}"),
        }
        assert!(n < 10_000, "the writes never got stuck");
    }
    stuck_tx.send(()).unwrap();
    let (before, reason) = until_closed(&mut t).await;
    assert!(matches!(reason, CloseReason::Error(_)), "{reason:?}");
    let undelivered: Vec<usize> = before
        .iter()
        .filter_map(|e| match e {
            TransportEvent::Undelivered { frame, .. } => Some(number_of(frame)),
            _ => None,
        })
        .collect();
    // Everything queued came back, in the order it was sent, and it is the
    // tail of what was sent (what went before reached the socket).
    assert!(undelivered.len() >= 64, "{undelivered:?}");
    assert_eq!(undelivered, sent[sent.len() - undelivered.len()..]);
    assert!(matches!(
        sender.try_send(Bytes::from_static(b"{}")),
        Err(SendError::Closed(_))
    ));
    server.task.await.unwrap();
}

#[tokio::test]
async fn the_keepalive_pings_a_silent_live_server_and_stays_open() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        // tungstenite answers each ping as it reads.
        let mut pings = 0;
        while let Some(Ok(m)) = ws.next().await {
            if m.is_ping() {
                pings += 1;
            }
        }
        pings
    })
    .await;
    // A keepalive that missed the pongs would give up after 350 ms.
    let config = config()
        .ping_interval(Duration::from_millis(50))
        .pong_timeout(Duration::from_millis(300));
    let mut t = connect(&server.url, config).await;
    t.set_active(Active::Once);
    assert!(
        tokio::time::timeout(Duration::from_millis(1200), t.next_event())
            .await
            .is_err(),
        "the connection should stay open"
    );
    t.close().await;
    let pings = server.task.await.unwrap().unwrap();
    assert!(pings >= 3, "{pings} pings");
}

#[tokio::test]
async fn the_keepalive_finds_a_dead_server_within_its_bound() {
    // The server reads raw bytes and answers nothing: it looks dead.
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        read_raw(&mut ws, usize::MAX, Duration::from_secs(20)).await
    })
    .await;
    let config = config()
        .ping_interval(Duration::from_millis(100))
        .pong_timeout(Duration::from_millis(200));
    let mut t = connect(&server.url, config).await;
    t.set_active(Active::Once);
    let (_, reason) = until_closed(&mut t).await;
    let CloseReason::Error(e) = &reason else {
        panic!("{reason:?}")
    };
    assert!(
        matches!(ws_error(e), Some(Error::KeepaliveTimeout(d)) if *d == Duration::from_millis(200)),
        "{e:?}"
    );
    let (bytes, eof) = server.task.await.unwrap().unwrap();
    // It saw our ping (masked, opcode 9), then the end of the connection.
    assert_eq!(bytes.first(), Some(&0x89));
    assert!(eof);
}

#[tokio::test]
async fn the_keepalive_waits_while_a_message_waits_for_a_grant() {
    // The server sends one message, then answers nothing.
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        ws.send(Message::text(numbered(1, 30))).await.unwrap();
        read_raw(&mut ws, usize::MAX, Duration::from_secs(20)).await
    })
    .await;
    let config = config()
        .ping_interval(Duration::from_millis(50))
        .pong_timeout(Duration::from_millis(100));
    let mut t = connect(&server.url, config).await;
    // Paused with the message read ahead: the socket is not read, so no
    // ping (its pong could not be seen) and no verdict.
    assert!(
        tokio::time::timeout(Duration::from_millis(500), t.next_event())
            .await
            .is_err()
    );
    t.set_active(Active::Once);
    assert!(matches!(
        event(&mut t).await,
        Some(TransportEvent::Frame(_))
    ));
    let (_, reason) = until_closed(&mut t).await;
    assert!(
        matches!(&reason, CloseReason::Error(e) if matches!(ws_error(e), Some(Error::KeepaliveTimeout(_)))),
        "{reason:?}"
    );
    let (bytes, _) = server.task.await.unwrap().unwrap();
    assert_eq!(bytes.first(), Some(&0x89));
}

#[tokio::test]
async fn dropping_the_transport_drops_the_connection_at_once() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        read_raw(&mut ws, usize::MAX, Duration::from_secs(20)).await
    })
    .await;
    let t = connect(&server.url, config()).await;
    drop(t);
    let (bytes, eof) = server.task.await.unwrap().unwrap();
    assert!(bytes.is_empty(), "no close frame on drop: {bytes:?}");
    assert!(eof);
}

#[tokio::test]
async fn a_dropped_close_future_resumes_and_close_is_reported_once() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        read_raw(&mut ws, usize::MAX, Duration::from_secs(20)).await
    })
    .await;
    let mut t = connect(
        &server.url,
        config().close_timeout(Duration::from_millis(400)),
    )
    .await;
    // Dropped before the server (which never answers) lets it finish.
    assert!(
        tokio::time::timeout(Duration::from_millis(50), t.close())
            .await
            .is_err()
    );
    assert!(matches!(
        event(&mut t).await,
        Some(TransportEvent::Closed(CloseReason::Local))
    ));
    t.close().await;
    assert!(t.next_event().await.is_none());
    let (_, eof) = server.task.await.unwrap().unwrap();
    assert!(eof);
}
