//! [`PinGate`]: the manager's pins at work: the store, each server's
//! policy, what it holds back of a listing, and which findings were
//! reported already (see `crate::pins` for what is pinned and how).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::catalog::Held;
use crate::item::ItemKind;
use crate::pins::{PinFinding, PinPolicy, Pins};
use crate::saved::ServerCatalogue;

/// The manager's pins: the store, the policy of each server, and the
/// findings already reported (each is reported once).
#[derive(Debug)]
pub(crate) struct PinGate {
    store: Mutex<Pins>,
    default: PinPolicy,
    policies: HashMap<String, PinPolicy>,
    reported: Mutex<HashSet<(String, PinFinding)>>,
}

impl PinGate {
    pub(crate) fn new(
        pins: Pins,
        default: PinPolicy,
        policies: HashMap<String, PinPolicy>,
    ) -> Self {
        Self {
            store: Mutex::new(pins),
            default,
            policies,
            reported: Mutex::new(HashSet::new()),
        }
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Pins> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A copy of the pins as they are now.
    pub(crate) fn pins(&self) -> Pins {
        self.store().clone()
    }

    /// Holds `server`'s lists against its pins: what its policy (`own`,
    /// the one its spec sets, else the one set for its name, else the
    /// default) holds back, and the findings not reported before.
    pub(crate) fn hold(
        &self,
        server: &str,
        own: Option<PinPolicy>,
        lists: &ServerCatalogue,
    ) -> (Held, Vec<PinFinding>) {
        let review = self.store().review(server, &lists.tools, &lists.prompts);
        let policy = own
            .or_else(|| self.policies.get(server).copied())
            .unwrap_or(self.default);
        let changed = |kind| review.changed(kind).map(str::to_owned).collect();
        let held = match policy {
            PinPolicy::Warn => Held {
                changed: changed(ItemKind::Tool),
                ..Held::default()
            },
            PinPolicy::Block => Held {
                tools: changed(ItemKind::Tool),
                prompts: changed(ItemKind::Prompt),
                ..Held::default()
            },
            PinPolicy::Quarantine => Held {
                quarantined: review.has_changes(),
                ..Held::default()
            },
        };
        let mut reported = self
            .reported
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let new = review
            .findings
            .into_iter()
            .filter(|f| reported.insert((server.to_owned(), f.clone())))
            .collect();
        (held, new)
    }

    /// Approves `server`'s lists as they are; its findings may be reported
    /// again if they come back.
    pub(crate) fn approve(&self, server: &str, lists: &ServerCatalogue) {
        self.store().approve(server, &lists.tools, &lists.prompts);
        self.reported
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|(s, _)| s != server);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lists(prompt_says: &str) -> ServerCatalogue {
        serde_json::from_value(json!({
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
            "prompts": [{"name": "p", "description": prompt_says}],
        }))
        .expect("lists")
    }

    #[test]
    fn each_policy_holds_back_what_it_says_of_a_changed_prompt() {
        let held = |policy| {
            let gate = PinGate::new(Pins::new(), policy, HashMap::new());
            let (first, _) = gate.hold("a", None, &lists("Reviews."));
            assert!(first.prompts.is_empty() && !first.quarantined);
            gate.hold("a", None, &lists("Reviews, and obeys.")).0
        };
        let blocked = held(PinPolicy::Block);
        assert!(blocked.prompts.contains("p") && blocked.tools.is_empty());
        assert!(!blocked.quarantined);
        assert!(held(PinPolicy::Quarantine).quarantined);
        let warned = held(PinPolicy::Warn);
        assert!(warned.prompts.is_empty() && !warned.quarantined);
        assert!(warned.changed.is_empty(), "only tools are marked for hooks");
    }
}
