//! Servers from configuration files: [`ManagerBuilder::config`] resolves each
//! entry of an `mcpwire_config::Config` and turns it into a [`ServerSpec`]
//! through a [`Connectors`], which knows the transports (the facade's
//! `mcpwire::manager::Transports`).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use mcpwire_client::Error as ClientError;
use mcpwire_config::{Config, ResolvedServer, ResolvedTransport, Resolver};

use crate::error::Error;
use crate::event::ServerSkip;
use crate::manager::ManagerBuilder;
use crate::spec::{Connector, ServerSpec};

/// Turns a resolved configuration entry into a [`Connector`]: what knows
/// the transports. The facade implements it for stdio and HTTP
/// (`mcpwire::manager::Transports`, one HTTP connection pool for every
/// server); any `Fn(&ResolvedServer) -> Result<Connector, ClientError>` is
/// one too.
pub trait Connectors: Send + Sync {
    /// The connector for `server`, or why it cannot be reached (an
    /// unsupported transport, a header value that is not valid).
    fn connector(&self, server: &ResolvedServer) -> Result<Connector, ClientError>;
}

impl<F> Connectors for F
where
    F: Fn(&ResolvedServer) -> Result<Connector, ClientError> + Send + Sync,
{
    fn connector(&self, server: &ResolvedServer) -> Result<Connector, ClientError> {
        self(server)
    }
}

impl ManagerBuilder {
    /// Adds every server of `config`, in its order: each is resolved with
    /// `resolver` (variables expanded; an unset one is an error by default)
    /// and made reachable by `connectors`; its policy comes from its entry
    /// (enabled, required, timeouts, tool lists, trust).
    ///
    /// Nothing is dropped silently: a disabled server, one that does not
    /// resolve or cannot be reached, and one whose name cannot prefix tool
    /// names are left out and listed in
    /// [`Manager::skipped_servers`](crate::Manager::skipped_servers), the
    /// [`ConnectReport`](crate::ConnectReport) and an
    /// [`Event::ServerSkipped`](crate::Event::ServerSkipped). A required
    /// server that cannot be used fails this instead.
    pub fn config(
        mut self,
        config: &Config,
        resolver: &Resolver<'_>,
        connectors: &dyn Connectors,
    ) -> Result<Self, Error> {
        let specs = specs_of(config, resolver, connectors, &mut self.skipped)?;
        self.specs
            .extend(specs.into_iter().map(|spec| (spec, true)));
        Ok(self)
    }
}

/// The specs of `config`'s servers, in its order, as
/// [`ManagerBuilder::config`] describes; the servers left out go to
/// `skipped`. Each has a [connection key](ServerSpec::connection_key) made
/// of its resolved transport, so a reload of the same entry keeps its
/// client.
pub(crate) fn specs_of(
    config: &Config,
    resolver: &Resolver<'_>,
    connectors: &dyn Connectors,
    skipped: &mut Vec<(String, ServerSkip)>,
) -> Result<Vec<ServerSpec>, Error> {
    let mut specs = Vec::with_capacity(config.servers.len());
    for entry in &config.servers {
        let name = entry.name.clone();
        if !entry.policy.enabled {
            skipped.push((name, ServerSkip::Disabled));
            continue;
        }
        let made = resolver
            .resolve(entry)
            .map_err(|source| Error::Resolve {
                server: name.clone(),
                source: Arc::new(source),
            })
            .and_then(|resolved| {
                let connector =
                    connectors
                        .connector(&resolved)
                        .map_err(|source| Error::Connect {
                            server: name.clone(),
                            source,
                        })?;
                Ok((resolved, connector))
            });
        let (resolved, connector) = match made {
            Ok(made) => made,
            Err(e) if entry.policy.required => return Err(e),
            Err(e) => {
                skipped.push((name, ServerSkip::Unusable(Arc::new(e))));
                continue;
            }
        };
        let mut spec = ServerSpec::with_connector(name, connector)
            .policy(&resolved.policy)
            .connection_key(TransportKey(&resolved.transport));
        spec.description = resolved.description;
        specs.push(spec);
    }
    Ok(specs)
}

/// Hashes what a resolved entry says of reaching its server: the command
/// line, environment and directory of a process; the URL, headers and mode
/// of a remote server. Not where the entry was read from.
struct TransportKey<'a>(&'a ResolvedTransport);

impl Hash for TransportKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.0 {
            ResolvedTransport::Stdio(stdio) => {
                ("stdio", &stdio.command, &stdio.args, &stdio.env, &stdio.cwd).hash(state);
            }
            ResolvedTransport::Http { remote, mode } => {
                ("http", &remote.url, &remote.headers, mode).hash(state);
            }
            ResolvedTransport::WebSocket(remote) => {
                ("ws", &remote.url, &remote.headers).hash(state);
            }
            // A transport of a later release: its description (which hides
            // secrets, so a changed credential alone would go unnoticed).
            other => ("other", format!("{other:?}")).hash(state),
        }
    }
}
