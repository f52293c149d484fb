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
    /// [`Plan::ExerciseTools`], then list the resources and read each, list
    /// the prompts and get each, where the server offers them.
    ExerciseAll,
    /// List the skills (skills extension), and load none.
    ListSkills,
    /// List the skills and load each one, its files verified; a skill that
    /// fails verification is refused (reported, not used), as a host does.
    LoadSkills,
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
            // The server checks the headers of reads and prompts too.
            "http-standard-headers" => Plan::ExerciseAll,
            "sep-2640-client-no-prefetch" => Plan::ListSkills,
            "sep-2640-client-verify-digest"
            | "sep-2640-client-verify-size"
            | "sep-2640-client-verify-frontmatter" => Plan::LoadSkills,
            _ => Plan::ExerciseTools,
        }
    }
}

/// Runs scenario `name` against `url`. `context` is the scenario's
/// `MCP_CONFORMANCE_CONTEXT`, if it gave one (the authorization scenarios
/// do: secrets and keys, never printed).
pub(crate) async fn run(name: &str, url: &str, context: Option<&str>) -> Result<(), String> {
    let started = Instant::now();
    let plan = Plan::for_scenario(name);
    eprintln!("scenario {name}: {plan:?} against {url}");
    let http = HttpClient::new(HttpConfig::new()).map_err(|e| format!("HTTP client: {e}"))?;
    let auth = crate::auth::for_scenario(name, context, &http)?;
    let server = Server::http(url).client(http).auth(auth);
    let client = mcpwire::connect(server, crate::user::with_handlers(ClientConfig::new()))
        .await
        .map_err(|e| format!("connect {url}: {}", chain(&e)))?;
    eprintln!(
        "connected: {:?}, protocol {} ({} era)",
        client.server_info().map(|i| i.name),
        client.protocol_version().unwrap_or_default(),
        client.era().map_or("no", |e| e.as_str())
    );
    let calls = context.map(arguments::tool_calls).unwrap_or_default();
    let outcome = execute(&client, &plan, &calls).await;
    client.close().await;
    eprintln!(
        "scenario {name}: {} in {:.2} s",
        if outcome.is_ok() { "done" } else { "failed" },
        started.elapsed().as_secs_f64()
    );
    outcome
}

async fn execute(client: &Client, plan: &Plan, calls: &[(String, Value)]) -> Result<(), String> {
    match plan {
        Plan::ListSkills => {
            let skills = client
                .skills()
                .list_all()
                .await
                .map_err(|e| format!("skills/list: {}", chain(&e)))?;
            eprintln!(
                "skills: {:?}",
                skills.iter().map(|s| &s.uri).collect::<Vec<_>>()
            );
            return Ok(());
        }
        Plan::LoadSkills => return load_skills(client).await,
        _ => {}
    }
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list: {}", chain(&e)))?;
    eprintln!(
        "tools: {:?}",
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>()
    );
    // The scenario named the calls to make and their arguments.
    if !calls.is_empty() {
        for (name, args) in calls {
            find(&tools, name)?;
            call(client, name, args.clone()).await?;
        }
        return Ok(());
    }
    match plan {
        Plan::ListTools | Plan::ListSkills | Plan::LoadSkills => Ok(()),
        Plan::ExerciseTools | Plan::ExerciseAll => {
            for tool in &tools {
                call(
                    client,
                    &tool.name,
                    arguments::from_schema(&tool.input_schema),
                )
                .await?;
            }
            if *plan == Plan::ExerciseAll {
                exercise_resources_and_prompts(client).await?;
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

/// Lists and reads every resource, lists and gets every prompt (with
/// arguments made up from each prompt's declared ones), where the server
/// offers them.
async fn exercise_resources_and_prompts(client: &Client) -> Result<(), String> {
    let caps = client.server_capabilities().unwrap_or_default();
    if caps.resources.is_some() {
        let resources = client
            .list_all_resources()
            .await
            .map_err(|e| format!("resources/list: {}", chain(&e)))?;
        for r in &resources {
            client
                .read_resource(&r.uri)
                .await
                .map_err(|e| format!("resources/read {}: {}", r.uri, chain(&e)))?;
        }
    }
    if caps.prompts.is_some() {
        let prompts = client
            .list_all_prompts()
            .await
            .map_err(|e| format!("prompts/list: {}", chain(&e)))?;
        for p in &prompts {
            let args = arguments::for_prompt(p);
            client
                .get_prompt(&p.name, args)
                .await
                .map_err(|e| format!("prompts/get {}: {}", p.name, chain(&e)))?;
        }
    }
    Ok(())
}

/// Loads every listed skill. A skill that fails verification is refused
/// and reported; that is the host doing its job, not a failure.
async fn load_skills(client: &Client) -> Result<(), String> {
    let skills = client
        .skills()
        .list_all()
        .await
        .map_err(|e| format!("skills/list: {}", chain(&e)))?;
    for skill in &skills {
        match client.skills().load(skill).await {
            Ok(loaded) => eprintln!("loaded {} ({} files)", skill.uri, loaded.files.len()),
            Err(e) if e.kind() == mcpwire::ErrorKind::SkillVerification => {
                eprintln!("refused {}: {}", skill.uri, chain(&e));
            }
            Err(e) => return Err(format!("load {}: {}", skill.uri, chain(&e))),
        }
    }
    Ok(())
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
