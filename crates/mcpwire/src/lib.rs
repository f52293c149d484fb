//! mcpwire: a fast, correct Model Context Protocol client.
//!
//! This facade re-exports the layers behind features: `stdio` (default) and
//! `http`; `full` enables both.

pub use mcpwire_client as client;
pub use mcpwire_codec as codec;
#[cfg(feature = "http")]
pub use mcpwire_http as http;
#[cfg(feature = "stdio")]
pub use mcpwire_stdio as stdio;
pub use mcpwire_transport as transport;

#[cfg(feature = "stdio")]
mod stdio_client;
#[cfg(feature = "stdio")]
pub use stdio_client::{connect_stdio, stdio_factory};
