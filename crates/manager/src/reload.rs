//! A fleet that changes at run time: [`Manager::add`],
//! [`Manager::remove`], [`Manager::replace`] and [`Manager::reload`] (the
//! whole wanted fleet, applied as the difference; from configuration files
//! with [`Manager::reload_config`]).
//!
//! Each change is planned and applied in one step under the fleet's change
//! lock (no await inside): the new roster and its catalogue are swapped in
//! together, with one `watch_catalogue` bump and one
//! [`Event::CatalogueChanged`] for the whole change. A server that leaves is
//! retired in that same step, so no call enters it afterwards, even one
//! routed by a catalogue read just before; the calls already under way are
//! waited for (within the drain timeout) before its client is closed.
//! Servers the change leaves alone keep their slot: their client, session,
//! calls and health are not touched.

use std::sync::Arc;

use mcpwire_config::{Config, Resolver};
use tokio::task::JoinSet;

use crate::config::{Connectors, specs_of};
use crate::error::Error;
use crate::event::{Event, ServerChange, ServerSkip};
use crate::fleet::{Fleet, Roster};
use crate::manager::{ConnectReport, Manager, close_slot, prepare};
use crate::slot::{Slot, Source, lock};
use crate::spec::{ConnectPolicy, ServerSpec};

/// What a change of the fleet did ([`Manager::add`], [`Manager::remove`],
/// [`Manager::replace`], [`Manager::reload`]), server by server.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct FleetReport {
    /// Servers that joined the fleet.
    pub added: Vec<String>,
    /// Servers that left it.
    pub removed: Vec<String>,
    /// Servers whose spec changed: a new client under the same name.
    pub replaced: Vec<String>,
    /// Servers of the wanted fleet left as they were (their client,
    /// session and calls untouched).
    pub unchanged: Vec<String>,
    /// Servers that left (removed or replaced) with calls still under way
    /// when the drain timeout was over: their client was closed under them.
    pub cut_short: Vec<String>,
    /// How the added and replaced servers started: eager ones are started
    /// at once (each within its start-up timeout, a failure reported here,
    /// never fatal, even for a required server), lazy and manual ones are
    /// deferred. Its `skipped` lists the wanted servers left out (disabled,
    /// or from a configuration file and not usable).
    pub connect: ConnectReport,
}

impl FleetReport {
    /// True when the fleet did not change.
    pub fn is_unchanged(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.replaced.is_empty()
    }
}

/// What a change asks for.
enum Wanted {
    Add(ServerSpec),
    Remove(String),
    Replace(ServerSpec),
    /// The whole fleet: what is not in it leaves.
    All(Vec<ServerSpec>),
}

/// A change, planned against the roster as it was.
#[derive(Default)]
struct Planned {
    report: FleetReport,
    /// Slots that left the fleet (removed, or replaced by a new one).
    retired: Vec<Arc<Slot>>,
    /// Slots that joined it (added, or replacing an old one).
    joined: Vec<Arc<Slot>>,
}

impl Manager {
    /// Adds server `spec` to the running fleet: its part joins the
    /// catalogue, an [`Event::ServerChanged`] says so, and an eager server
    /// is started at once (the report says how that went; a failure is
    /// reported, not returned). A disabled spec changes nothing and is
    /// listed as skipped.
    ///
    /// Fails on a name already in the fleet ([`Error::DuplicateServer`]),
    /// a name that cannot prefix tool names ([`Error::InvalidServerName`]),
    /// and on a closed manager.
    pub async fn add(&self, spec: ServerSpec) -> Result<FleetReport, Error> {
        self.change(Wanted::Add(spec)).await
    }

    /// Removes server `name` from the fleet: its part leaves the catalogue
    /// at once and no call goes to it any more (a call routed to it just
    /// before fails with [`Error::Removed`]); the calls already under way
    /// finish, or are cut short when the
    /// [drain timeout](crate::ManagerBuilder::drain_timeout) is over; then
    /// its client is closed and this returns.
    ///
    /// Fails on a name not in the fleet ([`Error::UnknownServer`]).
    pub async fn remove(&self, name: &str) -> Result<FleetReport, Error> {
        self.change(Wanted::Remove(name.to_owned())).await
    }

    /// Puts `spec` in the place of the server of its name: a spec that
    /// describes the server exactly as before changes nothing (see
    /// [`ServerSpec::connection_key`]); otherwise the new server takes the
    /// old one's place in the order, the old one leaves as
    /// [`remove`](Self::remove) describes, and the new one starts as
    /// [`add`](Self::add) describes. Until the new one has listed, the old
    /// one's tools stay advertised (as a saved catalogue is), unless it is
    /// manual; a call to one of them starts it and is routed by what it
    /// lists. A disabled spec removes the server.
    ///
    /// Fails on a name not in the fleet ([`Error::UnknownServer`]).
    pub async fn replace(&self, spec: ServerSpec) -> Result<FleetReport, Error> {
        self.change(Wanted::Replace(spec)).await
    }

    /// Makes the fleet `specs`, changing only what differs: servers not in
    /// it are removed, new ones added, changed ones replaced, as
    /// [`remove`](Self::remove), [`add`](Self::add) and
    /// [`replace`](Self::replace) do, all in one step (one catalogue
    /// change, one `watch_catalogue` bump). Unchanged servers keep their
    /// client, session and calls under way. The order of `specs` becomes
    /// the fleet's. The builder's renames and connect policies apply to
    /// `specs` as to those it was built with.
    ///
    /// Fails, changing nothing, as the builder's
    /// [`build`](crate::ManagerBuilder::build) does: on a name that cannot
    /// be used and on two servers of one name.
    pub async fn reload(&self, specs: Vec<ServerSpec>) -> Result<FleetReport, Error> {
        let specs = specs.into_iter().map(|s| (s, false)).collect();
        self.reload_prepared(specs, Vec::new()).await
    }

    /// Makes the fleet the servers of `config` (configuration files read
    /// again), as [`reload`](Self::reload) does: each entry becomes a spec
    /// as [`ManagerBuilder::config`](crate::ManagerBuilder::config) makes it
    /// (the entries left out are listed in the report's `connect.skipped`,
    /// each also an [`Event::ServerSkipped`]). An entry whose command line,
    /// environment, URL, headers or policy is unchanged keeps its client.
    ///
    /// The entries are resolved before this returns its future, so the
    /// future does not hold `resolver` (which need not be `Sync`) and can
    /// be spawned.
    pub fn reload_config(
        &self,
        config: &Config,
        resolver: &Resolver<'_>,
        connectors: &dyn Connectors,
    ) -> impl Future<Output = Result<FleetReport, Error>> + Send + '_ {
        let mut skipped = Vec::new();
        let specs = specs_of(config, resolver, connectors, &mut skipped);
        async move {
            let specs = specs?.into_iter().map(|s| (s, true)).collect();
            self.reload_prepared(specs, skipped).await
        }
    }

    async fn reload_prepared(
        &self,
        specs: Vec<(ServerSpec, bool)>,
        mut skipped: Vec<(String, ServerSkip)>,
    ) -> Result<FleetReport, Error> {
        let options = &self.fleet.options;
        let specs = prepare(specs, &options.renames, &options.connect, &mut skipped)?;
        for (server, reason) in &skipped {
            self.fleet.publish(Event::ServerSkipped {
                server: server.clone(),
                reason: reason.clone(),
            });
        }
        let mut report = self.change(Wanted::All(specs)).await?;
        self.fleet.note_skipped(&[], &skipped, true);
        report.connect.skipped = skipped;
        Ok(report)
    }

    /// Plans and applies `wanted`, then closes the slots that left and
    /// starts the eager ones that joined, side by side.
    async fn change(&self, wanted: Wanted) -> Result<FleetReport, Error> {
        let fleet = &self.fleet;
        if fleet.is_closed() {
            return Err(Error::Closed);
        }
        let options = &fleet.options;
        let mut skipped = Vec::new();
        let wanted = match wanted {
            Wanted::Add(spec) => {
                match prepare(
                    vec![(spec, false)],
                    &options.renames,
                    &options.connect,
                    &mut skipped,
                )?
                .pop()
                {
                    Some(spec) => Wanted::Add(spec),
                    None => {
                        fleet.note_skipped(&[], &skipped, false);
                        return Ok(skipped_only(skipped));
                    }
                }
            }
            Wanted::Replace(spec) => {
                let name = options
                    .renames
                    .get(&spec.name)
                    .unwrap_or(&spec.name)
                    .clone();
                match prepare(
                    vec![(spec, false)],
                    &options.renames,
                    &options.connect,
                    &mut skipped,
                )?
                .pop()
                {
                    Some(spec) => Wanted::Replace(spec),
                    None => Wanted::Remove(name),
                }
            }
            other => other,
        };
        let mut outcome: Result<Planned, Error> = Ok(Planned::default());
        fleet.change(|roster| match plan(fleet, roster, wanted) {
            Ok((new_roster, planned)) => {
                let changed = planned.changed();
                outcome = Ok(planned);
                new_roster.map(|r| (Arc::new(r), changed, ()))
            }
            Err(e) => {
                outcome = Err(e);
                None
            }
        });
        let Planned {
            mut report,
            retired,
            joined,
        } = outcome?;
        let names: Vec<String> = joined.iter().map(|s| s.name().to_owned()).collect();
        fleet.note_skipped(&names, &skipped, false);
        report.connect.skipped = skipped;

        let eager: Vec<Arc<Slot>> = joined
            .into_iter()
            .filter(|slot| {
                let eager = slot.spec.connect == ConnectPolicy::Eager;
                if !eager {
                    report.connect.deferred.push(slot.name().to_owned());
                }
                eager
            })
            .collect();
        let (started, cut_short) = tokio::join!(self.start_all(eager), retire_all(fleet, retired));
        for (slot, outcome) in started {
            match outcome {
                Ok(()) => report.connect.connected.push(slot.name().to_owned()),
                Err(e) => report.connect.failed.push((slot.name().to_owned(), e)),
            }
        }
        report.cut_short = cut_short;
        Ok(report)
    }
}

impl Planned {
    /// The servers whose part of the catalogue changed.
    fn changed(&self) -> Vec<String> {
        let r = &self.report;
        r.added
            .iter()
            .chain(&r.removed)
            .chain(&r.replaced)
            .cloned()
            .collect()
    }
}

/// A report of a change that changed nothing but leave `skipped` out.
fn skipped_only(skipped: Vec<(String, ServerSkip)>) -> FleetReport {
    let mut report = FleetReport::default();
    report.connect.skipped = skipped;
    report
}

/// Plans `wanted` against `roster`: the new roster (`None` when nothing
/// changes) and what changed. Runs under the change lock: retires the slots
/// that leave and publishes one [`Event::ServerChanged`] per server.
fn plan(
    fleet: &Fleet,
    roster: &Roster,
    wanted: Wanted,
) -> Result<(Option<Roster>, Planned), Error> {
    let mut planned = Planned::default();
    let unknown = |name: &str| Error::UnknownServer {
        name: name.to_owned(),
    };
    let slots: Vec<Arc<Slot>> = match wanted {
        Wanted::Add(spec) => {
            if roster.get(&spec.name).is_some() {
                return Err(Error::DuplicateServer { name: spec.name });
            }
            let mut slots = roster.slots.clone();
            slots.push(planned.join(spec));
            slots
        }
        Wanted::Remove(name) => {
            let old = roster.get(&name).ok_or_else(|| unknown(&name))?;
            planned.retire(old, ServerChange::Removed);
            let keep = |s: &&Arc<Slot>| !Arc::ptr_eq(s, old);
            roster.slots.iter().filter(keep).cloned().collect()
        }
        Wanted::Replace(spec) => {
            let old = roster.get(&spec.name).ok_or_else(|| unknown(&spec.name))?;
            if old.spec.same_as(&spec) {
                planned.report.unchanged.push(spec.name);
                return Ok((None, planned));
            }
            let new = planned.replace(old, spec);
            let swap = |s: &Arc<Slot>| {
                if Arc::ptr_eq(s, old) {
                    new.clone()
                } else {
                    s.clone()
                }
            };
            roster.slots.iter().map(swap).collect()
        }
        Wanted::All(specs) => {
            let mut slots = Vec::with_capacity(specs.len());
            for spec in specs {
                let slot = match roster.get(&spec.name) {
                    None => planned.join(spec),
                    Some(old) if old.spec.same_as(&spec) => {
                        planned.report.unchanged.push(spec.name);
                        old.clone()
                    }
                    Some(old) => planned.replace(old, spec),
                };
                slots.push(slot);
            }
            for old in &roster.slots {
                if !slots.iter().any(|s| s.name() == old.name()) {
                    planned.retire(old, ServerChange::Removed);
                }
            }
            slots
        }
    };
    if planned.report.is_unchanged() {
        return Ok((None, planned));
    }
    for slot in &planned.retired {
        slot.retire();
    }
    for (server, change) in planned.events() {
        tracing::info!(server, ?change, "fleet changed");
        fleet.publish(Event::ServerChanged { server, change });
    }
    Ok((Some(Roster::new(slots)), planned))
}

impl Planned {
    /// A new slot for `spec`, joining the fleet.
    fn join(&mut self, spec: ServerSpec) -> Arc<Slot> {
        self.report.added.push(spec.name.clone());
        let slot = Arc::new(Slot::new(spec, None));
        self.joined.push(slot.clone());
        slot
    }

    fn retire(&mut self, old: &Arc<Slot>, change: ServerChange) {
        if change == ServerChange::Removed {
            self.report.removed.push(old.name().to_owned());
        }
        self.retired.push(old.clone());
    }

    /// A new slot for `spec` in `old`'s place, advertising what `old` listed
    /// meanwhile (as a saved catalogue), unless it is manual.
    fn replace(&mut self, old: &Arc<Slot>, spec: ServerSpec) -> Arc<Slot> {
        self.report.replaced.push(spec.name.clone());
        self.retire(old, ServerChange::Replaced);
        let lists = {
            let current = lock(&old.lists);
            (current.source != Source::None && spec.connect != ConnectPolicy::Manual)
                .then(|| current.lists.clone())
        };
        let slot = Arc::new(Slot::new(spec, lists));
        self.joined.push(slot.clone());
        slot
    }

    /// One event per server that changed, removed ones first.
    fn events(&self) -> Vec<(String, ServerChange)> {
        let r = &self.report;
        let tag = |names: &[String], change| {
            names
                .iter()
                .map(move |n| (n.clone(), change))
                .collect::<Vec<_>>()
        };
        let mut events = tag(&r.removed, ServerChange::Removed);
        events.extend(tag(&r.replaced, ServerChange::Replaced));
        events.extend(tag(&r.added, ServerChange::Added));
        events
    }
}

/// Closes every slot that left, side by side, each once its calls under
/// way are done or the drain timeout is over; returns the names of those
/// whose calls were cut short.
async fn retire_all(fleet: &Arc<Fleet>, retired: Vec<Arc<Slot>>) -> Vec<String> {
    let timeout = fleet.options.drain_timeout;
    let mut set = JoinSet::new();
    for slot in retired {
        let fleet = fleet.clone();
        set.spawn(async move {
            let drained = slot.drained(timeout).await;
            // A start under way ends first (within its start-up timeout),
            // so the client it makes is the one closed here.
            let _one = slot.starting.lock().await;
            close_slot(&fleet, &slot).await;
            (!drained).then(|| slot.name().to_owned())
        });
    }
    let mut cut_short = Vec::new();
    while let Some(done) = set.join_next().await {
        if let Ok(Some(name)) = done {
            cut_short.push(name);
        }
    }
    cut_short.sort();
    cut_short
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcpwire_client::TransportFactory;
    use mcpwire_test_support::{FakeServer, memory_pair};
    use mcpwire_transport::Transport;
    use serde_json::json;
    use tokio::sync::mpsc;

    use super::*;
    use crate::start::{Retry, client_for_call};

    const LONG: Duration = Duration::from_secs(20);

    /// The race a removal must win: a call that read the catalogue (and
    /// its roster) just before server `a` left, and reaches for `a`'s
    /// client while `a` drains another call, gets `Removed`, not the
    /// client that is about to close.
    #[tokio::test]
    async fn a_call_routed_just_before_a_removal_does_not_reach_the_removed_server() {
        let (tx, mut peers) = mpsc::unbounded_channel();
        let spec = ServerSpec::new("a", move || {
            let tx = tx.clone();
            let factory: TransportFactory = Box::new(move || {
                let (t, p) = memory_pair(64);
                let _ = tx.send(p);
                Box::pin(async move { Ok(Box::new(t) as Box<dyn Transport>) })
            });
            Ok(factory)
        });
        let manager = Manager::builder()
            .server(spec)
            .drain_timeout(LONG)
            .build()
            .unwrap();
        let connect = tokio::spawn({
            let m = manager.clone();
            async move { m.connect_all().await }
        });
        let mut server = FakeServer::new(peers.recv().await.unwrap());
        server
            .handshake_with(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}
            }))
            .await;
        let list = server.expect_request("tools/list").await;
        let tools = json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
        server.respond(&list.id, tools).await;
        connect.await.unwrap().unwrap();

        // One call under way keeps the removal draining.
        let call = tokio::spawn({
            let m = manager.clone();
            async move { m.call_tool("a__t", &json!({})).await }
        });
        let request = server.expect_request("tools/call").await;
        let before = manager.fleet.routing();
        let slot = before.roster.get("a").unwrap().clone();
        let mut version = manager.watch_catalogue();
        version.borrow_and_update();
        let remove = tokio::spawn({
            let m = manager.clone();
            async move { m.remove("a").await }
        });
        version.changed().await.unwrap();
        assert!(slot.client().is_some(), "still draining");

        let late = client_for_call(&manager.fleet, &slot, Retry::Failed).await;
        assert!(
            matches!(late, Err(Error::Removed { ref server }) if server == "a"),
            "{:?}",
            late.map(drop)
        );
        server.respond(&request.id, json!({"content": []})).await;
        call.await.unwrap().unwrap();
        remove.await.unwrap().unwrap();
        manager.close().await;
    }
}
