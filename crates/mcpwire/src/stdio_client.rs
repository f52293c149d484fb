//! Connecting a client to a local server process.

use mcpwire_client::{Client, ClientConfig, Error, TransportFactory};
use mcpwire_stdio::{StdioConfig, StdioTransport};
use mcpwire_transport::Transport;

/// A transport factory that spawns the server described by `config`, once
/// per (re)connection.
pub fn stdio_factory(config: StdioConfig) -> TransportFactory {
    Box::new(move || {
        let config = config.clone();
        Box::pin(async move {
            match StdioTransport::spawn(config).await {
                Ok(t) => Ok(Box::new(t) as Box<dyn Transport>),
                Err(e) => Err(Error::spawn(e)),
            }
        })
    })
}

/// Spawns the server described by `stdio` and connects a client to it.
///
/// With [`ClientConfig::reconnect`](mcpwire_client::ClientConfig::reconnect)
/// set, a server that exits unexpectedly is spawned again and re-initialized
/// (the 2026 specification says a client SHOULD restart it); without it, the
/// client closes when the server exits.
pub async fn connect_stdio(stdio: StdioConfig, config: ClientConfig) -> Result<Client, Error> {
    Client::connect_with(stdio_factory(stdio), config).await
}
