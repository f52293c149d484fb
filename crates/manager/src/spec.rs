//! [`ServerSpec`]: one server of the fleet, as the manager needs it: a name,
//! a way to open transports to it ([`Connector`]), a client configuration,
//! and its policy (when to connect, what it may offer, how long it may
//! take, how many calls at once).

use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use mcpwire_client::{ClientConfig, Error as ClientError, TransportFactory};
use mcpwire_config::Policy;

use crate::pins::PinPolicy;

/// Makes a [`TransportFactory`] for a server: called once for each client
/// the manager makes for it (the first connection, and a retry of a failed
/// server), and the factory then opens a transport per (re)connection.
///
/// The facade's `mcpwire::manager::Transports` makes these from
/// configuration entries (stdio commands, HTTP URLs sharing one connection
/// pool); tests make them from in-memory transports.
pub type Connector = Arc<dyn Fn() -> Result<TransportFactory, ClientError> + Send + Sync>;

/// When a server is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ConnectPolicy {
    /// By [`Manager::connect_all`](crate::Manager::connect_all), all eager
    /// servers in parallel, each within its own start-up timeout. The
    /// default.
    #[default]
    Eager,
    /// On the first call routed to it (or [`Manager::connect`](crate::Manager::connect)).
    /// Until then its tools come from a
    /// [saved catalogue](crate::ManagerBuilder::saved_catalogue), if one
    /// has it; a prefixed name (`{server}__{tool}`) routes to it even
    /// without one.
    Lazy,
    /// Only by [`Manager::connect`](crate::Manager::connect); a call to it
    /// before that fails with [`Error::NotConnected`](crate::Error::NotConnected).
    Manual,
}

/// One server of the fleet.
#[derive(Clone)]
#[must_use]
pub struct ServerSpec {
    pub(crate) name: String,
    pub(crate) connector: Connector,
    pub(crate) client_config: Option<ClientConfig>,
    pub(crate) connect: ConnectPolicy,
    pub(crate) policy: Policy,
    pub(crate) max_concurrent: Option<usize>,
    pub(crate) description: Option<String>,
    /// What the connector reaches and how, as a hash (see
    /// [`ServerSpec::connection_key`]): never shown, it may cover secrets.
    pub(crate) connection_key: Option<u64>,
    pub(crate) pin_policy: Option<PinPolicy>,
}

impl fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerSpec")
            .field("name", &self.name)
            .field("connect", &self.connect)
            .field("policy", &self.policy)
            .field("max_concurrent", &self.max_concurrent)
            .field("pin_policy", &self.pin_policy)
            .finish_non_exhaustive()
    }
}

impl ServerSpec {
    /// A server named `name`, reached through `connector`, with the default
    /// policy: eager, not required, every tool offered, the manager's
    /// start-up timeout and client configuration, no concurrency cap.
    pub fn new(
        name: impl Into<String>,
        connector: impl Fn() -> Result<TransportFactory, ClientError> + Send + Sync + 'static,
    ) -> Self {
        Self::with_connector(name, Arc::new(connector))
    }

    /// As [`new`](Self::new), with a shared [`Connector`].
    pub fn with_connector(name: impl Into<String>, connector: Connector) -> Self {
        Self {
            name: name.into(),
            connector,
            client_config: None,
            connect: ConnectPolicy::Eager,
            policy: Policy::default(),
            max_concurrent: None,
            description: None,
            connection_key: None,
            pin_policy: None,
        }
    }

    /// Says what its connector reaches and how (a command line and its
    /// environment, a URL and its headers), for
    /// [`Manager::reload`](crate::Manager::reload) to tell an unchanged
    /// server from a changed one: connectors are closures, which cannot be
    /// compared, so without a key two specs reach the same server only if
    /// they share one [`Connector`]. Servers from configuration files get
    /// one from their resolved entry. Only a hash of `key` is kept, so a
    /// credential in it is never shown.
    pub fn connection_key(mut self, key: impl Hash) -> Self {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        self.connection_key = Some(hasher.finish());
        self
    }

    /// Its own pin policy, instead of the manager's
    /// ([`ManagerBuilder::pins`](crate::ManagerBuilder::pins)). Default: the
    /// one [`ManagerBuilder::pin_policy`](crate::ManagerBuilder::pin_policy)
    /// set for its name, else the manager's.
    pub fn pin_policy(mut self, policy: PinPolicy) -> Self {
        self.pin_policy = Some(policy);
        self
    }

    /// Whether `other` describes this server exactly as this spec does, so
    /// that a reload keeps its client (its session, its calls under way).
    ///
    /// A field-by-field comparison of everything that shapes the server's
    /// client or what the fleet offers of it: its name, connect policy,
    /// entry policy (enabled, required, timeouts, tool lists, trust),
    /// concurrency cap, description and pin policy must be equal, and it
    /// must reach the same server the same way. That last part cannot be
    /// read off a [`Connector`] (a closure) nor a [`ClientConfig`] (which
    /// holds handlers): two specs that both have a
    /// [`connection_key`](Self::connection_key) compare their keys, which
    /// stand for the connector and the client configuration together;
    /// otherwise they must share one connector and neither have a client
    /// configuration of its own. Erring towards "changed" costs a
    /// reconnection; erring towards "unchanged" would keep a client that
    /// reaches the wrong server.
    pub(crate) fn same_as(&self, other: &ServerSpec) -> bool {
        let reach = match (self.connection_key, other.connection_key) {
            (Some(a), Some(b)) => a == b,
            _ => {
                Arc::ptr_eq(&self.connector, &other.connector)
                    && self.client_config.is_none()
                    && other.client_config.is_none()
            }
        };
        reach
            && self.name == other.name
            && self.connect == other.connect
            && self.policy == other.policy
            && self.max_concurrent == other.max_concurrent
            && self.description == other.description
            && self.pin_policy == other.pin_policy
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Takes every setting of a configuration entry's [`Policy`]: enabled,
    /// required, the start-up and request timeouts, the tool lists, trust.
    pub fn policy(mut self, policy: &Policy) -> Self {
        self.policy = policy.clone();
        self
    }

    /// When it is connected. Default: [`ConnectPolicy::Eager`].
    pub fn connect(mut self, connect: ConnectPolicy) -> Self {
        self.connect = connect;
        self
    }

    /// Whether it is part of the fleet at all. Default: true.
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.policy.enabled = enabled;
        self
    }

    /// Whether its failure to start fails
    /// [`connect_all`](crate::Manager::connect_all) (and closes the fleet).
    /// Default: false (it is reported, and the others go on).
    pub fn required(mut self, required: bool) -> Self {
        self.policy.required = required;
        self
    }

    /// How long starting it may take: the transport, the handshake and the
    /// first listing of its catalogue. Default: the manager's
    /// ([`ManagerBuilder::startup_timeout`](crate::ManagerBuilder::startup_timeout)).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.policy.startup_timeout = Some(timeout);
        self
    }

    /// How long one request to it may take (its client's
    /// [`request_timeout`](ClientConfig::request_timeout)). Default: the
    /// client configuration's.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.policy.request_timeout = Some(timeout);
        self
    }

    /// Only these tools are listed and callable.
    pub fn include_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.policy.include_tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// These tools are never listed nor callable, even if included.
    pub fn exclude_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.policy.exclude_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Whether its calls need no confirmation (given to hooks as
    /// [`CallInfo::trusted`](crate::CallInfo::trusted)). Default: false.
    pub fn trust(mut self, trust: bool) -> Self {
        self.policy.trust = trust;
        self
    }

    /// At most `n` calls routed to it at once; more wait for a slot (a
    /// call's timeout runs only once it is sent). Default: no cap.
    pub fn max_concurrent(mut self, n: usize) -> Self {
        self.max_concurrent = Some(n.max(1));
        self
    }

    /// Its client's configuration, instead of the manager's
    /// ([`ManagerBuilder::client_config`](crate::ManagerBuilder::client_config)).
    pub fn client_config(mut self, config: ClientConfig) -> Self {
        self.client_config = Some(config);
        self
    }

    /// A human description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Whether tool `name` may be listed and called.
    pub(crate) fn allows_tool(&self, name: &str) -> bool {
        self.policy.allows_tool(name)
    }
}
