//! A client that writes HTTP/1.1 by hand, for exact checks of what the
//! Streamable HTTP endpoint answers.

use std::net::SocketAddr;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::within;

/// One answer: its status, its headers (names in lower case), its body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Sends one HTTP/1.1 request with `headers` (the Host header is the
/// address unless given) and reads the whole answer.
pub async fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut text = format!("{method} /mcp HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        text.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    let mut stream = within(TcpStream::connect(addr)).await.unwrap();
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    within(stream.read_to_end(&mut raw)).await.unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a whole answer");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// Sends a request whose answer is a stream and reads only its head:
/// the status and the open connection, to read events from.
pub async fn open_stream(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, BufReader<TcpStream>) {
    let mut text = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    let mut stream = within(TcpStream::connect(addr)).await.unwrap();
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    within(reader.read_line(&mut status)).await.unwrap();
    loop {
        let mut line = String::new();
        within(reader.read_line(&mut line)).await.unwrap();
        if line == "\r\n" {
            break;
        }
    }
    let status = status.split(' ').nth(1).unwrap().parse().unwrap();
    (status, reader)
}

/// The next SSE event's data on `stream`.
pub async fn next_event(stream: &mut BufReader<TcpStream>) -> Value {
    loop {
        let mut line = String::new();
        let n = within(stream.read_line(&mut line)).await.unwrap();
        assert!(n > 0, "the stream ended");
        if let Some(data) = line.trim_end().strip_prefix("data: ") {
            return serde_json::from_str(data).unwrap();
        }
    }
}
