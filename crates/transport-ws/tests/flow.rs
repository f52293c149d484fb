//! Active-once flow control: nothing is read without a grant, so a server
//! that floods is pushed back by TCP, and frames arrive in order once
//! granted.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use mcpwire_transport::{
    Active, CloseReason, GrantHarness, Transport, TransportEvent, TransportExt,
};
use support::*;
use tokio_tungstenite::tungstenite::Message;

/// 1,024 messages of 64 KiB: 64 MiB, far more than the socket buffers on
/// loopback hold.
const FLOOD: usize = 1024;
const SIZE: usize = 64 << 10;

#[tokio::test]
async fn a_flooding_server_is_pushed_back_while_no_grant_is_held() {
    let written = Arc::new(AtomicUsize::new(0));
    let count = written.clone();
    let server = serve(Upgrade::Mcp, move |mut ws| async move {
        for n in 0..FLOOD {
            ws.send(Message::text(numbered(n, SIZE))).await.unwrap();
            count.store(n + 1, Ordering::SeqCst);
        }
        drain_texts(&mut ws).await;
    })
    .await;
    let mut t = connect(&server.url, config()).await;
    // Paused: the server's writes stop once TCP's buffers are full. Wait
    // (polling the transport, which delivers nothing) until the count has
    // not moved for 300 ms.
    let mut stalled = written.load(Ordering::SeqCst);
    let give_up = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        assert!(
            tokio::time::timeout(Duration::from_millis(300), t.next_event())
                .await
                .is_err(),
            "an event while paused"
        );
        let now = written.load(Ordering::SeqCst);
        if now == stalled {
            break;
        }
        stalled = now;
        assert!(
            tokio::time::Instant::now() < give_up,
            "the server never stalled"
        );
    }
    assert!(stalled < FLOOD / 2, "{stalled} of {FLOOD} written unread");
    // One grant: exactly one frame, the first.
    t.set_active(Active::Once);
    match event(&mut t).await {
        Some(TransportEvent::Frame(f)) => assert_eq!(number_of(&f), 0),
        other => panic!("{other:?}"),
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(200), t.next_event())
            .await
            .is_err()
    );
    // Then everything, in order, granted in windows like the client does.
    let mut next = 1;
    while next < FLOOD {
        t.set_active(Active::Many(16.try_into().unwrap()));
        for _ in 0..16.min(FLOOD - next) {
            match event(&mut t).await {
                Some(TransportEvent::Frame(f)) => {
                    assert_eq!(number_of(&f), next);
                    assert_eq!(f.len(), SIZE);
                    next += 1;
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(written.load(Ordering::SeqCst), FLOOD);
    t.close().await;
    server.task.await.unwrap();
}

#[tokio::test]
async fn the_grant_harness_finds_no_frame_without_a_grant() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        for n in 0..3 {
            ws.send(Message::text(numbered(n, 100))).await.unwrap();
        }
        ws.close(None).await.unwrap();
        while let Some(Ok(_)) = ws.next().await {}
    })
    .await;
    let t = connect(&server.url, config()).await;
    let mut harness = GrantHarness::new(t).quiet_period(Duration::from_millis(100));
    for n in 0..3 {
        let frame = harness.next_frame().await.unwrap();
        assert_eq!(number_of(&frame), n);
    }
    let reason = harness.closed_reason().await.unwrap();
    assert!(matches!(reason, CloseReason::Eof), "{reason:?}");
    assert!(harness.take_events().is_empty());
    assert!(harness.transport().next_event().await.is_none());
    server.task.await.unwrap();
}

#[tokio::test]
async fn a_grant_replaced_by_paused_stops_delivery_and_frames_wait_in_order() {
    let server = serve(Upgrade::Mcp, |mut ws| async move {
        for n in 0..6 {
            ws.send(Message::text(numbered(n, 100))).await.unwrap();
        }
        drain_texts(&mut ws).await;
    })
    .await;
    let mut t = connect(&server.url, config().read_ahead(2)).await;
    t.set_active(Active::Many(4.try_into().unwrap()));
    match event(&mut t).await {
        Some(TransportEvent::Frame(f)) => assert_eq!(number_of(&f), 0),
        other => panic!("{other:?}"),
    }
    t.set_active(Active::Paused);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), t.next_event())
            .await
            .is_err()
    );
    t.set_active(Active::Many(5.try_into().unwrap()));
    for n in 1..6 {
        match event(&mut t).await {
            Some(TransportEvent::Frame(f)) => assert_eq!(number_of(&f), n),
            other => panic!("{other:?}"),
        }
    }
    t.close().await;
    server.task.await.unwrap();
}
