//! [`Manager`] and [`ManagerBuilder`]: building a fleet, connecting it,
//! watching its health, reading its catalogue, closing it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use mcpwire_client::{Client, ClientConfig, Reconnect};
use mcpwire_config::validate_server_name;
use tokio::sync::{broadcast, watch};
use tokio::task::JoinSet;

use crate::catalog::{RoutedPrompt, RoutedResource, RoutedTemplate, RoutedTool};
use crate::error::Error;
use crate::event::{Event, ServerSkip};
use crate::fleet::{ConfigureClient, Fleet, Options};
use crate::health::Health;
use crate::hooks::CallHook;
use crate::naming::{Collisions, NameRules, Naming, Sanitizer};
use crate::pin_gate::PinGate;
use crate::pins::{PinPolicy, Pins};
use crate::saved::{SavedCatalogue, ServerCatalogue};
use crate::slot::{Slot, Source, lock};
use crate::spec::{ConnectPolicy, ServerSpec};
use crate::start::{Retry, start};

/// Many MCP servers as one: a [`Client`] per server, their health, one
/// catalogue of their tools, prompts and resources, and calls routed by
/// public name. Cheap to clone; clones share the fleet.
///
/// Build one with [`Manager::builder`], start the eager servers with
/// [`connect_all`](Self::connect_all), then [`tools`](Self::tools) and
/// [`call_tool`](Self::call_tool). Dropping the last clone closes every
/// client (their processes are stopped in the background);
/// [`close`](Self::close) does it and waits.
#[derive(Clone)]
pub struct Manager {
    pub(crate) fleet: Arc<Fleet>,
}

/// A [`Manager`] that does not keep its fleet alive (see
/// [`Manager::downgrade`]): for a task that serves the fleet only while
/// someone else holds it, such as a watch of its configuration files.
#[derive(Clone)]
pub struct WeakManager {
    fleet: std::sync::Weak<Fleet>,
}

impl std::fmt::Debug for WeakManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeakManager").finish_non_exhaustive()
    }
}

impl WeakManager {
    /// The manager, unless every [`Manager`] of the fleet was dropped.
    pub fn upgrade(&self) -> Option<Manager> {
        self.fleet.upgrade().map(|fleet| Manager { fleet })
    }
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("servers", &self.health_all())
            .finish_non_exhaustive()
    }
}

/// What [`Manager::connect_all`] did, server by server, in declaration
/// order.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ConnectReport {
    /// Started and listed.
    pub connected: Vec<String>,
    /// Did not start, and why.
    pub failed: Vec<(String, Error)>,
    /// Not started now: lazy and manual servers.
    pub deferred: Vec<String>,
    /// Not part of the fleet (disabled, unusable, a name that cannot be
    /// used).
    pub skipped: Vec<(String, ServerSkip)>,
}

impl ConnectReport {
    /// True when no server failed.
    pub fn all_connected(&self) -> bool {
        self.failed.is_empty()
    }
}

/// How a [`Manager`] is set up. Every default is documented on its setter.
#[must_use]
pub struct ManagerBuilder {
    /// Each spec, and whether it came from a configuration file (a bad
    /// name there is skipped and reported rather than an error).
    pub(crate) specs: Vec<(ServerSpec, bool)>,
    pub(crate) skipped: Vec<(String, ServerSkip)>,
    rules: NameRules,
    debounce: Duration,
    startup_timeout: Duration,
    client_config: ClientConfig,
    configure_client: Option<Arc<ConfigureClient>>,
    hooks: Vec<Arc<dyn CallHook>>,
    saved: Option<SavedCatalogue>,
    renames: HashMap<String, String>,
    connect: HashMap<String, ConnectPolicy>,
    event_capacity: usize,
    pins: Option<(Pins, PinPolicy)>,
    pin_policies: HashMap<String, PinPolicy>,
    drain_timeout: Duration,
}

impl std::fmt::Debug for ManagerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerBuilder")
            .field("servers", &self.specs.len())
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

impl Default for ManagerBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ManagerBuilder {
    /// No servers; every setting at its default.
    pub fn new() -> Self {
        Self {
            specs: Vec::new(),
            skipped: Vec::new(),
            rules: NameRules::default(),
            debounce: Duration::from_millis(200),
            startup_timeout: Duration::from_secs(30),
            client_config: ClientConfig::new().reconnect(Reconnect::new()),
            configure_client: None,
            hooks: Vec::new(),
            saved: None,
            renames: HashMap::new(),
            connect: HashMap::new(),
            event_capacity: 256,
            pins: None,
            pin_policies: HashMap::new(),
            drain_timeout: Duration::from_secs(10),
        }
    }

    /// Adds a server. Its name must pass
    /// [`validate_server_name`](mcpwire_config::validate_server_name) (or
    /// [`build`](Self::build) fails); servers keep the order they are added
    /// in, which decides [`Collisions::FirstWins`].
    pub fn server(mut self, spec: ServerSpec) -> Self {
        self.specs.push((spec, false));
        self
    }

    /// How tools and prompts are named. Default: [`Naming::Prefixed`]
    /// (`{server}__{tool}`).
    pub fn naming(mut self, naming: Naming) -> Self {
        self.rules.naming = naming;
        self
    }

    /// Rewrites public names to fit a host's limits. Default: none (names
    /// as the servers give them).
    pub fn sanitizer(mut self, sanitizer: Sanitizer) -> Self {
        self.rules.sanitizer = Some(sanitizer);
        self
    }

    /// What happens when two servers claim one public name. Default:
    /// [`Collisions::Error`].
    pub fn collisions(mut self, collisions: Collisions) -> Self {
        self.rules.collisions = collisions;
        self
    }

    /// How long after a server's `list_changed` (or a new session) its lists
    /// are read again; changes within it coalesce. Default: 200 ms.
    pub fn debounce(mut self, debounce: Duration) -> Self {
        self.debounce = debounce;
        self
    }

    /// The start-up timeout of servers that set none: the transport, the
    /// handshake and the first listing. Default: 30 s.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// The client configuration of servers that set none. Default:
    /// [`ClientConfig::new`] with [`Reconnect::new`] (a server that was up
    /// and is lost is reconnected, its lists read again).
    pub fn client_config(mut self, config: ClientConfig) -> Self {
        self.client_config = config;
        self
    }

    /// Adjusts each server's client configuration, given the server's
    /// name, as its client is made (at every start and restart, reloads
    /// included): after the server's own configuration or the fleet's, and
    /// its request timeout. It lets one party answer the requests the
    /// servers send their client (sampling, elicitation, roots) knowing
    /// which server sent each, by installing handlers that carry the name,
    /// as `mcpwire serve` does to relay them to its clients. Default: none.
    pub fn configure_client(
        mut self,
        configure: impl Fn(&str, ClientConfig) -> ClientConfig + Send + Sync + 'static,
    ) -> Self {
        self.configure_client = Some(Arc::new(configure));
        self
    }

    /// Adds a hook run around every routed tool call, after those added
    /// before it.
    pub fn hook(mut self, hook: impl CallHook) -> Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// Lists of lazy servers to advertise until they are started.
    pub fn saved_catalogue(mut self, saved: SavedCatalogue) -> Self {
        self.saved = Some(saved);
        self
    }

    /// Renames server `from` to `to` (for a configuration name that cannot
    /// prefix tool names, such as `"My Server"`).
    pub fn rename(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.renames.insert(from.into(), to.into());
        self
    }

    /// Sets the connect policy of server `name` (after any rename), such as
    /// a configuration file's server that should start lazily.
    pub fn connect_policy(mut self, name: impl Into<String>, policy: ConnectPolicy) -> Self {
        self.connect.insert(name.into(), policy);
        self
    }

    /// Holds every listing against `pins` (see [`Pins`]): definitions not
    /// pinned yet are pinned (trust on first use), and one that changed
    /// since it was approved is dealt with as `policy` says, for servers
    /// without a policy of their own ([`pin_policy`](Self::pin_policy)).
    /// What is seen comes as [`Event::Pinned`]. Default: no pins.
    pub fn pins(mut self, pins: Pins, policy: PinPolicy) -> Self {
        self.pins = Some((pins, policy));
        self
    }

    /// Sets the pin policy of server `name` (after any rename).
    pub fn pin_policy(mut self, name: impl Into<String>, policy: PinPolicy) -> Self {
        self.pin_policies.insert(name.into(), policy);
        self
    }

    /// How long the calls under way on a server leaving the fleet
    /// ([`Manager::remove`], [`Manager::replace`], [`Manager::reload`]) may
    /// take before its client is closed under them (they then fail).
    /// Default: 10 s.
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// How many events wait for a slow receiver before the oldest are
    /// dropped (it sees `Lagged`). Default: 256.
    pub fn event_capacity(mut self, capacity: usize) -> Self {
        self.event_capacity = capacity;
        self
    }

    /// The manager. Nothing is started yet.
    ///
    /// Fails on a server name that cannot prefix tool names
    /// ([`Error::InvalidServerName`]) and on two servers of one name
    /// ([`Error::DuplicateServer`]). A configuration file's server with a
    /// bad name is skipped and reported instead, unless it is required.
    pub fn build(mut self) -> Result<Manager, Error> {
        let mut saved = self.saved.take().unwrap_or_default();
        let specs = prepare(
            std::mem::take(&mut self.specs),
            &self.renames,
            &self.connect,
            &mut self.skipped,
        )?;
        let slots = specs
            .into_iter()
            .map(|spec| {
                let lists: Option<ServerCatalogue> = match spec.connect {
                    ConnectPolicy::Lazy => saved.servers.remove(&spec.name),
                    _ => None,
                };
                Arc::new(Slot::new(spec, lists))
            })
            .collect();
        let options = Options {
            rules: self.rules,
            debounce: self.debounce,
            startup_timeout: self.startup_timeout,
            client_config: self.client_config,
            configure_client: self.configure_client,
            hooks: self.hooks,
            pins: self
                .pins
                .map(|(pins, policy)| PinGate::new(pins, policy, self.pin_policies)),
            drain_timeout: self.drain_timeout,
            renames: self.renames,
            connect: self.connect,
        };
        let fleet = Fleet::new(slots, options, self.skipped, self.event_capacity);
        Ok(Manager {
            fleet: Arc::new(fleet),
        })
    }
}

/// The specs of a fleet, as built or reloaded: each renamed and given its
/// connect policy as the builder says; a disabled one, and one from a
/// configuration file (`true` beside it) whose name cannot be used, left out
/// into `skipped`. Fails on a bad name from code (or of a required server)
/// and on two servers of one name.
pub(crate) fn prepare(
    specs: Vec<(ServerSpec, bool)>,
    renames: &HashMap<String, String>,
    connect: &HashMap<String, ConnectPolicy>,
    skipped: &mut Vec<(String, ServerSkip)>,
) -> Result<Vec<ServerSpec>, Error> {
    let mut names = HashSet::new();
    let mut kept = Vec::with_capacity(specs.len());
    for (mut spec, from_config) in specs {
        if let Some(to) = renames.get(&spec.name) {
            spec.name.clone_from(to);
        }
        if !spec.policy.enabled {
            skipped.push((spec.name, ServerSkip::Disabled));
            continue;
        }
        if let Err(e) = validate_server_name(&spec.name) {
            if from_config && !spec.policy.required {
                skipped.push((spec.name, ServerSkip::InvalidName(e)));
                continue;
            }
            return Err(Error::InvalidServerName {
                name: spec.name,
                source: e,
            });
        }
        if !names.insert(spec.name.clone()) {
            return Err(Error::DuplicateServer { name: spec.name });
        }
        if let Some(policy) = connect.get(&spec.name) {
            spec.connect = *policy;
        }
        kept.push(spec);
    }
    Ok(kept)
}

impl Manager {
    /// The pins as they are now, with what was pinned since the manager
    /// was built (to [`save`](Pins::save)); `None` without pins.
    pub fn pins(&self) -> Option<Pins> {
        self.fleet.options.pins.as_ref().map(PinGate::pins)
    }

    /// Approves server `name`'s tools and prompts as they are now listed:
    /// what its pins held back comes back into the catalogue. Without pins
    /// ([`ManagerBuilder::pins`]) this changes nothing.
    pub fn approve(&self, name: &str) -> Result<(), Error> {
        let slot = self.slot(name)?;
        self.fleet.approve(&slot);
        Ok(())
    }

    /// A handle that does not keep the fleet alive.
    pub fn downgrade(&self) -> WeakManager {
        WeakManager {
            fleet: Arc::downgrade(&self.fleet),
        }
    }

    /// True once [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.fleet.is_closed()
    }

    /// Resolves when the manager is closed ([`close`](Self::close)) or its
    /// last clone dropped. It holds no clone itself.
    pub fn closed(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut shutdown = self.fleet.shutdown.subscribe();
        async move {
            // An error is the fleet dropped: closed too.
            let _ = shutdown.wait_for(|closed| *closed).await;
        }
    }

    /// A builder with every default.
    pub fn builder() -> ManagerBuilder {
        ManagerBuilder::new()
    }

    /// Starts every eager server, all at once, each within its own
    /// start-up timeout, and returns which started and which failed, and
    /// why. A failed server is reported, not fatal, unless it is
    /// [required](ServerSpec::required): then every server is closed and
    /// this fails with [`Error::RequiredServerFailed`]. A server already
    /// started is counted as connected; a failed one is tried again.
    ///
    /// The first call also publishes an [`Event::ServerSkipped`] for each
    /// configured server left out.
    pub async fn connect_all(&self) -> Result<ConnectReport, Error> {
        let fleet = &self.fleet;
        fleet.publish_skipped_servers();
        let mut report = ConnectReport {
            skipped: fleet.skipped_servers(),
            ..ConnectReport::default()
        };
        let eager: Vec<Arc<Slot>> = fleet
            .roster()
            .slots
            .iter()
            .filter(|s| {
                let eager = s.spec.connect == ConnectPolicy::Eager;
                if !eager {
                    report.deferred.push(s.name().to_owned());
                }
                eager
            })
            .cloned()
            .collect();
        let outcomes = self.start_all(eager).await;
        for (slot, outcome) in outcomes {
            match outcome {
                Ok(()) => report.connected.push(slot.name().to_owned()),
                Err(e) if slot.spec.policy.required => {
                    self.close().await;
                    return Err(Error::RequiredServerFailed {
                        server: slot.name().to_owned(),
                        source: Arc::new(e),
                    });
                }
                Err(e) => report.failed.push((slot.name().to_owned(), e)),
            }
        }
        Ok(report)
    }

    /// Starts every failed server again (all at once); the report says
    /// which came back.
    pub async fn retry_failed(&self) -> ConnectReport {
        let failed = self
            .fleet
            .roster()
            .slots
            .iter()
            .filter(|s| s.health().is_failed())
            .cloned()
            .collect();
        let mut report = ConnectReport::default();
        for (slot, outcome) in self.start_all(failed).await {
            match outcome {
                Ok(()) => report.connected.push(slot.name().to_owned()),
                Err(e) => report.failed.push((slot.name().to_owned(), e)),
            }
        }
        report
    }

    /// Starts `slots` in parallel; outcomes in their order.
    pub(crate) async fn start_all(
        &self,
        slots: Vec<Arc<Slot>>,
    ) -> Vec<(Arc<Slot>, Result<(), Error>)> {
        let mut set = JoinSet::new();
        for (i, slot) in slots.iter().enumerate() {
            let (fleet, slot) = (self.fleet.clone(), slot.clone());
            set.spawn(async move { (i, start(&fleet, &slot, Retry::Failed).await.map(drop)) });
        }
        let mut outcomes: Vec<Option<Result<(), Error>>> = vec![None; slots.len()];
        while let Some(joined) = set.join_next().await {
            if let Ok((i, outcome)) = joined {
                outcomes[i] = Some(outcome);
            }
        }
        slots
            .into_iter()
            .zip(outcomes)
            .map(|(slot, o)| (slot, o.unwrap_or(Err(Error::Closed))))
            .collect()
    }

    /// Starts server `name` now, whatever its connect policy (a failed one
    /// is tried again); returns once it is ready or failed.
    pub async fn connect(&self, name: &str) -> Result<(), Error> {
        let slot = self.slot(name)?;
        start(&self.fleet, &slot, Retry::Failed).await.map(drop)
    }

    /// Closes server `name`'s client: its tools leave the catalogue, its
    /// health becomes `Disconnected`. A later call or
    /// [`connect`](Self::connect) starts it again.
    pub async fn disconnect(&self, name: &str) -> Result<(), Error> {
        let slot = self.slot(name)?;
        let _one = slot.starting.lock().await;
        close_slot(&self.fleet, &slot).await;
        Ok(())
    }

    /// Closes every client, in parallel, and waits for them (and their
    /// processes) to be done. Calls fail with [`Error::Closed`] afterwards.
    pub async fn close(&self) {
        let fleet = &self.fleet;
        fleet.shutdown.send_replace(true);
        let mut set = JoinSet::new();
        for slot in &fleet.roster().slots {
            let (fleet, slot) = (fleet.clone(), slot.clone());
            set.spawn(async move { close_slot(&fleet, &slot).await });
        }
        while set.join_next().await.is_some() {}
    }

    pub(crate) fn slot(&self, name: &str) -> Result<Arc<Slot>, Error> {
        self.fleet.slot(name).ok_or_else(|| Error::UnknownServer {
            name: name.to_owned(),
        })
    }

    /// The servers' names, in declaration order.
    pub fn servers(&self) -> Vec<String> {
        self.fleet
            .roster()
            .slots
            .iter()
            .map(|s| s.name().to_owned())
            .collect()
    }

    /// The servers left out of the fleet, and why: those of the build, as
    /// the fleet's changes leave them. A [reload](Self::reload) makes it the
    /// servers its specs leave out (a server fixed in its file is no longer
    /// listed, one newly disabled is); [`add`](Self::add) and
    /// [`replace`](Self::replace) take the server they bring in off it, or
    /// put it on if they leave it out.
    pub fn skipped_servers(&self) -> Vec<(String, ServerSkip)> {
        self.fleet.skipped_servers()
    }

    /// Server `name`'s health.
    pub fn health(&self, name: &str) -> Option<Health> {
        self.fleet.slot(name).map(|s| s.health())
    }

    /// Every server's health, in declaration order.
    pub fn health_all(&self) -> Vec<(String, Health)> {
        self.fleet
            .roster()
            .slots
            .iter()
            .map(|s| (s.name().to_owned(), s.health()))
            .collect()
    }

    /// A receiver that sees every change of server `name`'s health.
    pub fn watch_health(&self, name: &str) -> Option<watch::Receiver<Health>> {
        self.fleet.slot(name).map(|s| s.health.subscribe())
    }

    /// Server `name`'s client, while it has one: for what the manager
    /// does not route (subscriptions, completions, logging levels). Calls
    /// made on it directly skip the manager's filters, hooks and
    /// concurrency cap.
    pub fn client(&self, name: &str) -> Option<Client> {
        self.fleet.slot(name).and_then(|s| s.client())
    }

    /// The fleet's events: health changes, catalogue changes, skipped
    /// servers and items. A receiver sees what happens after it was taken.
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.fleet.subscribe()
    }

    /// A counter bumped whenever the catalogue is rebuilt.
    pub fn watch_catalogue(&self) -> watch::Receiver<u64> {
        self.fleet.watch_catalogue()
    }

    /// Every tool of the catalogue, servers in declaration order. Fails
    /// with [`Error::Collision`] while two servers claim one name under
    /// [`Collisions::Error`].
    pub fn tools(&self) -> Result<Vec<RoutedTool>, Error> {
        self.fleet.catalog().tools().map(<[_]>::to_vec)
    }

    /// Every prompt of the catalogue; fails as [`tools`](Self::tools) does.
    pub fn prompts(&self) -> Result<Vec<RoutedPrompt>, Error> {
        self.fleet.catalog().prompts().map(<[_]>::to_vec)
    }

    /// Every resource of the catalogue.
    pub fn resources(&self) -> Vec<RoutedResource> {
        self.fleet.catalog().resources().to_vec()
    }

    /// Every resource template of the catalogue.
    pub fn resource_templates(&self) -> Vec<RoutedTemplate> {
        self.fleet.catalog().templates().cloned().collect()
    }

    /// Where public tool name `name` goes: its server and the tool's own
    /// name. Fails as a call would (unknown, with the closest names;
    /// filtered; collision).
    pub fn route(&self, name: &str) -> Result<(String, String), Error> {
        let routing = self.fleet.routing();
        let route = routing.catalog.route_tool(name)?;
        let server = routing.roster.slots[route.server].name().to_owned();
        Ok((server, route.name.clone()))
    }

    /// Where public prompt name `name` goes: its server and the prompt's own
    /// name, as [`route`](Self::route) says for a tool, without copying the
    /// catalogue's prompts.
    pub fn route_prompt(&self, name: &str) -> Result<(String, String), Error> {
        let routing = self.fleet.routing();
        let route = routing.catalog.route_prompt(name)?;
        let server = routing.roster.slots[route.server].name().to_owned();
        Ok((server, route.name.clone()))
    }

    /// The server a read of `uri` goes to: the one that lists it, or whose
    /// template matches it, as [`read_resource`](Self::read_resource)
    /// decides. Fails as that read would.
    pub fn route_resource(&self, uri: &str) -> Result<String, Error> {
        let routing = self.fleet.routing();
        let server = routing.catalog.route_resource(uri)?;
        Ok(routing.roster.slots[server].name().to_owned())
    }

    /// What every server offers (or offered, for a lazy server not started
    /// yet), unfiltered: save it for the next start's lazy servers.
    pub fn save_catalogue(&self) -> SavedCatalogue {
        let mut saved = SavedCatalogue::new();
        for slot in &self.fleet.roster().slots {
            let lists = lock(&slot.lists);
            if lists.source != Source::None {
                saved
                    .servers
                    .insert(slot.name().to_owned(), lists.lists.clone());
            }
        }
        saved
    }
}

/// Closes `slot`'s client, if it has one.
pub(crate) async fn close_slot(fleet: &Fleet, slot: &Slot) {
    slot.stop_monitor();
    let client = slot.set_client(None);
    if let Some(client) = client {
        client.close().await;
    }
    fleet.drop_lists(slot);
    fleet.set_health(slot, Health::Disconnected);
}
