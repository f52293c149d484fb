//! Many MCP servers at once: the fleet an agent, an IDE plug-in or a
//! gateway holds, kept healthy and offered as one catalogue.
//!
//! - **One [`Client`](mcpwire_client::Client) per server**, no proxy and no
//!   session per call: each keeps its own capabilities, keepalive and
//!   reconnection ([`ManagerBuilder::client_config`]).
//! - **Servers from the files users have** ([`ManagerBuilder::config`],
//!   with `mcpwire-config`) or from code ([`ServerSpec`]).
//! - **Connect policies** ([`ConnectPolicy`]): eager servers start in
//!   parallel, each within its own start-up timeout; lazy ones on the first
//!   call routed to them, their tools advertised meanwhile from a
//!   [`SavedCatalogue`]; manual ones on request.
//! - **Failure isolation**: a server that fails is reported
//!   ([`ConnectReport`]), never fatal unless [required](ServerSpec::required);
//!   its [`Health`] is on a `watch`; a call can
//!   [retry it](ToolCall::retry_failed).
//! - **One catalogue** of tools, prompts and resources, with a routing
//!   table: `{server}__{tool}` by default ([`Naming`]), an optional
//!   [`Sanitizer`] for hosts that limit names, a [`Collisions`] policy
//!   (a typed error by default). [`Manager::call_tool`] routes by public
//!   name; an unknown name fails locally with the closest names.
//! - **Fresh lists**: a `list_changed` (or a new session) refreshes only
//!   that server's part, debounced, filters applied again, one
//!   [`Event::CatalogueChanged`].
//! - **Policy per server**: include and exclude lists enforced on calls as
//!   well as lists, request and start-up timeouts, a concurrency cap;
//!   [`CallHook`]s before and after each call that can deny it.
//! - **No hidden behaviour**: nothing is sent anywhere but to the
//!   configured servers, and every server or item left out is an
//!   [`Event`].
//!
//! It knows no transport: a [`Connector`] opens them (the facade's
//! `mcpwire::manager::Transports` makes connectors for stdio and HTTP
//! entries, one HTTP connection pool for all). `docs/manager.md` describes
//! the naming rules, the health states and the events.
//!
//! ```no_run
//! # async fn demo(connectors: &dyn mcpwire_manager::Connectors) -> Result<(), Box<dyn std::error::Error>> {
//! use mcpwire_config::{ProcessEnvironment, Resolver};
//! use mcpwire_manager::Manager;
//! use serde_json::json;
//!
//! let config = mcpwire_config::load_file("claude_desktop_config.json")?;
//! let manager = Manager::builder()
//!     .config(&config, &Resolver::new(&ProcessEnvironment), connectors)?
//!     .build()?;
//! let report = manager.connect_all().await?;
//! for (server, why) in &report.failed {
//!     eprintln!("{server} did not start: {why}");
//! }
//! for tool in manager.tools()? {
//!     println!("{} ({})", tool.name, tool.server);
//! }
//! let result = manager
//!     .call_tool("filesystem__read_text_file", &json!({"path": "/tmp/notes.txt"}))
//!     .await?;
//! println!("{}", result.text());
//! manager.close().await;
//! # Ok(()) }
//! ```

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Lowest layer first: a module imports only from modules declared above it
// (`cargo xtask tidy` checks it); `cargo xtask tidy --print` draws the layers.
mod error;
mod health;
mod item;
mod pins;
mod event;
mod hooks;
mod naming;
mod saved;
mod spec;
mod slot;
mod suggest;
mod catalog;
mod pin_gate;
mod fleet;
mod start;
mod manager;
mod call;
mod config;
mod reload;

pub use call::{CallTool, GetPrompt, ReadResource, Routed, ToolCall};
pub use catalog::{RoutedPrompt, RoutedResource, RoutedTemplate, RoutedTool};
pub use config::Connectors;
pub use error::{Error, HookStage};
pub use event::{Event, ItemSkip, ServerChange, ServerSkip};
pub use health::Health;
pub use hooks::{CallHook, CallInfo, Denial, HookFuture};
pub use item::ItemKind;
pub use manager::{ConnectReport, Manager, ManagerBuilder, WeakManager};
pub use naming::{Collisions, Naming, SEPARATOR, Sanitizer};
pub use pins::{PinFinding, PinPolicy, Pins, PinsError, Review, Suspicion};
pub use reload::FleetReport;
pub use saved::{SavedCatalogue, ServerCatalogue};
pub use spec::{ConnectPolicy, Connector, ServerSpec};
