//! Many servers at once: everything of `mcpwire-manager`, plus
//! [`Transports`], which turns the entries of configuration files into
//! [`Server`](crate::Server)s (stdio commands, HTTP URLs sharing one connection pool) for
//! the manager to connect.
//!
//! ```no_run
//! use mcpwire::config::ProcessEnvironment;
//! use mcpwire::manager::{Manager, Transports};
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let config = mcpwire::config::load_file("claude_desktop_config.json")?;
//! let manager = Manager::builder()
//!     .config(&config, &mcpwire::config_resolver(&ProcessEnvironment), &Transports::new()?)?
//!     .build()?;
//! let report = manager.connect_all().await?;
//! println!("{} connected, {} failed", report.connected.len(), report.failed.len());
//! for tool in manager.tools()? {
//!     println!("{}", tool.name);
//! }
//! let answer = manager.call_tool("time__get_current_time", &json!({"timezone": "UTC"})).await?;
//! println!("{}", answer.text());
//! manager.close().await;
//! # Ok(()) }
//! ```

use std::sync::Arc;

use mcpwire_client::Error as ClientError;
use mcpwire_config::ResolvedServer;
pub use mcpwire_manager::*;

pub use crate::from_config::{Transports, UnusableEntry};

impl Connectors for Transports {
    fn connector(&self, server: &ResolvedServer) -> Result<Connector, ClientError> {
        let server = self.server(server)?;
        Ok(Arc::new(move || server.clone().factory()))
    }
}
