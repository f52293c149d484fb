//! A scripted MCP server over a WebSocket on 127.0.0.1 (tokio-tungstenite's
//! server side): it selects the `mcp` subprotocol (or answers the upgrade
//! with a status), answers `initialize`, `tools/list` and `tools/call` of
//! one `echo` tool, and records the upgrade request's headers.

#![allow(dead_code, unreachable_pub, reason = "each test binary uses a part")]

use std::sync::{Arc, Mutex};

use futures_util::{SinkExt, StreamExt};
use http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

/// A server accepting connections until the test ends.
pub struct McpWsServer {
    pub url: String,
    /// Each upgrade request's headers, in arrival order.
    pub requests: Arc<Mutex<Vec<HeaderMap>>>,
}

/// Starts a server; `refuse` answers every upgrade with that status.
pub async fn start(refuse: Option<u16>) -> McpWsServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                #[allow(clippy::result_large_err, reason = "tungstenite's callback signature")]
                let callback = move |req: &Request, mut resp: Response| {
                    seen.lock().unwrap().push(req.headers().clone());
                    if let Some(status) = refuse {
                        let mut refusal = ErrorResponse::new(Some("go away".into()));
                        *refusal.status_mut() = StatusCode::from_u16(status).unwrap();
                        return Err(refusal);
                    }
                    resp.headers_mut()
                        .insert("sec-websocket-protocol", "mcp".parse().unwrap());
                    Ok(resp)
                };
                let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tcp, callback).await else {
                    return;
                };
                while let Some(Ok(message)) = ws.next().await {
                    let Message::Text(text) = message else {
                        continue;
                    };
                    let Ok(request) = serde_json::from_str::<Value>(&text) else {
                        continue;
                    };
                    if let Some(answer) = answer(&request)
                        && ws.send(Message::text(answer.to_string())).await.is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    McpWsServer { url, requests }
}

/// The answer to a request; `None` for a notification.
fn answer(request: &Value) -> Option<Value> {
    let id = request.get("id")?.clone();
    let method = request["method"].as_str().unwrap_or_default();
    let result = match method {
        "initialize" => json!({
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted-ws", "version": "1.0.0"}
        }),
        "tools/list" => json!({"tools": [{
            "name": "echo",
            "description": "Returns its message.",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}
        }]}),
        "tools/call" => json!({"content": [{
            "type": "text",
            "text": request["params"]["arguments"]["message"]
        }]}),
        "ping" => json!({}),
        _ => {
            return Some(json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601, "message": "method not found"
            }}));
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}
