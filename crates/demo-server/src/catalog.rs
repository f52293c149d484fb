//! What the demo server offers: tools, resources, a prompt, completions.
//! The tools reach the client through [`Peer`], which the connection
//! implements, so the catalog sits below the connection and knows nothing
//! of how messages travel.

use std::future::Future;
use std::time::Duration;

use mcpwire_codec::jsonrpc::{ErrorCode, ErrorObject};
use serde_json::{Value, json};

/// What a request handler answers.
pub(crate) type Outcome = Result<Value, ErrorObject>;

/// What a tool may ask of the connection it was called on.
pub(crate) trait Peer {
    /// Sends a notification to the client.
    fn notify(&self, method: &str, params: Value) -> impl Future<Output = ()> + Send;
    /// Sends a request to the client and waits for its answer.
    fn ask(&self, method: &str, params: Value) -> impl Future<Output = Outcome> + Send;
    /// True if the client declared `capability` in `initialize`.
    fn client_offers(&self, capability: &str) -> bool;
}

pub(crate) fn tools() -> Value {
    json!([
        {
            "name": "echo",
            "title": "Echo",
            "description": "Returns its message.",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
            "annotations": {"readOnlyHint": true}
        },
        {
            "name": "add",
            "title": "Add",
            "description": "Adds two numbers; returns structured content.",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
            "annotations": {"readOnlyHint": true, "idempotentHint": true}
        },
        {
            "name": "slow",
            "description": "Takes `steps` steps of `delay_ms` each, reporting progress.",
            "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer"}, "delay_ms": {"type": "integer"}}}
        },
        {
            "name": "crash",
            "description": "Exits the server process at once with status 3 (for reconnect tests).",
            "inputSchema": {"type": "object", "properties": {}}
        },
        {
            "name": "ask_llm",
            "description": "Asks the client's model (sampling) to answer a prompt.",
            "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}
        },
        {
            "name": "ask_user",
            "description": "Asks the user (elicitation): a name, a detailed form, or a url to open.",
            "inputSchema": {"type": "object", "properties": {"detailed": {"type": "boolean"}, "url": {"type": "string"}}}
        }
    ])
}

fn text(t: impl Into<String>) -> Value {
    json!({"type": "text", "text": t.into()})
}

fn tool_error(message: impl Into<String>) -> Outcome {
    Ok(json!({"content": [text(message)], "isError": true}))
}

pub(crate) async fn call_tool<P: Peer + Sync>(server: &P, params: &Value) -> Outcome {
    let args = &params["arguments"];
    match params["name"].as_str().unwrap_or_default() {
        "echo" => {
            let message = args["message"].as_str().unwrap_or_default();
            Ok(json!({"content": [text(message)]}))
        }
        "add" => {
            let (Some(a), Some(b)) = (args["a"].as_f64(), args["b"].as_f64()) else {
                return tool_error("a and b must be numbers");
            };
            let sum = a + b;
            server
                .notify(
                    "notifications/message",
                    json!({"level": "info", "logger": "demo", "data": format!("add {a} {b}")}),
                )
                .await;
            Ok(json!({"content": [text(sum.to_string())], "structuredContent": {"sum": sum}}))
        }
        "slow" => {
            let steps = args["steps"].as_u64().unwrap_or(3).min(1000);
            let delay = Duration::from_millis(args["delay_ms"].as_u64().unwrap_or(100).min(10_000));
            let token = params["_meta"]["progressToken"].clone();
            for step in 1..=steps {
                tokio::time::sleep(delay).await;
                if !token.is_null() {
                    server
                        .notify(
                            "notifications/progress",
                            json!({"progressToken": token, "progress": step, "total": steps, "message": format!("step {step}")}),
                        )
                        .await;
                }
            }
            Ok(json!({"content": [text(format!("done after {steps} steps"))]}))
        }
        "crash" => {
            eprintln!("demo server: crashing on request");
            std::process::exit(3);
        }
        "ask_llm" => {
            if !server.client_offers("sampling") {
                return tool_error("the client does not offer sampling");
            }
            let prompt = args["prompt"].as_str().unwrap_or_default();
            let answer = server
                .ask(
                    "sampling/createMessage",
                    json!({"messages": [{"role": "user", "content": text(prompt)}], "maxTokens": 100}),
                )
                .await;
            match answer {
                Ok(v) => {
                    let said = v["content"]["text"].as_str().unwrap_or_default().to_owned();
                    Ok(json!({"content": [text(format!("the model said: {said}"))]}))
                }
                Err(e) => tool_error(format!("sampling failed: {}", e.message)),
            }
        }
        "ask_user" => {
            if !server.client_offers("elicitation") {
                return tool_error("the client does not offer elicitation");
            }
            let request = if let Some(url) = args["url"].as_str() {
                json!({"mode": "url", "message": "Please sign in to the demo service.", "url": url, "elicitationId": "demo-1"})
            } else if args["detailed"] == true {
                json!({
                    "mode": "form",
                    "message": "Tell us about yourself.",
                    "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string", "title": "Name"},
                        "age": {"type": "integer", "minimum": 0, "default": 30},
                        "height": {"type": "number", "description": "In metres."},
                        "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
                        "subscribe": {"type": "boolean"}
                    }, "required": ["name"]}
                })
            } else {
                json!({
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
                })
            };
            let answer = server.ask("elicitation/create", request).await;
            match answer {
                Ok(v) if v["action"] == "accept" && args["url"].is_string() => {
                    Ok(json!({"content": [text("the user went to the URL")]}))
                }
                Ok(v) if v["action"] == "accept" && args["detailed"] == true => {
                    Ok(json!({"content": [text(format!("the user said: {}", v["content"]))]}))
                }
                Ok(v) if v["action"] == "accept" => {
                    let name = v["content"]["name"].as_str().unwrap_or("?").to_owned();
                    Ok(json!({"content": [text(format!("hello, {name}"))]}))
                }
                Ok(v) => Ok(json!({"content": [text(format!("the user chose {}", v["action"]))]})),
                Err(e) => tool_error(format!("elicitation failed: {}", e.message)),
            }
        }
        other => Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("unknown tool: {other}"),
        )),
    }
}

const README: &str = "mcpwire demo server: tools echo, add, slow, ask_llm, ask_user.";

pub(crate) fn resources() -> Value {
    json!([{
        "uri": "demo://readme",
        "name": "readme",
        "title": "Read me",
        "mimeType": "text/plain",
        "size": README.len()
    }])
}

pub(crate) fn resource_templates() -> Value {
    json!([{"uriTemplate": "demo://echo/{text}", "name": "echo", "mimeType": "text/plain"}])
}

pub(crate) fn read_resource(params: &Value) -> Outcome {
    let uri = params["uri"].as_str().unwrap_or_default();
    let body = if uri == "demo://readme" {
        README.to_owned()
    } else if let Some(rest) = uri.strip_prefix("demo://echo/") {
        rest.to_owned()
    } else {
        return Err(ErrorObject::new(
            ErrorCode::RESOURCE_NOT_FOUND,
            format!("no resource {uri}"),
        ));
    };
    Ok(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": body}]}))
}

pub(crate) fn prompts() -> Value {
    json!([{
        "name": "greet",
        "title": "Greeting",
        "description": "Greets someone by name.",
        "arguments": [{"name": "name", "description": "Who to greet", "required": true}]
    }])
}

pub(crate) fn get_prompt(params: &Value) -> Outcome {
    if params["name"] != "greet" {
        return Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            "unknown prompt",
        ));
    }
    let name = params["arguments"]["name"].as_str().unwrap_or("world");
    Ok(json!({
        "description": "A greeting",
        "messages": [{"role": "user", "content": text(format!("Please greet {name} warmly."))}]
    }))
}

pub(crate) fn complete(params: &Value) -> Value {
    let typed = params["argument"]["value"].as_str().unwrap_or_default();
    let values: Vec<&str> = ["Ada", "Alan", "Grace", "Linus"]
        .into_iter()
        .filter(|n| n.to_lowercase().starts_with(&typed.to_lowercase()))
        .collect();
    json!({"completion": {"values": values, "total": values.len(), "hasMore": false}})
}
