//! The rmcp server of `cargo xtask interop`: a small server on the official
//! Rust SDK (the current crates.io `rmcp`), with a tool that adds, a tool
//! that reports progress, a resource and a prompt.
//!
//! ```text
//! mcpwire-interop-rmcp-server MODE [PORT]
//!
//!   stdio                stdin/stdout
//!   http-stateful        Streamable HTTP (any path) with sessions for the
//!                        2025 revisions, SSE responses
//!   http-stateless       Streamable HTTP without sessions, SSE responses
//!   http-stateless-json  the same, JSON responses unless the handler sends
//!                        something before its result
//! ```
//!
//! HTTP binds 127.0.0.1 only. rmcp serves the 2026-07-28 revision
//! statelessly whatever the mode; the modes differ for the 2025 revisions.

use std::process::ExitCode;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, JsonObject, ListPromptsResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const GREETING: &str = "interop://greeting";

/// The server: stateless itself, so one value serves every session.
#[derive(Debug, Clone, Copy)]
struct Interop;

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn number(args: Option<&JsonObject>, name: &str) -> Result<f64, ErrorData> {
    args.and_then(|a| a.get(name))
        .and_then(Value::as_f64)
        .ok_or_else(|| ErrorData::invalid_params(format!("`{name}` must be a number"), None))
}

impl ServerHandler for Interop {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new(
            "mcpwire-interop-rmcp",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let two_numbers = json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        });
        let steps = json!({
            "type": "object",
            "properties": {"steps": {"type": "integer", "minimum": 0, "maximum": 100}},
            "required": ["steps"],
        });
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("add", "Adds two numbers.", schema(two_numbers)),
            Tool::new(
                "count",
                "Counts to `steps`, reporting progress at each step.",
                schema(steps),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.as_ref();
        let text = match request.name.as_ref() {
            "add" => (number(args, "a")? + number(args, "b")?).to_string(),
            "count" => {
                let steps = number(args, "steps")?;
                if !(0.0..=100.0).contains(&steps) || steps.fract() != 0.0 {
                    return Err(ErrorData::invalid_params(
                        "`steps` must be a whole number from 0 to 100",
                        None,
                    ));
                }
                if let Some(token) = context.meta.get_progress_token() {
                    for i in 1..=steps as u32 {
                        let progress = ProgressNotificationParam::new(token.clone(), i.into())
                            .with_total(steps);
                        context
                            .peer
                            .notify_progress(progress)
                            .await
                            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                    }
                }
                format!("counted to {steps}")
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool `{other}`"),
                    None,
                ));
            }
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(GREETING, "greeting").with_description("A fixed greeting."),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != GREETING {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        let text = ResourceContents::text("hello from rmcp", GREETING);
        Ok(ReadResourceResult::new(vec![text]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let code = PromptArgument::new("code").with_required(true);
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "review",
            Some("Asks for a review of `code`."),
            Some(vec![code]),
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "review" {
            return Err(ErrorData::invalid_params(
                format!("no prompt `{}`", request.name),
                None,
            ));
        }
        let code = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("code"))
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("`code` is required", None))?;
        let message = PromptMessage::new_text(Role::User, format!("Please review:\n{code}"));
        Ok(GetPromptResult::new(vec![message]).into())
    }
}

async fn stdio() -> Result<(), String> {
    let running = Interop
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("stdio: {e}"))?;
    running.waiting().await.map_err(|e| format!("stdio: {e}"))?;
    Ok(())
}

async fn http(mode: &str, port: u16) -> Result<(), String> {
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = mode == "http-stateful";
    config.json_response = mode == "http-stateless-json";
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
    // Two service types (the session manager is a type parameter): each
    // serves every connection through the same accept loop.
    if config.legacy_session_mode {
        let manager = Arc::new(LocalSessionManager::default());
        serve(
            listener,
            StreamableHttpService::new(|| Ok(Interop), manager, config),
        )
        .await
    } else {
        let manager = Arc::new(NeverSessionManager::default());
        serve(
            listener,
            StreamableHttpService::new(|| Ok(Interop), manager, config),
        )
        .await
    }
}

async fn serve<M>(
    listener: tokio::net::TcpListener,
    service: StreamableHttpService<Interop, M>,
) -> Result<(), String>
where
    M: rmcp::transport::streamable_http_server::SessionManager,
{
    loop {
        let (stream, _) = listener
            .accept()
            .await
            .map_err(|e| format!("accept: {e}"))?;
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                eprintln!("connection: {e}");
            }
        });
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or_default();
    let port = args.get(1).and_then(|p| p.parse::<u16>().ok());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = match (mode, port) {
        ("stdio", _) => runtime.block_on(stdio()),
        ("http-stateful" | "http-stateless" | "http-stateless-json", Some(port)) => {
            runtime.block_on(http(mode, port))
        }
        _ => {
            eprintln!(
                "usage: mcpwire-interop-rmcp-server \
                 (stdio | http-stateful PORT | http-stateless PORT | http-stateless-json PORT)"
            );
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpwire-interop-rmcp-server: {e}");
            ExitCode::FAILURE
        }
    }
}
