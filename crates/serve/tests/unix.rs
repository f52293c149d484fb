//! A Unix socket: each connection is one client, and no more than the
//! bound are served at once.
#![cfg(unix)]

mod common;

use std::time::Duration;

use common::*;
use mcpwire_serve::Server;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

/// Sends a ping on `stream` and waits for its answer, up to `wait`.
async fn ping(stream: &mut BufReader<UnixStream>, wait: Duration) -> Option<Value> {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    stream
        .get_mut()
        .write_all(format!("{ping}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    match tokio::time::timeout(wait, stream.read_line(&mut line)).await {
        Ok(Ok(n)) if n > 0 => Some(serde_json::from_str(&line).unwrap()),
        _ => None,
    }
}

#[tokio::test]
async fn each_connection_is_a_client_and_one_over_the_bound_waits_its_turn() {
    let fleet = fleet(&[("a", &["echo"])]).await;
    let path = std::env::temp_dir().join(format!("mcpwire-serve-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap();
    let server = Server::new(fleet.manager.clone());
    let serving = tokio::spawn(async move { server.serve_unix(listener, 1).await });

    let mut first = BufReader::new(UnixStream::connect(&path).await.unwrap());
    let answer = ping(&mut first, LONG).await.expect("the first is served");
    assert_eq!(answer["result"], json!({}));

    // The second connects (the listen queue) but is not served while the
    // first holds the only place.
    let mut second = BufReader::new(UnixStream::connect(&path).await.unwrap());
    assert!(
        ping(&mut second, Duration::from_millis(300))
            .await
            .is_none()
    );

    drop(first);
    let mut line = String::new();
    within(second.read_line(&mut line)).await.unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        answer["id"], 1,
        "the waiting ping is answered once it is served"
    );

    serving.abort();
    let _ = std::fs::remove_file(&path);
    fleet.manager.close().await;
}
