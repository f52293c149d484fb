//! The facade's HTTP front door against the demo server's Streamable HTTP
//! mode: connect by URL alone, list, call (structured output validated,
//! progress streamed before the result), and a shared connection pool.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcpwire::http::{HttpMode, Proxy};
use mcpwire::{ClientConfig, HttpClient, HttpConfig, Server};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

const LONG: Duration = Duration::from_secs(30);

/// Starts `mcpwire-demo-server --http`; its URL and the process (killed
/// when dropped).
async fn demo_http() -> (String, tokio::process::Child) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpwire-demo-server"))
        .arg("--http")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the demo server starts");
    let stdout = child.stdout.take().unwrap();
    let url = tokio::time::timeout(LONG, BufReader::new(stdout).lines().next_line())
        .await
        .expect("in time")
        .unwrap()
        .expect("the URL line");
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    (url, child)
}

#[tokio::test]
async fn connect_http_lists_and_calls_tools_with_progress() {
    let (url, _child) = demo_http().await;
    let client = tokio::time::timeout(LONG, mcpwire::connect_http(&url, ClientConfig::new()))
        .await
        .expect("in time")
        .expect("connected");
    assert_eq!(client.server_info().unwrap().name, "mcpwire-demo-server");

    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "add"), "{tools:?}");
    let echo = client
        .call_tool("echo", &json!({"message": "over HTTP"}))
        .await
        .unwrap();
    assert_eq!(echo.text(), "over HTTP");
    // `add` declares an outputSchema; its structured content is validated.
    let add = client
        .call_tool("add", &json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(add.structured_content.unwrap()["sum"], json!(42.0));

    // Progress comes on the request's SSE answer, before its result.
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let slow = client
        .call_tool("slow", &json!({"steps": 3, "delay_ms": 10}))
        .timeout(Duration::from_secs(10))
        .on_progress(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .await
        .unwrap();
    assert_eq!(slow.text(), "done after 3 steps");
    // Each step's progress streams before the result; at least the last
    // one reaches the callback however late the caller looks.
    assert!((1..=3).contains(&seen.load(Ordering::SeqCst)));

    // No session, so no server request can reach the client.
    let ask = client
        .call_tool("ask_llm", &json!({"prompt": "2+2"}))
        .await
        .unwrap();
    assert_eq!(ask.is_error, Some(true));
    client.close().await;
}

#[tokio::test]
async fn servers_share_one_http_client() {
    let (url_a, _a) = demo_http().await;
    let (url_b, _b) = demo_http().await;
    let pool = HttpClient::new(HttpConfig::new().proxy(Proxy::none())).unwrap();
    let a = mcpwire::connect(
        Server::http(&url_a).client(pool.clone()),
        ClientConfig::new(),
    )
    .await
    .unwrap();
    let b = mcpwire::connect(
        Server::http(&url_b)
            .client(pool.clone())
            .mode(HttpMode::StreamableHttp),
        ClientConfig::new(),
    )
    .await
    .unwrap();
    a.ping().await.unwrap();
    b.ping().await.unwrap();
    // The automatic fallback's finding is remembered in the shared client.
    assert_eq!(pool.cached_mode(&url_a), Some(HttpMode::StreamableHttp));
    a.close().await;
    b.close().await;
}
