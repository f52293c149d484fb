//! `--otel` / `OTEL_EXPORTER_OTLP_ENDPOINT`: one command's spans and
//! metrics reach an OTLP/HTTP receiver on 127.0.0.1.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use support::{demo_str, mcpwire, stderr};

/// What the receiver got: each request's path and body.
type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// An OTLP/HTTP receiver: answers every POST with 200 and keeps its body.
fn receiver() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received = Received::default();
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let kept = kept.clone();
            std::thread::spawn(move || serve(stream, &kept));
        }
    });
    (url, received)
}

/// Serves the requests of one connection until it closes.
fn serve(stream: TcpStream, kept: &Received) {
    let mut reader = BufReader::new(stream.try_clone().expect("clones"));
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        kept.lock().unwrap().push((path, body));
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn a_call_exports_its_spans_and_metrics_to_the_collector_the_variable_names() {
    let (url, received) = receiver();
    let out = mcpwire()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url)
        .args(["call", "echo", "message=hi", "--", &demo_str()])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));

    let received = received.lock().unwrap().clone();
    let traces: Vec<_> = received.iter().filter(|(p, _)| p == "/v1/traces").collect();
    let metrics: Vec<_> = received
        .iter()
        .filter(|(p, _)| p == "/v1/metrics")
        .collect();
    assert!(
        !traces.is_empty(),
        "no spans exported: {:?}",
        paths(&received)
    );
    assert!(
        !metrics.is_empty(),
        "no metrics exported: {:?}",
        paths(&received)
    );
    let spans: Vec<u8> = traces.iter().flat_map(|(_, b)| b.clone()).collect();
    for name in [
        "mcpwire call",
        "tools/call echo",
        "initialize",
        "mcp.method.name",
        "gen_ai.tool.name",
    ] {
        assert!(contains(&spans, name), "{name:?} not in the exported spans");
    }
    let metrics: Vec<u8> = metrics.iter().flat_map(|(_, b)| b.clone()).collect();
    for name in [
        "mcp.client.operation.duration",
        "mcp.client.session.duration",
    ] {
        assert!(
            contains(&metrics, name),
            "{name:?} not in the exported metrics"
        );
    }
}

#[test]
fn without_the_flag_or_the_variable_nothing_is_exported() {
    let (url, received) = receiver();
    let out = mcpwire()
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        // Where an exporter would go if one were on by mistake.
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("{url}/v1/traces"),
        )
        .env(
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            format!("{url}/v1/metrics"),
        )
        .args(["call", "echo", "message=hi", "--", &demo_str()])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(received.lock().unwrap().is_empty());
}

fn paths(received: &[(String, Vec<u8>)]) -> Vec<&str> {
    received.iter().map(|(p, _)| p.as_str()).collect()
}
