//! One benchmark run: one client, one transport, one workload, in this
//! process, so the peak RSS read at the end is that run's alone. Prints one
//! JSON line. `cargo xtask bench` runs the matrix and builds the table.
//!
//! ```text
//! mcpwire-bench --client mcpwire|mcpwire-struct|mcpwire-manager|rmcp|raw|tokio
//!               --transport stdio|http|http-sse
//!               --workload w1|w2|w2-task|w3|w4-1m|w4-10m|w5 --server PATH [--quick]
//! mcpwire-bench --client mcpwire|rmcp --density SHAPE --sessions N --server PATH
//!               [--pool-idle-ms MS]
//! mcpwire-bench --url URL [--tool NAME] [--watch-pid PID]
//!               (--workload w1|w2|w3 [--quick] | --hold N)
//! ```
//!
//! The third form (`at_url.rs`) is mcpwire's client against a server
//! already running at URL (`cargo xtask bench --serve` starts the benchmark
//! server, and `mcpwire serve --http` in front of it): the workload on one
//! session, calling NAME (default `echo`), with the CPU per call of process
//! PID if given; or `--hold N`: sessions opened one after another until N
//! or one fails, held idle, and PID's memory growth per session.
//!
//! The second form measures density (see `density.rs`): SHAPE is
//! `idle-http-shared`, `idle-http-per-session`, `idle-stdio` or
//! `connect-sequential`. `--pool-idle-ms` sets mcpwire's
//! `HttpConfig::pool_idle_timeout` (default 90 s) for its HTTP clients.
//!
//! The clients: mcpwire (this workspace, as its README shows it: arguments
//! as `&json!(..)`; `mcpwire-struct` passes them as a borrowed struct), rmcp
//! (the official Rust SDK, from
//! crates.io), and a raw baseline with no MCP library (hand-written
//! JSON-RPC over blocking pipes, or over hyper's pooled client with
//! keep-alive), which marks the limit of the pipe, the socket and the
//! server. For stdio's sequential workloads a fourth, `tokio`, writes the
//! same lines through tokio's pipes: the floor of any client on the runtime.
//! `mcpwire-manager` makes the same calls routed by public name through the
//! manager, for its overhead over a direct call; in W5 (20 stdio servers to
//! all ready) it starts them at once, and `mcpwire` one by one.
//! All talk to the same `mcpwire-bench-server` binary.

// Built with one client alone (`cargo xtask bench --solo`), what only the
// other forms or the other client use is left unused.
#![cfg_attr(
    not(all(feature = "mcpwire-client", feature = "rmcp-client")),
    allow(dead_code)
)]

mod measure;
#[cfg(feature = "mcpwire-extras")]
mod otel_on;
mod raw_wire;
mod server;
mod workload;
#[cfg(feature = "mcpwire-client")]
mod at_url;
#[cfg(all(feature = "mcpwire-client", feature = "rmcp-client"))]
mod density;
mod raw_http;
mod raw_stdio;
mod raw_tokio;
#[cfg(feature = "mcpwire-extras")]
mod via_manager;
#[cfg(feature = "mcpwire-client")]
mod via_mcpwire;
#[cfg(feature = "rmcp-client")]
mod via_rmcp;

use std::path::PathBuf;
use std::process::ExitCode;

#[cfg(all(feature = "mcpwire-client", feature = "rmcp-client"))]
use density::Shape;
use raw_tokio::RawTokio;
use server::HttpServer;
#[cfg(feature = "mcpwire-extras")]
use via_manager::ViaManager;
#[cfg(feature = "mcpwire-client")]
use via_mcpwire::Mcpwire;
#[cfg(feature = "rmcp-client")]
use via_rmcp::Rmcp;
use workload::{Caller, Plan, Samples, Workload, connect_loop, drive};

struct Args {
    client: String,
    transport: String,
    workload: Workload,
    server: PathBuf,
    plan: Plan,
}

/// A density run (the second form).
#[cfg(all(feature = "mcpwire-client", feature = "rmcp-client"))]
struct DensityArgs {
    client: String,
    shape: Shape,
    sessions: usize,
    server: PathBuf,
    /// mcpwire's `pool_idle_timeout`, if not the default.
    pool_idle: Option<std::time::Duration>,
}

/// Parses the second form, if `--density` is given.
#[cfg(all(feature = "mcpwire-client", feature = "rmcp-client"))]
fn parse_density() -> Option<Result<DensityArgs, String>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter().any(|a| a == "--density").then(|| {
        let (mut client, mut shape, mut sessions, mut server) = (None, None, None, None);
        let mut pool_idle = None;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let value = it.next().cloned().unwrap_or_default();
            match arg.as_str() {
                "--client" => client = Some(value),
                "--density" => {
                    shape = Some(Shape::parse(&value).ok_or(format!("no density shape {value:?}"))?)
                }
                "--sessions" => sessions = value.parse().ok().filter(|&n: &usize| n > 0),
                "--server" => server = Some(PathBuf::from(value)),
                "--pool-idle-ms" => {
                    let ms = value.parse().map_err(|_| "--pool-idle-ms takes a number")?;
                    pool_idle = Some(std::time::Duration::from_millis(ms));
                }
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        let client = client.ok_or("--client is required")?;
        if !["mcpwire", "rmcp"].contains(&client.as_str()) {
            return Err(format!("no density client {client:?}"));
        }
        Ok(DensityArgs {
            client,
            shape: shape.ok_or("--density is required")?,
            sessions: sessions.ok_or("--sessions N (N > 0) is required")?,
            server: server.ok_or("--server is required")?,
            pool_idle,
        })
    })
}

/// A run against a server at a URL (the third form).
#[cfg(feature = "mcpwire-client")]
struct UrlArgs {
    url: String,
    tool: String,
    watch: Option<u32>,
    /// `Ok(workload)`, or `Err(n)`: hold `n` sessions.
    what: Result<Workload, usize>,
    plan: Plan,
}

/// Parses the third form, if `--url` is given.
#[cfg(feature = "mcpwire-client")]
fn parse_url() -> Option<Result<UrlArgs, String>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter().any(|a| a == "--url").then(|| {
        let (mut url, mut tool, mut watch) = (None, "echo".to_owned(), None);
        let (mut workload, mut hold, mut plan) = (None, None, Plan::full());
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if arg == "--quick" {
                plan = Plan::quick();
                continue;
            }
            let value = it.next().cloned().unwrap_or_default();
            match arg.as_str() {
                "--url" => url = Some(value),
                "--tool" => tool = value,
                "--watch-pid" => {
                    watch = Some(value.parse().map_err(|_| "--watch-pid takes a pid")?);
                }
                "--workload" => {
                    workload =
                        Some(Workload::parse(&value).ok_or(format!("no workload {value:?}"))?)
                }
                "--hold" => {
                    hold = Some(
                        value
                            .parse()
                            .ok()
                            .filter(|&n: &usize| n > 0)
                            .ok_or("--hold takes a number of sessions above 0")?,
                    )
                }
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        let what = match (workload, hold) {
            (Some(w), None) => Ok(w),
            (None, Some(n)) if watch.is_some() => Err(n),
            (None, Some(_)) => return Err("--hold needs --watch-pid".into()),
            _ => return Err("give --workload or --hold, not both".into()),
        };
        Ok(UrlArgs {
            url: url.ok_or("--url is required")?,
            tool,
            watch,
            what,
            plan,
        })
    })
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let (mut client, mut transport, mut workload, mut server) = (None, None, None, None);
    let mut plan = Plan::full();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--client" => client = args.next(),
            "--transport" => transport = args.next(),
            "--workload" => {
                let name = args.next().unwrap_or_default();
                workload = Some(Workload::parse(&name).ok_or(format!("no workload {name:?}"))?);
            }
            "--server" => server = args.next().map(PathBuf::from),
            "--quick" => plan = Plan::quick(),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let client = client.ok_or("--client is required")?;
    if ![
        "mcpwire",
        "mcpwire-struct",
        "mcpwire-manager",
        "mcpwire-otel",
        "rmcp",
        "raw",
        "tokio",
    ]
    .contains(&client.as_str())
    {
        return Err(format!("no client {client:?}"));
    }
    let transport = transport.ok_or("--transport is required")?;
    if !["stdio", "http", "http-sse"].contains(&transport.as_str()) {
        return Err(format!("no transport {transport:?}"));
    }
    Ok(Args {
        client,
        transport,
        workload: workload.ok_or("--workload is required")?,
        server: server.ok_or("--server is required")?,
        plan,
    })
}

fn main() -> ExitCode {
    #[cfg(feature = "mcpwire-client")]
    if let Some(at) = parse_url() {
        return match at.and_then(|a| run_at_url(&a)) {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("mcpwire-bench: --url: {e}");
                ExitCode::FAILURE
            }
        };
    }
    #[cfg(all(feature = "mcpwire-client", feature = "rmcp-client"))]
    if let Some(density) = parse_density() {
        return match density.and_then(|d| run_density(&d)) {
            Ok(outcome) => {
                println!("{}", serde_json::to_string(&outcome).expect("serializable"));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("mcpwire-bench: density: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("mcpwire-bench: {e}");
            eprintln!(
                "usage: mcpwire-bench --client mcpwire|mcpwire-struct|mcpwire-manager|rmcp|raw|tokio \
                 --transport stdio|http|http-sse \
                 --workload w1|w2|w2-task|w3|w4-1m|w4-10m|w5 --server PATH [--quick]"
            );
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(samples) => {
            let outcome = samples.outcome(&args.client, &args.transport, args.workload);
            println!("{}", serde_json::to_string(&outcome).expect("serializable"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "mcpwire-bench: {} {} {}: {e}",
                args.client,
                args.transport,
                args.workload.name()
            );
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<Samples, String> {
    if args.transport == "stdio" && args.client == "raw" {
        return raw_stdio::run(&args.server, args.workload, &args.plan);
    }
    // The async clients share one runtime shape: tokio's default
    // multi-threaded runtime, as `#[tokio::main]` builds it.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    #[cfg(feature = "mcpwire-extras")]
    if args.workload == Workload::Fleet {
        if args.transport != "stdio" || !args.client.starts_with("mcpwire") {
            return Err("W5 runs mcpwire and mcpwire-manager over stdio only".into());
        }
        let parallel = args.client == "mcpwire-manager";
        let plan = args.plan;
        return runtime.block_on(via_manager::fleet(
            &args.server,
            plan.fleet_size,
            plan.fleets,
            parallel,
        ));
    }
    let http = match args.transport.as_str() {
        "stdio" => None,
        t => Some(HttpServer::start(&args.server, t == "http-sse")?),
    };
    // Before any client connects: it takes its instruments then.
    #[cfg(feature = "mcpwire-extras")]
    let observing = (args.client == "mcpwire-otel").then(otel_on::install);
    let result = runtime.block_on(async {
        match (args.client.as_str(), &http) {
            #[cfg(feature = "mcpwire-extras")]
            ("mcpwire-otel", None) => {
                let server = args.server.as_path();
                bench(args, || {
                    Mcpwire::stdio(server, via_mcpwire::Arguments::Json)
                })
                .await
            }
            #[cfg(feature = "mcpwire-extras")]
            ("mcpwire-otel", Some(http)) => {
                let client = via_mcpwire::http_client()?;
                bench(args, || {
                    Mcpwire::http(&client, http.url(), via_mcpwire::Arguments::Json)
                })
                .await
            }
            #[cfg(feature = "mcpwire-client")]
            ("mcpwire" | "mcpwire-struct", None) => {
                let server = args.server.as_path();
                let arguments = mcpwire_arguments(&args.client);
                bench(args, || Mcpwire::stdio(server, arguments)).await
            }
            #[cfg(feature = "mcpwire-client")]
            ("mcpwire" | "mcpwire-struct", Some(http)) => {
                let client = via_mcpwire::http_client()?;
                let arguments = mcpwire_arguments(&args.client);
                bench(args, || Mcpwire::http(&client, http.url(), arguments)).await
            }
            #[cfg(feature = "mcpwire-extras")]
            ("mcpwire-manager", None) => {
                let server = args.server.as_path();
                bench(args, || ViaManager::stdio(server)).await
            }
            #[cfg(feature = "mcpwire-extras")]
            ("mcpwire-manager", Some(http)) => {
                let client = via_mcpwire::http_client()?;
                bench(args, || ViaManager::http(&client, http.url())).await
            }
            #[cfg(feature = "rmcp-client")]
            ("rmcp", None) => {
                let server = args.server.as_path();
                bench(args, || Rmcp::stdio(server)).await
            }
            #[cfg(feature = "rmcp-client")]
            ("rmcp", Some(http)) => bench(args, || Rmcp::http(http.url())).await,
            ("tokio", None) if args.workload.is_sequential() => {
                let server = args.server.as_path();
                bench(args, || RawTokio::stdio(server)).await
            }
            ("raw", Some(http)) => {
                let client = raw_http::http_client();
                bench(args, || raw_http::RawHttp::connect(&client, http.url())).await
            }
            ("tokio", _) => Err("the tokio floor runs stdio W2 only".into()),
            _ => Err("this client and transport do not go together, or this binary was built without the client".into()),
        }
    });
    drop(http);
    #[cfg(feature = "mcpwire-extras")]
    if let Some(providers) = observing {
        providers.shutdown();
    }
    result
}

/// The third form's run; its JSON line.
#[cfg(feature = "mcpwire-client")]
fn run_at_url(args: &UrlArgs) -> Result<String, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let bearer = std::env::var(at_url::BEARER_ENV).ok();
    let tool: std::sync::Arc<str> = args.tool.as_str().into();
    let watched = args.watch.map(at_url::Watched::new);
    runtime.block_on(async {
        let http = via_mcpwire::http_client()?;
        let connect = || {
            let (http, tool) = (&http, tool.clone());
            let (url, bearer) = (args.url.as_str(), bearer.as_deref());
            async move { at_url::AtUrl::connect(http, url, bearer, tool).await }
        };
        let line = match (args.what, watched) {
            (Ok(workload), _) => {
                let outcome = at_url::run(workload, &args.plan, watched, connect).await?;
                serde_json::to_string(&outcome)
            }
            (Err(n), Some(watched)) => {
                let outcome = at_url::hold(n, watched, connect).await?;
                serde_json::to_string(&outcome)
            }
            (Err(_), None) => return Err("--hold needs --watch-pid".to_owned()),
        };
        line.map_err(|e| e.to_string())
    })
}

#[cfg(all(feature = "mcpwire-client", feature = "rmcp-client"))]
fn run_density(args: &DensityArgs) -> Result<density::DensityOutcome, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let http = match args.shape.is_http() {
        true => Some(HttpServer::start(&args.server, false)?),
        false => None,
    };
    let (n, shape, name) = (args.sessions, args.shape, args.client.as_str());
    let pool_idle = args.pool_idle;
    // The default call path, as the README shows it.
    use via_mcpwire::Arguments::Json;
    let result = runtime.block_on(async {
        let url = http.as_ref().map_or(String::new(), |h| h.url().to_owned());
        let counted = http.as_ref().map(|h| h.url());
        let server = args.server.clone();
        match (name, shape) {
            ("mcpwire", Shape::HttpShared) => {
                let client = via_mcpwire::http_client_with(pool_idle)?;
                density::hold(name, shape, n, false, counted, move || {
                    let (client, url) = (client.clone(), url.clone());
                    async move { Mcpwire::http(&client, &url, Json).await }
                })
                .await
            }
            ("mcpwire", Shape::HttpPerSession) => {
                density::hold(name, shape, n, false, counted, move || {
                    let url = url.clone();
                    async move {
                        let client = via_mcpwire::http_client_with(pool_idle)?;
                        Mcpwire::http(&client, &url, Json).await
                    }
                })
                .await
            }
            ("mcpwire", Shape::Stdio) => {
                density::hold(name, shape, n, true, None, move || {
                    let server = server.clone();
                    async move { Mcpwire::stdio(&server, Json).await }
                })
                .await
            }
            ("mcpwire", Shape::ConnectSequential) => {
                let client = via_mcpwire::http_client_with(pool_idle)?;
                density::connect_sequential(name, n, &url, || Mcpwire::http(&client, &url, Json))
                    .await
            }
            ("rmcp", Shape::HttpShared) => {
                let client = via_rmcp::http_client();
                density::hold(name, shape, n, false, counted, move || {
                    let (client, url) = (client.clone(), url.clone());
                    async move { Rmcp::http_with(client, &url).await }
                })
                .await
            }
            ("rmcp", Shape::HttpPerSession) => {
                density::hold(name, shape, n, false, counted, move || {
                    let url = url.clone();
                    async move { Rmcp::http(&url).await }
                })
                .await
            }
            ("rmcp", Shape::Stdio) => {
                density::hold(name, shape, n, true, None, move || {
                    let server = server.clone();
                    async move { Rmcp::stdio(&server).await }
                })
                .await
            }
            ("rmcp", Shape::ConnectSequential) => {
                density::connect_sequential(name, n, &url, || Rmcp::http(&url)).await
            }
            _ => Err("unreachable client".into()),
        }
    });
    drop(http);
    result
}

/// `mcpwire` passes the arguments as the README does, `mcpwire-struct` as a
/// borrowed struct.
#[cfg(feature = "mcpwire-client")]
fn mcpwire_arguments(client: &str) -> via_mcpwire::Arguments {
    if client == "mcpwire-struct" {
        via_mcpwire::Arguments::Struct
    } else {
        via_mcpwire::Arguments::Json
    }
}

async fn bench<C, F, Fut>(args: &Args, connect: F) -> Result<Samples, String>
where
    C: Caller,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<C, String>>,
{
    if args.workload == Workload::Connect {
        return connect_loop(args.plan.connects, connect).await;
    }
    let caller = connect().await?;
    let samples = if args.workload == Workload::SequentialTask {
        let (task_caller, workload, plan) = (caller.clone(), args.workload, args.plan);
        tokio::spawn(async move { drive(&task_caller, workload, &plan).await })
            .await
            .map_err(|e| e.to_string())??
    } else {
        drive(&caller, args.workload, &args.plan).await?
    };
    caller.close().await;
    Ok(samples)
}
