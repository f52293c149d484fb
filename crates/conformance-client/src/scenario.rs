//! Conformance mode: what the client does for each scenario of the official
//! MCP conformance suite.
//!
//! Every scenario starts the same way: connect to the URL with the default
//! settings (Streamable HTTP, or legacy HTTP+SSE if that is all the server
//! speaks) and the handlers of [`crate::user`]. Then a [`Plan`] says what to
//! ask; most scenarios are served by [`Plan::ExerciseTools`], which is what a
//! host does with a server it does not know. Nothing here speaks the
//! protocol: the library does, and a scenario that needs a new behaviour
//! gets it there.

use std::time::Instant;

use mcpwire::{Client, ClientConfig, HttpClient, HttpConfig, Server, Tool};
use serde_json::{Value, json};

use crate::arguments;

/// What the client asks of a scenario's server once connected.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Plan {
    /// List the tools, and nothing else.
    ListTools,
    /// List the tools and call each one with arguments made up from its input
    /// schema ([`arguments::from_schema`]).
    ExerciseTools,
    /// List the tools, then call `echo` with the input schema of `focal`, as
    /// received, as its `schema` argument, so the server can see what the
    /// client kept of it.
    EchoInputSchema {
        focal: &'static str,
        echo: &'static str,
    },
}

impl Plan {
    fn for_scenario(name: &str) -> Self {
        match name {
            // The server offers a tool whose schema points at a network
            // `$ref` and answers nothing but `tools/list`.
            "json-schema-ref-no-deref" => Plan::ListTools,
            "json-schema-2020-12-preservation" => Plan::EchoInputSchema {
                focal: "json_schema_2020_12_tool",
                echo: "json_schema_echo",
            },
            _ => Plan::ExerciseTools,
        }
    }
}

/// Runs scenario `name` against `url`. `context` is the scenario's
/// `MCP_CONFORMANCE_CONTEXT`, if it gave one: only the authorization
/// scenarios do, and they are not supported yet.
pub(crate) async fn run(name: &str, url: &str, context: Option<&str>) -> Result<(), String> {
    let started = Instant::now();
    if let Some(context) = context {
        eprintln!("scenario {name}: context {context}");
    }
    let plan = Plan::for_scenario(name);
    eprintln!("scenario {name}: {plan:?} against {url}");
    let (client, _http) = connect(url, crate::user::with_handlers(ClientConfig::new())).await?;
    eprintln!(
        "connected: {:?}, protocol {}",
        client.server_info().map(|i| i.name),
        client.protocol_version().unwrap_or_default()
    );
    let outcome = execute(&client, &plan).await;
    client.close().await;
    eprintln!(
        "scenario {name}: {} in {:.2} s",
        if outcome.is_ok() { "done" } else { "failed" },
        started.elapsed().as_secs_f64()
    );
    outcome
}

/// Connects over HTTP with the default settings, through the facade. The
/// `HttpClient` (the connection pool, which remembers what the automatic
/// fallback found) is returned so the caller can ask it.
pub(crate) async fn connect(
    url: &str,
    config: ClientConfig,
) -> Result<(Client, HttpClient), String> {
    let http = HttpClient::new(HttpConfig::new()).map_err(|e| format!("HTTP client: {e}"))?;
    let server = Server::http(url).client(http.clone());
    let client = mcpwire::connect(server, config)
        .await
        .map_err(|e| format!("connect {url}: {}", chain(&e)))?;
    Ok((client, http))
}

async fn execute(client: &Client, plan: &Plan) -> Result<(), String> {
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list: {}", chain(&e)))?;
    eprintln!(
        "tools: {:?}",
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>()
    );
    match plan {
        Plan::ListTools => Ok(()),
        Plan::ExerciseTools => {
            for tool in &tools {
                call(
                    client,
                    &tool.name,
                    arguments::from_schema(&tool.input_schema),
                )
                .await?;
            }
            Ok(())
        }
        Plan::EchoInputSchema { focal, echo } => {
            let focal = find(&tools, focal)?;
            find(&tools, echo)?;
            call(client, echo, json!({ "schema": focal.input_schema })).await
        }
    }
}

fn find<'a>(tools: &'a [Tool], name: &str) -> Result<&'a Tool, String> {
    tools
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| format!("the server offers no tool `{name}`"))
}

async fn call(client: &Client, name: &str, args: Value) -> Result<(), String> {
    eprintln!("tools/call {name} {args}");
    let result = client
        .call_tool(name, &args)
        .await
        .map_err(|e| format!("tools/call {name}: {}", chain(&e)))?;
    eprintln!(
        "  -> {}{}",
        if result.is_error == Some(true) {
            "(tool error) "
        } else {
            ""
        },
        result.text()
    );
    Ok(())
}

/// An error and its causes, one after the other (each layer's `Display`
/// describes only itself).
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_get_the_plan_their_server_expects() {
        assert_eq!(Plan::for_scenario("tools_call"), Plan::ExerciseTools);
        assert_eq!(Plan::for_scenario("sse-retry"), Plan::ExerciseTools);
        assert_eq!(
            Plan::for_scenario("json-schema-ref-no-deref"),
            Plan::ListTools
        );
        assert!(matches!(
            Plan::for_scenario("json-schema-2020-12-preservation"),
            Plan::EchoInputSchema { .. }
        ));
    }
}
