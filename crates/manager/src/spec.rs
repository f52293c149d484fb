//! [`ServerSpec`]: one server of the fleet, as the manager needs it: a name,
//! a way to open transports to it ([`Connector`]), a client configuration,
//! and its policy (when to connect, what it may offer, how long it may
//! take, how many calls at once).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_client::{ClientConfig, Error as ClientError, TransportFactory};
use mcpwire_config::Policy;

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
}

impl fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerSpec")
            .field("name", &self.name)
            .field("connect", &self.connect)
            .field("policy", &self.policy)
            .field("max_concurrent", &self.max_concurrent)
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
        }
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
