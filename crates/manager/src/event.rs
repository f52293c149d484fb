//! [`Event`]: what the fleet reports as it happens. Nothing is skipped or
//! changed silently: every server left out, every item left out of the
//! catalogue, every change of health and of the catalogue is one event.

use std::sync::Arc;

use mcpwire_config::NameError;

use crate::error::Error;
use crate::health::Health;
use crate::item::ItemKind;
use crate::pins::PinFinding;

/// Something that happened in the fleet, from
/// [`Manager::events`](crate::Manager::events).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// A configured server is not part of the fleet. Published once, by
    /// the first [`connect_all`](crate::Manager::connect_all) (and listed in
    /// its report), so a receiver taken after building sees it.
    ServerSkipped {
        /// The server.
        server: String,
        /// Why.
        reason: ServerSkip,
    },
    /// The fleet itself changed: a server was added, removed or replaced
    /// ([`Manager::add`](crate::Manager::add),
    /// [`remove`](crate::Manager::remove),
    /// [`replace`](crate::Manager::replace),
    /// [`reload`](crate::Manager::reload)). Published when the change is
    /// applied, before the one `CatalogueChanged` that follows it.
    ServerChanged {
        /// The server.
        server: String,
        /// How it changed.
        change: ServerChange,
    },
    /// A server's health changed state.
    HealthChanged {
        /// The server.
        server: String,
        /// Its new health.
        health: Health,
    },
    /// The aggregated catalogue changed because these servers' lists were
    /// read (connected, `list_changed`, a new session) or dropped. One event
    /// per refresh, however many notifications led to it.
    CatalogueChanged {
        /// The servers whose part changed.
        servers: Vec<String>,
    },
    /// A server's listing, held against its pinned definitions, showed
    /// something (see [`Pins`](crate::Pins)): reported once, when it is
    /// first seen, not at every refresh.
    Pinned {
        /// The server.
        server: String,
        /// What was seen.
        finding: PinFinding,
    },
    /// An item a server offers is not in the catalogue. Reported when it
    /// starts being left out, not again at every refresh.
    Skipped {
        /// The server offering it.
        server: String,
        /// A tool, prompt or resource.
        kind: ItemKind,
        /// Its own name (a resource's URI).
        name: String,
        /// Why.
        reason: ItemSkip,
    },
}

/// How a server of the fleet changed, in an [`Event::ServerChanged`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerChange {
    /// It joined the fleet.
    Added,
    /// It left the fleet: out of the catalogue at once, its client closed
    /// once its calls under way are done (or the drain timeout is over).
    Removed,
    /// A new spec took its place under the same name: a new client; the old
    /// one is closed as a removed server's is.
    Replaced,
}

/// Why a configured server is not part of the fleet.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerSkip {
    /// It is disabled in its configuration (`disabled: true`,
    /// `enabled = false`).
    Disabled,
    /// Its name cannot prefix tool names; rename it with
    /// [`ManagerBuilder::rename`](crate::ManagerBuilder::rename).
    InvalidName(NameError),
    /// Its entry could not be resolved or turned into a connection (an
    /// unset variable, an unsupported transport...).
    Unusable(Arc<Error>),
}

/// Why an item is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ItemSkip {
    /// The server's include or exclude list leaves it out.
    Filtered,
    /// Its public name (a resource: its URI) is claimed by another server.
    Collision {
        /// The contested name.
        name: String,
        /// The server that kept it, if one did
        /// ([`Collisions::FirstWins`](crate::Collisions::FirstWins));
        /// `None` under [`Collisions::Error`](crate::Collisions::Error).
        kept_by: Option<String>,
    },
    /// Its definition changed since it was approved, and the server's
    /// [`PinPolicy`](crate::PinPolicy) blocks it.
    Unapproved,
    /// A definition of its server changed since it was approved, and the
    /// server's [`PinPolicy`](crate::PinPolicy) quarantines the server.
    Quarantined,
    /// A tool of the MCP Apps extension meant for its server's view alone
    /// (its `_meta.ui.visibility` leaves out the model): a model must not
    /// see or call it. A host calls it for the view through the server's
    /// own client ([`Manager::client`](crate::Manager::client)).
    AppOnly,
}
