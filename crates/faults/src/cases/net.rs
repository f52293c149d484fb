//! The network between client and server: a fault proxy in front of real
//! servers (`mcpwire-bench-server`, a separate process, and the scripted
//! server), refused connections, DNS failure, TLS failures.

use std::process::Stdio;
use std::time::Duration;

use bytes::Bytes;
use mcpwire_client::{Client, ClientConfig, ErrorKind, Keepalive, RequestOptions};
use mcpwire_http::RetryPolicy;
use mcpwire_test_support::http::{Reply, Server, TestCert, TestTls};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::check::{chain, describe, expect_err, io_cause, ms, within};
use crate::case;
use crate::client::{call_with, connect_http, echo, http_config};
use crate::http_server::{Behaviour, McpHttp};
use crate::probe::{TAG_VAR, tag};
use crate::proxy::{Fault, FaultProxy, refusing_addr};
use crate::runner::{Case, Ctx, Outcome};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "net-refused",
            refused,
            10,
            "nothing listens: connect fails within 2 s and the cause chain reaches io ConnectionRefused"
        ),
        case!(
            "net-dns-failure",
            dns_failure,
            10,
            "a name under .invalid: connect fails within the 3 s connect bound"
        ),
        case!(
            "net-tls-unknown-ca",
            tls_unknown_ca,
            10,
            "a certificate from an unknown CA: connect fails within 2 s under the default retry policy, the cause names the certificate"
        ),
        case!(
            "net-tls-expired",
            tls_expired,
            10,
            "an expired certificate from a trusted CA: connect fails within 2 s under the default retry policy, the cause says it expired"
        ),
        case!(
            "proxy-delay",
            delay,
            10,
            "every answer held 200 ms: calls succeed and take at least 200 ms"
        ),
        case!(
            "proxy-cut-mid-headers",
            cut_mid_headers,
            10,
            "connection closed 20 bytes into an answer: a typed error within 2 s, the next call succeeds"
        ),
        case!(
            "proxy-cut-mid-body",
            cut_mid_body,
            10,
            "connection closed halfway through a JSON body: a typed error within 2 s, the next call succeeds"
        ),
        case!(
            "proxy-truncated-chunked",
            truncated_chunked,
            10,
            "a chunked SSE answer cut mid-chunk: a typed error within 3 s, the next call succeeds"
        ),
        case!(
            "proxy-reset",
            reset,
            10,
            "connection reset as the answer starts: a typed error within 2 s, the next call succeeds"
        ),
        case!(
            "proxy-stall",
            stall,
            10,
            "the answer never comes: Timeout at the 500 ms request timeout (within 1.5 s), the next call succeeds"
        ),
        case!(
            "proxy-garbage",
            garbage,
            10,
            "non-HTTP bytes in answer: connect fails with a typed error within 2 s"
        ),
        case!(
            "proxy-slow-loris",
            slow_loris,
            15,
            "answers at one byte a second: Timeout at the 2 s request timeout (within 3 s)"
        ),
        case!(
            "proxy-half-open-keepalive",
            half_open,
            15,
            "the peer vanishes without FIN or RST: keepalive (300 ms, 2 failures) closes the client within 3 s"
        ),
    ]
}

/// `mcpwire-bench-server http`, a separate process, killed on drop.
struct BenchServer {
    _child: Child,
    url: String,
}

impl BenchServer {
    async fn start(ctx: &Ctx) -> Result<BenchServer, String> {
        let mut child = Command::new(&ctx.bench_server)
            .arg("http")
            .env(TAG_VAR, tag())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("{}: {e}", ctx.bench_server.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .await
            .map_err(|e| e.to_string())?;
        Ok(BenchServer {
            _child: child,
            url: line.trim().to_owned(),
        })
    }

    fn addr(&self) -> std::net::SocketAddr {
        let authority = self
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp");
        authority
            .parse()
            .expect("the bench server prints host:port")
    }
}

/// A client through a proxy in front of a bench server.
async fn proxied(
    ctx: &Ctx,
    config: ClientConfig,
) -> Result<(Client, FaultProxy, BenchServer), String> {
    let server = BenchServer::start(ctx).await?;
    let proxy = FaultProxy::start(server.addr())
        .await
        .map_err(|e| e.to_string())?;
    let client = connect_http(&proxy.url("/mcp"), http_config(), config)
        .await
        .map_err(|e| format!("connect: {}", chain(&e)))?;
    echo(&client, "through the proxy").await?;
    Ok((client, proxy, server))
}

async fn refused(_ctx: &Ctx) -> Outcome {
    let addr = refusing_addr().map_err(|e| e.to_string())?;
    let url = format!("http://{addr}/mcp");
    let (r, took) = within(
        Duration::from_secs(2),
        "connect",
        connect_http(&url, http_config(), ClientConfig::new()),
    )
    .await?;
    let e = match r {
        Ok(_) => return Err("connected to nothing".into()),
        Err(e) => e,
    };
    match io_cause(&e) {
        Some(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => Ok(describe(&e, took)),
        _ => Err(format!(
            "no io ConnectionRefused in the cause chain: {}",
            chain(&e)
        )),
    }
}

async fn dns_failure(_ctx: &Ctx) -> Outcome {
    let (r, took) = within(
        Duration::from_secs(4),
        "connect",
        connect_http(
            "http://mcpwire-faults.invalid/mcp",
            http_config(),
            ClientConfig::new(),
        ),
    )
    .await?;
    match r {
        Ok(_) => Err("resolved a .invalid name".into()),
        Err(e) => Ok(describe(&e, took)),
    }
}

async fn tls(cert: TestCert, trust: bool, needle: &str) -> Outcome {
    let tls = TestTls::new(cert);
    let ca = tls.ca_der.clone();
    let server = Server::start_with_tls(tls, |_| async { Reply::json("{}") }).await;
    // The default retry policy: a rejected certificate must not wait for it.
    let mut http = http_config().retry(RetryPolicy::default());
    if trust {
        http = http.add_root_certificate(ca);
    }
    let (r, took) = within(
        Duration::from_secs(2),
        "connect",
        connect_http(&server.url("/mcp"), http, ClientConfig::new()),
    )
    .await?;
    let e = match r {
        Ok(_) => return Err("connected despite the certificate".into()),
        Err(e) => e,
    };
    let text = chain(&e);
    if !text.to_lowercase().contains(needle) {
        return Err(format!("the cause does not say {needle:?}: {text}"));
    }
    Ok(format!("{:?} after {} ms: {text}", e.kind(), ms(took)))
}

async fn tls_unknown_ca(_ctx: &Ctx) -> Outcome {
    tls(TestCert::Valid, false, "certificate").await
}

async fn tls_expired(_ctx: &Ctx) -> Outcome {
    tls(TestCert::Expired, true, "expired").await
}

async fn delay(ctx: &Ctx) -> Outcome {
    let (client, proxy, _server) = proxied(ctx, ClientConfig::new()).await?;
    proxy.set(Fault::Delay(Duration::from_millis(200)));
    let (r, took) = within(Duration::from_secs(3), "a call", echo(&client, "slow")).await?;
    r?;
    proxy.set(Fault::Pass);
    client.close().await;
    if took < Duration::from_millis(200) {
        return Err(format!(
            "answered in {} ms through a 200 ms delay",
            ms(took)
        ));
    }
    Ok(format!("answered in {} ms", ms(took)))
}

/// Puts `fault` in force for one call, which must fail with a typed error
/// within `bound`; then passes again and checks the next call.
async fn one_bad_call(
    client: &Client,
    proxy: &FaultProxy,
    fault: Fault,
    bound: Duration,
) -> Outcome {
    proxy.set(fault);
    let opts = RequestOptions::new().timeout(Duration::from_secs(5));
    let (r, took) = within(
        bound,
        "the faulty call",
        call_with(client, "echo", json!({"message": "x"}), &opts),
    )
    .await?;
    proxy.set(Fault::Pass);
    let e = match r {
        Ok(v) => return Err(format!("the call succeeded: {v:?}")),
        Err(e) => e,
    };
    echo(client, "after").await?;
    Ok(describe(&e, took))
}

async fn cut_mid_headers(ctx: &Ctx) -> Outcome {
    let (client, proxy, _server) = proxied(ctx, ClientConfig::new()).await?;
    let out = one_bad_call(&client, &proxy, Fault::CutAfter(20), Duration::from_secs(2)).await;
    client.close().await;
    out
}

async fn cut_mid_body(ctx: &Ctx) -> Outcome {
    let (client, proxy, _server) = proxied(ctx, ClientConfig::new()).await?;
    let out = one_bad_call(&client, &proxy, Fault::TruncateBody, Duration::from_secs(2)).await;
    client.close().await;
    out
}

async fn truncated_chunked(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(Behaviour {
        sse: true,
        ..Behaviour::default()
    })
    .await;
    let proxy = FaultProxy::start(server.addr())
        .await
        .map_err(|e| e.to_string())?;
    let client = connect_http(&proxy.url("/mcp"), http_config(), ClientConfig::new())
        .await
        .map_err(|e| format!("connect: {}", chain(&e)))?;
    echo(&client, "first").await?;
    let out = one_bad_call(&client, &proxy, Fault::TruncateBody, Duration::from_secs(3)).await;
    client.close().await;
    out
}

async fn reset(ctx: &Ctx) -> Outcome {
    let (client, proxy, _server) = proxied(ctx, ClientConfig::new()).await?;
    let out = one_bad_call(
        &client,
        &proxy,
        Fault::ResetAfter(0),
        Duration::from_secs(2),
    )
    .await;
    client.close().await;
    out
}

async fn stall(ctx: &Ctx) -> Outcome {
    let (client, proxy, _server) = proxied(ctx, ClientConfig::new()).await?;
    proxy.set(Fault::Stall);
    let opts = RequestOptions::new().timeout(Duration::from_millis(500));
    let (r, took) = within(
        Duration::from_millis(1500),
        "the stalled call",
        call_with(&client, "echo", json!({"message": "x"}), &opts),
    )
    .await?;
    proxy.set(Fault::Pass);
    let e = expect_err(r, ErrorKind::Timeout, "stalled call")?;
    echo(&client, "after").await?;
    client.close().await;
    Ok(format!("Timeout after {} ms: {e}", ms(took)))
}

async fn garbage(ctx: &Ctx) -> Outcome {
    let server = BenchServer::start(ctx).await?;
    let proxy = FaultProxy::start(server.addr())
        .await
        .map_err(|e| e.to_string())?;
    proxy.set(Fault::Garbage(Bytes::from_static(
        b"SSH-2.0-OpenSSH_9.6\r\n\xff\xfe\x00garbage that is not HTTP\r\n\r\n",
    )));
    let (r, took) = within(
        Duration::from_secs(2),
        "connect",
        connect_http(&proxy.url("/mcp"), http_config(), ClientConfig::new()),
    )
    .await?;
    match r {
        Ok(_) => Err("connected through garbage".into()),
        Err(e) => Ok(describe(&e, took)),
    }
}

async fn slow_loris(ctx: &Ctx) -> Outcome {
    let (client, proxy, _server) = proxied(ctx, ClientConfig::new()).await?;
    proxy.set(Fault::Drip(Duration::from_secs(1)));
    let opts = RequestOptions::new().timeout(Duration::from_secs(2));
    let (r, took) = within(
        Duration::from_secs(3),
        "the dripping call",
        call_with(&client, "echo", json!({"message": "x"}), &opts),
    )
    .await?;
    let e = expect_err(r, ErrorKind::Timeout, "dripping call")?;
    proxy.set(Fault::Pass);
    client.close().await;
    Ok(format!("Timeout after {} ms: {e}", ms(took)))
}

async fn half_open(ctx: &Ctx) -> Outcome {
    let keepalive = Keepalive::new(Duration::from_millis(300))
        .timeout(Duration::from_millis(300))
        .max_failures(2);
    let (client, proxy, _server) = proxied(ctx, ClientConfig::new().keepalive(keepalive)).await?;
    proxy.set(Fault::HalfOpen);
    let mut states = client.watch_state();
    let (r, took) = within(Duration::from_secs(3), "the client to notice", async {
        states
            .wait_for(|s| matches!(s, mcpwire_client::ConnectionState::Closed(_)))
            .await
            .map(|s| format!("{:?}", &*s))
    })
    .await?;
    let state = r.map_err(|e| e.to_string())?;
    client.close().await;
    Ok(format!("noticed after {} ms: {state}", ms(took)))
}
