//! Proxies: https tunnelled with CONNECT (TLS end to end), http forwarded in
//! absolute form, credentials from the proxy URL, and NO_PROXY exceptions.

mod support;

use std::sync::{Arc, Mutex};

use mcpwire_http::{HttpClient, HttpTransport};
use mcpwire_transport::Transport;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A tiny proxy: `CONNECT host:port` opens a tunnel; any other request is
/// forwarded as is to the host named in its absolute-form target. It records
/// each request head.
struct Proxy {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn proxy() -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let task = {
        let heads = heads.clone();
        tokio::spawn(async move {
            loop {
                let (mut client, _) = listener.accept().await.unwrap();
                let heads = heads.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        if client.read(&mut byte).await.unwrap_or(0) == 0 {
                            return;
                        }
                        head.push(byte[0]);
                    }
                    let text = String::from_utf8_lossy(&head).into_owned();
                    heads.lock().unwrap().push(text.clone());
                    let target = text.split_whitespace().nth(1).unwrap().to_owned();
                    if text.starts_with("CONNECT ") {
                        let mut upstream =
                            TcpStream::connect(target.replace("localhost", "127.0.0.1"))
                                .await
                                .unwrap();
                        client
                            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                            .await
                            .unwrap();
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                    } else {
                        let uri: http::Uri = target.parse().unwrap();
                        let addr = format!("{}:{}", uri.host().unwrap(), uri.port_u16().unwrap());
                        let mut upstream = TcpStream::connect(addr).await.unwrap();
                        upstream.write_all(&head).await.unwrap();
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                    }
                });
            }
        })
    };
    Proxy { port, heads, task }
}

#[tokio::test]
async fn https_goes_through_a_connect_tunnel_with_credentials() {
    let server = Server::start_tls(|_| async { Reply::json(&result(1, "{}")) }).await;
    let proxy = proxy().await;
    let config = quick_config()
        .webpki_roots(false)
        .add_root_certificate(server.ca_der.clone().unwrap())
        .proxy(mcpwire_http::Proxy::url(format!(
            "http://user:pw@127.0.0.1:{}",
            proxy.port
        )));
    let client = HttpClient::new(config).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let heads = proxy.heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 1);
    assert!(
        heads[0].starts_with(&format!("CONNECT localhost:{} ", server.addr.port())),
        "{}",
        heads[0]
    );
    // base64("user:pw")
    assert!(heads[0].contains("dXNlcjpwdw=="), "{}", heads[0]);
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn http_is_forwarded_in_absolute_form_unless_no_proxy_matches() {
    let server = Server::start(|_| async { Reply::json(&result(1, "{}")) }).await;
    let proxy = proxy().await;
    let config = quick_config().proxy(mcpwire_http::Proxy::url(format!(
        "http://127.0.0.1:{}",
        proxy.port
    )));
    let client = HttpClient::new(config).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    let heads = proxy.heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 1);
    assert!(
        heads[0].starts_with(&format!("POST {} ", server.url("/mcp"))),
        "{}",
        heads[0]
    );

    let config = quick_config().proxy(
        mcpwire_http::Proxy::url(format!("http://127.0.0.1:{}", proxy.port)).no_proxy("127.0.0.1"),
    );
    let client = HttpClient::new(config).unwrap();
    let mut t = HttpTransport::streamable(&client, &server.url("/mcp")).unwrap();
    t.sender().send(frame(LIST)).await.unwrap();
    assert_eq!(next_frame(&mut t).await["id"], 1);
    assert_eq!(
        proxy.heads.lock().unwrap().len(),
        1,
        "NO_PROXY was not honoured"
    );
}
