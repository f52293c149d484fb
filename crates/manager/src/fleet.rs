//! [`Fleet`]: what every part of the manager shares: the servers' slots,
//! the current catalogue snapshot, the events, the options. The state
//! changes that publish something (health, lists) go through here, so each
//! is published exactly once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mcpwire_client::ClientConfig;
use tokio::sync::{broadcast, watch};

use crate::catalog::{Catalog, Held, Part, SkipRecord};
use crate::event::{Event, ServerSkip};
use crate::health::Health;
use crate::hooks::CallHook;
use crate::naming::NameRules;
use crate::pin_gate::PinGate;
use crate::saved::ServerCatalogue;
use crate::slot::{Slot, Source, lock};

/// The servers of the fleet at one moment, in declaration order. Replaced
/// whole when the fleet changes; a catalogue routes by position in the
/// roster it was built from, and the two are read together.
#[derive(Default)]
pub(crate) struct Roster {
    pub(crate) slots: Vec<Arc<Slot>>,
    by_name: HashMap<String, usize>,
}

impl Roster {
    pub(crate) fn new(slots: Vec<Arc<Slot>>) -> Roster {
        let by_name = slots
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name().to_owned(), i))
            .collect();
        Roster { slots, by_name }
    }

    /// The slot of server `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Slot>> {
        self.by_name.get(name).map(|i| &self.slots[*i])
    }

    /// Whether `slot` itself (not another of its name) is in the roster.
    pub(crate) fn holds(&self, slot: &Slot) -> bool {
        self.get(slot.name())
            .is_some_and(|s| std::ptr::eq(Arc::as_ptr(s), slot))
    }
}

/// A catalogue and the roster it routes into.
#[derive(Clone)]
pub(crate) struct Routing {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) roster: Arc<Roster>,
}

/// What [`ManagerBuilder::configure_client`](crate::ManagerBuilder::configure_client)
/// keeps: a server's name and its client configuration in, the
/// configuration to use out.
pub(crate) type ConfigureClient = dyn Fn(&str, ClientConfig) -> ClientConfig + Send + Sync;

/// The manager's settings, fixed when it is built.
pub(crate) struct Options {
    pub(crate) rules: NameRules,
    pub(crate) debounce: Duration,
    pub(crate) startup_timeout: Duration,
    pub(crate) client_config: ClientConfig,
    /// Adjusts each server's client configuration as its client is made.
    pub(crate) configure_client: Option<Arc<ConfigureClient>>,
    pub(crate) hooks: Vec<Arc<dyn CallHook>>,
    /// Pinned definitions, if kept.
    pub(crate) pins: Option<PinGate>,
    /// How long a removed server's calls under way may take before its
    /// client is closed under them.
    pub(crate) drain_timeout: Duration,
    /// The builder's renames and connect policies, applied to the specs of
    /// a reload as to those of the build.
    pub(crate) renames: HashMap<String, String>,
    pub(crate) connect: HashMap<String, crate::spec::ConnectPolicy>,
}

pub(crate) struct Fleet {
    routing: RwLock<Routing>,
    events: broadcast::Sender<Event>,
    pub(crate) options: Options,
    /// The items left out as last reported, so each is reported once.
    reported: Mutex<HashSet<SkipRecord>>,
    /// Serializes rebuilds, so snapshots and their events come in order.
    rebuilding: Mutex<()>,
    catalogue_version: watch::Sender<u64>,
    /// `true` once closed; dropped with the fleet, which ends the monitors.
    pub(crate) shutdown: watch::Sender<bool>,
    /// The servers left out by the build or the last change, and why.
    skipped_servers: Mutex<Vec<(String, ServerSkip)>>,
    skipped_published: AtomicBool,
}

impl Fleet {
    pub(crate) fn new(
        slots: Vec<Arc<Slot>>,
        options: Options,
        skipped_servers: Vec<(String, ServerSkip)>,
        event_capacity: usize,
    ) -> Fleet {
        let fleet = Fleet {
            routing: RwLock::new(Routing {
                catalog: Arc::new(Catalog::default()),
                roster: Arc::new(Roster::default()),
            }),
            events: broadcast::channel(event_capacity.max(1)).0,
            options,
            reported: Mutex::new(HashSet::new()),
            rebuilding: Mutex::new(()),
            catalogue_version: watch::channel(0).0,
            shutdown: watch::channel(false).0,
            skipped_servers: Mutex::new(skipped_servers),
            skipped_published: AtomicBool::new(false),
        };
        // Saved catalogues of lazy servers are part of it from the start.
        fleet.change(|_| Some((Arc::new(Roster::new(slots)), Vec::new(), ())));
        fleet
    }

    /// The slot of server `name`, in the fleet now.
    pub(crate) fn slot(&self, name: &str) -> Option<Arc<Slot>> {
        self.roster().get(name).cloned()
    }

    /// The current catalogue and the roster it routes into.
    pub(crate) fn routing(&self) -> Routing {
        self.routing
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The current catalogue.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.routing().catalog
    }

    /// The servers of the fleet now.
    pub(crate) fn roster(&self) -> Arc<Roster> {
        self.routing().roster
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    pub(crate) fn watch_catalogue(&self) -> watch::Receiver<u64> {
        self.catalogue_version.subscribe()
    }

    pub(crate) fn is_closed(&self) -> bool {
        *self.shutdown.borrow()
    }

    pub(crate) fn publish(&self, event: Event) {
        tracing::debug!(?event, "fleet event");
        // No receiver is not an error: events are there for whoever listens.
        let _ = self.events.send(event);
    }

    /// Publishes the servers left out when the fleet was built, once.
    pub(crate) fn publish_skipped_servers(&self) {
        if self.skipped_published.swap(true, Ordering::AcqRel) {
            return;
        }
        for (server, reason) in self.skipped_servers() {
            tracing::info!(server, ?reason, "server skipped");
            self.publish(Event::ServerSkipped { server, reason });
        }
    }

    /// The servers left out now, and why.
    pub(crate) fn skipped_servers(&self) -> Vec<(String, ServerSkip)> {
        lock(&self.skipped_servers).clone()
    }

    /// Notes a change of the fleet: `joined` servers are in it (no longer
    /// left out), `skipped` are left out. With `whole`, the change was the
    /// whole fleet (a reload): `skipped` replaces the list.
    pub(crate) fn note_skipped(
        &self,
        joined: &[String],
        skipped: &[(String, ServerSkip)],
        whole: bool,
    ) {
        let mut list = lock(&self.skipped_servers);
        if whole {
            *list = skipped.to_vec();
            return;
        }
        list.retain(|(name, _)| !joined.contains(name) && !skipped.iter().any(|(s, _)| s == name));
        list.extend(skipped.iter().cloned());
    }

    /// Sets `slot`'s health; an event if its state changed, unless the slot
    /// left the fleet (its `ServerChanged` said so; an event under its name
    /// now could be taken for the health of the server that replaced it).
    pub(crate) fn set_health(&self, slot: &Slot, health: Health) {
        let changed = slot.health.send_if_modified(|h| {
            let changed = !h.same_state(&health);
            *h = health.clone();
            changed
        });
        if changed && !slot.is_removed() {
            match health.error() {
                Some(e) => tracing::info!(server = slot.name(), health = health.name(), error = %e),
                None => tracing::info!(server = slot.name(), health = health.name()),
            }
            self.publish(Event::HealthChanged {
                server: slot.name().to_owned(),
                health,
            });
        }
    }

    /// Replaces `slot`'s lists and rebuilds the catalogue.
    pub(crate) fn set_lists(&self, slot: &Slot, lists: ServerCatalogue, source: Source) {
        {
            let mut current = lock(&slot.lists);
            current.lists = lists;
            current.source = source;
        }
        self.rebuild_for(slot);
    }

    /// Approves `slot`'s current definitions (see `crate::pins`) and
    /// rebuilds the catalogue. False without pins.
    pub(crate) fn approve(&self, slot: &Slot) -> bool {
        let Some(gate) = &self.options.pins else {
            return false;
        };
        gate.approve(slot.name(), &lock(&slot.lists).lists);
        self.rebuild_for(slot);
        true
    }

    /// Forgets `slot`'s lists (a server that failed or was closed offers
    /// nothing any more).
    pub(crate) fn drop_lists(&self, slot: &Slot) {
        let had = {
            let mut current = lock(&slot.lists);
            let had = current.source != Source::None;
            current.lists = ServerCatalogue::default();
            current.source = Source::None;
            had
        };
        if had {
            self.rebuild_for(slot);
        }
    }

    /// Rebuilds the catalogue for a change of `slot`'s lists, unless the
    /// slot left the fleet (a removed server's last refresh changes
    /// nothing).
    fn rebuild_for(&self, slot: &Slot) {
        self.change(|roster| {
            roster
                .holds(slot)
                .then(|| (roster.clone(), vec![slot.name().to_owned()], ()))
        });
    }

    /// Changes the fleet: `plan` reads the roster as it is and returns the
    /// new one, the servers whose part of the catalogue changed and what to
    /// return, or `None` to change nothing. One change at a time: the
    /// catalogue is built from the new roster and swapped in with it,
    /// newly skipped items are reported, and one `CatalogueChanged` is
    /// published for the changed servers (none when there are none: the
    /// first build). `plan` runs under the lock: it must not block.
    pub(crate) fn change<T>(
        &self,
        plan: impl FnOnce(&Arc<Roster>) -> Option<(Arc<Roster>, Vec<String>, T)>,
    ) -> Option<T> {
        let _one = lock(&self.rebuilding);
        let (roster, changed, out) = plan(&self.roster())?;
        self.rebuild(roster, changed);
        Some(out)
    }

    /// Builds the catalogue from `roster`'s lists, swaps both in, and
    /// publishes what changed. Called with `rebuilding` held.
    fn rebuild(&self, roster: Arc<Roster>, changed: Vec<String>) {
        let guards: Vec<_> = roster.slots.iter().map(|s| lock(&s.lists)).collect();
        let mut findings = Vec::new();
        let held: Vec<Option<Held>> = roster
            .slots
            .iter()
            .zip(&guards)
            .map(|(slot, lists)| {
                let gate = self.options.pins.as_ref()?;
                if lists.source == Source::None {
                    return None;
                }
                let (held, found) = gate.hold(slot.name(), slot.spec.pin_policy, &lists.lists);
                findings.extend(found.into_iter().map(|f| (slot.name().to_owned(), f)));
                Some(held)
            })
            .collect();
        let parts: Vec<Part<'_>> = roster
            .slots
            .iter()
            .enumerate()
            .zip(&guards)
            .zip(&held)
            .filter(|((_, lists), _)| lists.source != Source::None)
            .map(|(((index, slot), lists), held)| Part {
                index,
                spec: &slot.spec,
                lists: &lists.lists,
                held: held.as_ref(),
            })
            .collect();
        let catalog = Catalog::build(&parts, &self.options.rules);
        drop(parts);
        drop(guards);

        let skips: HashSet<SkipRecord> = catalog.skips.iter().cloned().collect();
        let new_skips: Vec<SkipRecord> = {
            let mut reported = lock(&self.reported);
            let new = catalog
                .skips
                .iter()
                .filter(|s| !reported.contains(*s))
                .cloned()
                .collect();
            *reported = skips;
            new
        };
        *self
            .routing
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Routing {
            catalog: Arc::new(catalog),
            roster,
        };
        self.catalogue_version.send_modify(|v| *v += 1);
        for (server, finding) in findings {
            self.publish(Event::Pinned { server, finding });
        }
        for skip in new_skips {
            tracing::info!(server = skip.server, name = skip.name, reason = ?skip.reason, "left out of the catalogue");
            self.publish(Event::Skipped {
                server: skip.server,
                kind: skip.kind,
                name: skip.name,
                reason: skip.reason,
            });
        }
        if !changed.is_empty() {
            self.publish(Event::CatalogueChanged { servers: changed });
        }
    }
}
