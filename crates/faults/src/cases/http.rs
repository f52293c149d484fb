//! Misbehaving Streamable HTTP servers (the scripted server of
//! [`crate::http_server`], in process).

use std::time::Duration;

use mcpwire_client::{Client, ClientConfig, ErrorKind};
use serde_json::json;

use super::check::{chain, describe, expect_err, ms, within};
use super::shared;
use crate::case;
use crate::client::{call, connect_http, echo, http_config};
use crate::http_server::{Behaviour, GetStream, McpHttp};

use crate::runner::{Case, Ctx, Outcome};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "http-server-killed-mid-call",
            killed_mid_call,
            15,
            "the server goes away with an SSE answer pending: the call fails with a typed error within 5 s"
        ),
        case!(
            "http-restart-same-url",
            restart_same_url,
            20,
            "restart behind the URL: re-initialized; an unsafe call fails OutcomeUnknown and is not replayed; a list is replayed once"
        ),
        case!(
            "http-get-stream-404-405-406",
            get_stream_refused,
            20,
            "GET answered 404, 405 or 406: asked once, 5 calls succeed each time"
        ),
        case!(
            "http-get-stream-500",
            get_stream_500,
            15,
            "GET answered 500: requests unaffected, GET retried at most 5 times"
        ),
        case!(
            "http-get-stream-closes-at-once",
            get_stream_closes,
            15,
            "GET stream that ends gracefully at once, forever: no reconnect loop (at most 6 GETs in 2 s), requests unaffected"
        ),
        case!(
            "http-429-retry-after",
            busy_429,
            15,
            "429 with Retry-After: 1: retried after at least 1 s, succeeds within 3 s, sent twice"
        ),
        case!(
            "http-503-retry-after",
            busy_503,
            15,
            "503 with Retry-After: 1: retried after at least 1 s, succeeds within 3 s, sent twice"
        ),
        case!(
            "http-never-initializes",
            never_initializes,
            15,
            "no answer to initialize: connect fails with Timeout within init_timeout (1 s) + 1 s"
        ),
        case!(
            "http-error-page-500",
            error_page_500,
            15,
            "500 with an HTML page: a Transport error carrying the status, not a parse error"
        ),
        case!(
            "http-wrong-content-type",
            wrong_content_type,
            15,
            "200 text/html to a request: a typed error within 2 s, the session stays usable"
        ),
        case!(
            "http-frame-20mib",
            frame_20mib,
            30,
            "a 20 MiB JSON answer over the 16 MiB limit: a typed error within 10 s, the session stays usable"
        ),
        case!(
            "http-notification-flood",
            notification_flood,
            60,
            "100,000 notifications in an SSE answer to a paused reader: the answer arrives, RSS grows < 16 MiB"
        ),
        case!(
            "http-blocking-handler",
            blocking_handler,
            15,
            "an answer held forever: 10 other calls succeed meanwhile; cancelling it reaches the server"
        ),
        case!(
            "http-long-tool-with-progress",
            long_tool_with_progress,
            15,
            "a 2 s tool reporting progress every 250 ms is not cut by a 1 s timeout reset on progress"
        ),
        case!(
            "http-nagle-split-answer",
            nagle_split_answer,
            15,
            "SSE answers written in two pieces by a server with Nagle on: 30 calls take < 500 ms (40 ms stalls would take 1,200)"
        ),
    ]
}

async fn connect(server: &McpHttp, config: ClientConfig) -> Result<Client, String> {
    connect_http(&server.url(), http_config(), config)
        .await
        .map_err(|e| format!("connect: {}", chain(&e)))
}

fn sse() -> Behaviour {
    Behaviour {
        sse: true,
        ..Behaviour::default()
    }
}

async fn killed_mid_call(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(sse()).await;
    let client = connect(&server, ClientConfig::new()).await?;
    let pending = {
        let c = client.clone();
        tokio::spawn(async move { call(&c, "block", json!({})).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(server);
    let (r, took) = within(Duration::from_secs(5), "the pending call", pending).await?;
    let r = r.map_err(|e| e.to_string())?;
    let e = match r {
        Ok(v) => return Err(format!("the call succeeded: {v:?}")),
        Err(e) => e,
    };
    client.close().await;
    Ok(describe(&e, took))
}

async fn restart_same_url(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(Behaviour::default()).await;
    let client = connect(&server, ClientConfig::new()).await?;
    echo(&client, "before").await?;
    let server = server.restart().await;
    // An echo is not annotated idempotent: its delivery failed with the
    // session, so it must not be sent again.
    let r = call(&client, "echo", json!({"message": "lost"})).await;
    expect_err(r, ErrorKind::OutcomeUnknown, "echo across the restart")?;
    let record = server.record().clone();
    if record.count("tools/call:echo") != 0 {
        return Err("the unsafe call was replayed".into());
    }
    echo(&client, "after").await?;
    let stale_after_reinit = record.unknown_session();
    // A listing is safe to repeat: replayed once on the next session.
    let server = server.restart().await;
    let record = server.record().clone();
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| format!("list across a restart: {}", chain(&e)))?;
    echo(&client, "after again").await?;
    client.close().await;
    if tools.is_empty() {
        return Err("the replayed listing is empty".into());
    }
    if record.count("tools/list") != 1 || record.count("initialize") != 1 {
        return Err(format!(
            "second server saw {} listings and {} initializations",
            record.count("tools/list"),
            record.count("initialize")
        ));
    }
    Ok(format!(
        "unsafe call OutcomeUnknown, list replayed once; {stale_after_reinit} requests with the stale id"
    ))
}

async fn get_stream_refused(_ctx: &Ctx) -> Outcome {
    let mut seen = Vec::new();
    for status in [404, 405, 406] {
        let server = McpHttp::start(Behaviour {
            get: GetStream::Status(status),
            ..Behaviour::default()
        })
        .await;
        let client = connect(&server, ClientConfig::new()).await?;
        for i in 0..5 {
            echo(&client, &format!("{status}-{i}")).await?;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let gets = server.http_requests("GET");
        client.close().await;
        if gets != 1 {
            return Err(format!("GET {status}: asked {gets} times"));
        }
        seen.push(status.to_string());
    }
    Ok(format!(
        "GET {} each asked once, calls unaffected",
        seen.join("/")
    ))
}

async fn get_stream_500(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(Behaviour {
        get: GetStream::Status(500),
        ..Behaviour::default()
    })
    .await;
    let client = connect(&server, ClientConfig::new()).await?;
    for i in 0..5 {
        echo(&client, &format!("m{i}")).await?;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let gets = server.http_requests("GET");
    client.close().await;
    if gets > 5 {
        return Err(format!("GET asked {gets} times"));
    }
    Ok(format!("calls unaffected; GET asked {gets} times"))
}

async fn get_stream_closes(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(Behaviour {
        get: GetStream::Status(200),
        ..Behaviour::default()
    })
    .await;
    let client = connect(&server, ClientConfig::new()).await?;
    echo(&client, "a").await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    echo(&client, "b").await?;
    let gets = server.http_requests("GET");
    client.close().await;
    if gets > 6 {
        return Err(format!("GET asked {gets} times in 2 s"));
    }
    Ok(format!("GET asked {gets} times in 2 s, calls unaffected"))
}

async fn busy(status: u16) -> Outcome {
    let server = McpHttp::start(Behaviour {
        busy: Some((status, 1, 1)),
        ..Behaviour::default()
    })
    .await;
    let client = connect(&server, ClientConfig::new()).await?;
    let (r, took) = within(Duration::from_secs(3), "the call", echo(&client, "busy")).await?;
    r?;
    let sent = server.record().count("tools/call:echo");
    client.close().await;
    if took < Duration::from_millis(950) {
        return Err(format!("retried after {} ms, before Retry-After", ms(took)));
    }
    if sent != 2 {
        return Err(format!("sent {sent} times"));
    }
    Ok(format!("answered after {} ms, sent twice", ms(took)))
}

async fn busy_429(_ctx: &Ctx) -> Outcome {
    busy(429).await
}

async fn busy_503(_ctx: &Ctx) -> Outcome {
    busy(503).await
}

async fn never_initializes(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(Behaviour {
        init_never: true,
        ..sse()
    })
    .await;
    let config = ClientConfig::new().init_timeout(Duration::from_secs(1));
    let (r, took) = within(
        Duration::from_secs(2),
        "connect",
        connect_http(&server.url(), http_config(), config),
    )
    .await?;
    let e = expect_err(r, ErrorKind::Timeout, "connect")?;
    Ok(format!("Timeout after {} ms: {e}", ms(took)))
}

async fn error_page_500(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(Behaviour::default()).await;
    let client = connect(&server, ClientConfig::new()).await?;
    let r = call(&client, "status500", json!({})).await;
    let e = expect_err(r, ErrorKind::Transport, "the call")?;
    let text = chain(&e);
    echo(&client, "after").await?;
    client.close().await;
    if !text.contains("500") {
        return Err(format!("the error does not carry the status: {text}"));
    }
    Ok(text)
}

async fn wrong_content_type(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(Behaviour::default()).await;
    let client = connect(&server, ClientConfig::new()).await?;
    let (r, took) = within(
        Duration::from_secs(2),
        "the call",
        call(&client, "html", json!({})),
    )
    .await?;
    let e = match r {
        Ok(v) => return Err(format!("the call succeeded: {v:?}")),
        Err(e) => e,
    };
    if e.kind() == ErrorKind::Protocol {
        return Err(format!("surfaced as a parse error: {}", chain(&e)));
    }
    echo(&client, "after").await?;
    client.close().await;
    Ok(describe(&e, took))
}

async fn frame_20mib(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(Behaviour::default()).await;
    let client = connect(&server, ClientConfig::new()).await?;
    let (r, took) = within(
        Duration::from_secs(10),
        "the call",
        call(&client, "big", json!({"bytes": 20 << 20})),
    )
    .await?;
    let e = match r {
        Ok(_) => return Err("a 20 MiB answer was accepted over the 16 MiB limit".into()),
        Err(e) => e,
    };
    echo(&client, "after").await?;
    client.close().await;
    Ok(describe(&e, took))
}

async fn notification_flood(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(sse()).await;
    let client = connect(&server, ClientConfig::new()).await?;
    let out = shared::flood(&client).await;
    client.close().await;
    out
}

async fn blocking_handler(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(sse()).await;
    let client = connect(&server, ClientConfig::new()).await?;
    shared::blocked_while_others_run(&client).await?;
    let record = server.record().clone();
    within(
        Duration::from_secs(2),
        "the cancellation to arrive",
        async {
            while record.cancelled().is_empty() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        },
    )
    .await?;
    client.close().await;
    Ok(format!(
        "10 calls answered meanwhile; the server saw the cancellation of {:?}",
        record.cancelled()
    ))
}

async fn long_tool_with_progress(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(sse()).await;
    let client = connect(&server, ClientConfig::new()).await?;
    let out = shared::long_tool_with_progress(&client).await;
    client.close().await;
    out
}

async fn nagle_split_answer(_ctx: &Ctx) -> Outcome {
    let server = McpHttp::start(Behaviour {
        priming: true,
        nagle: true,
        ..sse()
    })
    .await;
    let client = connect(&server, ClientConfig::new()).await?;
    echo(&client, "warm").await?;
    let (r, took) = within(Duration::from_secs(5), "30 calls", async {
        for i in 0..30 {
            echo(&client, &format!("m{i}")).await?;
        }
        Ok::<_, String>(())
    })
    .await?;
    r?;
    client.close().await;
    if took >= Duration::from_millis(500) {
        return Err(format!("30 calls took {} ms", ms(took)));
    }
    Ok(format!("30 calls in {} ms", ms(took)))
}
