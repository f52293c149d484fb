//! A Unix socket: each connection is one client's session, newline-framed
//! as over stdio. It lets a fleet outlive the commands that use it: a
//! `serve` left running holds the servers started and their sessions, and
//! each later command is one call on a live connection.

use std::sync::Arc;

use mcpwire_transport::{IoConfig, IoTransport};
use tokio::net::UnixListener;
use tokio::sync::Semaphore;

use crate::session::Server;

impl Server {
    /// Serves each connection accepted on `listener` as one client, at
    /// most `max_clients` at once (a connection over the bound waits to be
    /// accepted), until accepting fails. Access is the socket file's: make
    /// it readable by its owner only.
    pub async fn serve_unix(
        &self,
        listener: UnixListener,
        max_clients: usize,
    ) -> std::io::Result<()> {
        let slots = Arc::new(Semaphore::new(max_clients.max(1)));
        loop {
            // Waiting for a slot before accepting pushes further clients
            // back into the listen queue rather than holding them here.
            let Ok(permit) = slots.clone().acquire_owned().await else {
                return Ok(());
            };
            let (stream, _) = listener.accept().await?;
            let server = self.clone();
            tokio::spawn(async move {
                let _permit = permit;
                let transport = IoTransport::from_stream(stream, IoConfig::new());
                // One client's failure ends that client's session only.
                let _ = server.serve(transport).await;
            });
        }
    }
}
