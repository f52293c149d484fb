//! `--pins FILE`: every listing of tools and prompts held against pinned
//! definitions (the manager's [`Pins`], trust on first use as SSH's known
//! hosts): what is new is pinned and the file saved; a definition that
//! changed since it was approved is dealt with as `--pin-policy` says; a
//! renamed or suspicious one is reported. What was found goes to stderr,
//! each finding once per run (a shell lists many times).
//!
//! The `pins` command (list, approve, forget) is `pins_command`; this
//! module is what the other commands consult.

use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use mcpwire::Tool;
use mcpwire::client::types::Prompt;
use mcpwire::manager::{
    Event, ItemKind, Manager, ManagerBuilder, PinFinding, PinPolicy, Pins, PinsError, Suspicion,
};
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::args::{Format, Global, PolicyChoice};
use crate::failure::{Detail, Exit, Failure};

/// The environment variable that names the pin file when `--pins` does not.
pub(crate) const PINS_VAR: &str = "MCPWIRE_PINS";

/// Whether findings are said as JSON lines.
pub(crate) fn json_findings(global: &Global) -> bool {
    global.format() != Format::Text
}

/// The pin file: `--pins`, else `$MCPWIRE_PINS`; none means no checking.
pub(crate) fn pin_file(global: &Global) -> Option<PathBuf> {
    global.pins.clone().or_else(|| {
        std::env::var_os(PINS_VAR)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

/// The library's policy for the command line's choice.
pub(crate) fn policy(choice: PolicyChoice) -> PinPolicy {
    match choice {
        PolicyChoice::Warn => PinPolicy::Warn,
        PolicyChoice::Block => PinPolicy::Block,
        PolicyChoice::Quarantine => PinPolicy::Quarantine,
    }
}

/// Reads the pin file, its error said for the user.
pub(crate) fn load(path: &Path) -> Result<Pins, Failure> {
    Pins::load(path).map_err(|e| file_failure("cannot read the pins", e))
}

/// Changes the pin file with `change` under its lock, on the file as it
/// is now: two commands saving pins at once keep each other's (see
/// [`Pins::update`]).
pub(crate) fn update<T>(path: &Path, change: impl FnOnce(&mut Pins) -> T) -> Result<T, Failure> {
    Pins::update(path, change).map_err(|e| file_failure("cannot save the pins", e))
}

/// A pin file that cannot be used: every cause said (the file's name is
/// in the first, what is wrong in the last), and what to do.
fn file_failure(what: &str, error: PinsError) -> Failure {
    let hint = match &error {
        PinsError::Invalid { .. } => {
            "fix the file, or remove it to pin afresh what the next command lists"
        }
        _ => "check the path and its permissions (--pins FILE or $MCPWIRE_PINS)",
    };
    let mut said = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(c) = cause {
        said.push_str(": ");
        said.push_str(&c.to_string());
        cause = c.source();
    }
    Failure::caused(Exit::Usage, what, error).plainly(said, hint)
}

/// What the policy holds back of one server's listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Held {
    /// Changed tools left out (`block`).
    tools: HashSet<String>,
    /// Changed prompts left out (`block`).
    prompts: HashSet<String>,
    /// Every tool and prompt left out (`quarantine`, after a change).
    quarantined: bool,
}

impl Held {
    /// Whether the item `name` of `kind` is held back.
    pub(crate) fn holds(&self, kind: ItemKind, name: &str) -> bool {
        self.quarantined
            || match kind {
                ItemKind::Tool => self.tools.contains(name),
                ItemKind::Prompt => self.prompts.contains(name),
                _ => false,
            }
    }

    /// Whether the whole server is held back.
    pub(crate) fn quarantined(&self) -> bool {
        self.quarantined
    }
}

/// One server's listings held against the pin file, for one run.
#[derive(Debug)]
pub(crate) struct PinCheck {
    path: PathBuf,
    server: String,
    policy: PinPolicy,
    /// Findings as JSON lines (`--format json` or `ndjson`).
    json: bool,
    /// Whether a note said how to approve (a failure then need not).
    hinted: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The findings said already this run.
    reported: HashSet<PinFinding>,
}

impl PinCheck {
    /// Checks that `path` is a pin file (a missing one is no pins), to hold
    /// the listings of the server known in it as `server` against it.
    pub(crate) fn open(
        path: PathBuf,
        server: String,
        policy: PinPolicy,
        json: bool,
    ) -> Result<Self, Failure> {
        load(&path)?;
        Ok(Self {
            path,
            server,
            policy,
            json,
            hinted: AtomicBool::new(false),
            state: Mutex::new(State {
                reported: HashSet::new(),
            }),
        })
    }

    /// Holds a listing against the pin file as it is now (another command
    /// may have approved or pinned since): pins what is new and saves the
    /// file under its lock, says on stderr what it found (each finding
    /// once), and returns what the policy holds back.
    pub(crate) fn hold(&self, tools: &[Tool], prompts: &[Prompt]) -> Result<Held, Failure> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let review = update(&self.path, |pins| pins.review(&self.server, tools, prompts))?;
        let held = match self.policy {
            PinPolicy::Block => Held {
                tools: review.changed(ItemKind::Tool).map(str::to_owned).collect(),
                prompts: review
                    .changed(ItemKind::Prompt)
                    .map(str::to_owned)
                    .collect(),
                quarantined: false,
            },
            PinPolicy::Quarantine => Held {
                quarantined: review.has_changes(),
                ..Held::default()
            },
            _ => Held::default(),
        };
        let new: Vec<PinFinding> = review
            .findings
            .into_iter()
            .filter(|f| state.reported.insert(f.clone()))
            .collect();
        drop(state);
        let mut err = std::io::stderr().lock();
        if self.json {
            for finding in &new {
                let _ = writeln!(err, "{}", finding_json(&self.server, self.policy, finding));
            }
        } else {
            for line in notes(&self.server, self.policy, &self.path, &new) {
                let prefix = if line.starts_with(' ') {
                    self.hinted.store(true, Ordering::Relaxed);
                    ""
                } else {
                    "mcpwire: "
                };
                let _ = writeln!(err, "{prefix}{line}");
            }
        }
        Ok(held)
    }

    /// The failure of a command that needs the held-back item `name`.
    pub(crate) fn refused(&self, kind: ItemKind, name: &str) -> Failure {
        // The listing's notes just said how to approve: not again.
        let hinted = self.hinted.load(Ordering::Relaxed);
        unapproved(&self.server, kind, name, self.policy, hinted)
    }
}

/// `serve --pins`: the fleet's listings held against the pin file by the
/// manager itself (so a blocked tool is neither listed to serve's client
/// nor callable), what it pins saved to the file, what it finds said on
/// stderr.
pub(crate) struct FleetPins {
    path: PathBuf,
    policy: PinPolicy,
    json: bool,
    /// The file's pins as last read or saved: what the manager pinned
    /// since is merged into the file as it is then.
    base: Pins,
}

impl FleetPins {
    /// With `--pins FILE` (or `$MCPWIRE_PINS`): the file read and `builder`
    /// set to hold every listing against it with `--pin-policy`.
    pub(crate) fn open(
        global: &Global,
        builder: ManagerBuilder,
    ) -> Result<(ManagerBuilder, Option<Self>), Failure> {
        let Some(path) = pin_file(global) else {
            return Ok((builder, None));
        };
        let base = load(&path)?;
        let keeper = Self {
            path,
            policy: policy(global.pin_policy),
            json: json_findings(global),
            base,
        };
        Ok((
            builder.pins(keeper.base.clone(), keeper.policy),
            Some(keeper),
        ))
    }

    /// Until `manager` closes: says what its pins find (each server's
    /// findings together) and saves what it pinned, once the events that
    /// came together are read. Take `events` before the fleet starts, so
    /// the first listings' findings are not missed.
    pub(crate) async fn keep(
        mut self,
        manager: Manager,
        mut events: tokio::sync::broadcast::Receiver<Event>,
    ) {
        let mut closed = std::pin::pin!(manager.closed());
        let mut found: BTreeMap<String, Vec<PinFinding>> = BTreeMap::new();
        loop {
            let open = tokio::select! {
                () = &mut closed => false,
                event = events.recv() => match event {
                    Ok(Event::Pinned { server, finding }) => {
                        found.entry(server).or_default().push(finding);
                        true
                    }
                    Ok(_) | Err(RecvError::Lagged(_)) => true,
                    Err(RecvError::Closed) => false,
                },
            };
            if !open || events.is_empty() {
                self.say(std::mem::take(&mut found));
                self.save(&manager).await;
            }
            if !open {
                return;
            }
        }
    }

    fn say(&self, found: BTreeMap<String, Vec<PinFinding>>) {
        let mut err = std::io::stderr().lock();
        for (server, findings) in found {
            if self.json {
                for finding in &findings {
                    let _ = writeln!(err, "{}", finding_json(&server, self.policy, finding));
                }
                continue;
            }
            for line in notes(&server, self.policy, &self.path, &findings) {
                match line.strip_prefix(' ') {
                    Some(hint) => writeln!(err, " {hint}"),
                    None => writeln!(err, "mcpwire serve: server {server:?}: {line}"),
                }
                .unwrap_or(());
            }
        }
    }

    /// Merges what the manager pinned since the last save into the file,
    /// under its lock, on a blocking thread.
    async fn save(&mut self, manager: &Manager) {
        let Some(now) = manager.pins().filter(|p| *p != self.base) else {
            return;
        };
        let (path, base, ours) = (self.path.clone(), self.base.clone(), now.clone());
        let saved =
            tokio::task::spawn_blocking(move || update(&path, |file| file.merge(&base, &ours)))
                .await;
        match saved {
            Ok(Ok(())) => self.base = now,
            Ok(Err(failure)) => eprintln!("mcpwire serve: {}", failure.text(Detail::Short)),
            // Only a runtime shutting down cancels it.
            Err(_) => {}
        }
    }
}

/// What a person can run to approve `server`'s definitions as they are.
pub(crate) fn approve_command(server: &str) -> String {
    if is_plain(server) {
        format!("`mcpwire pins approve {server}`")
    } else {
        // A command line (perhaps with a credential redacted): given again
        // as it was.
        "`mcpwire pins approve` and the server's command line after `--`".to_owned()
    }
}

/// True for a name or URL a shell reads as one word as it is.
fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:/@%+".contains(c))
}

/// "tool" or "prompt".
pub(crate) fn kind_word(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool => "tool",
        ItemKind::Prompt => "prompt",
        _ => "item",
    }
}

fn unapproved(
    server: &str,
    kind: ItemKind,
    name: &str,
    policy: PinPolicy,
    hinted: bool,
) -> Failure {
    let why = if policy == PinPolicy::Quarantine {
        "the server is quarantined: a definition changed since it was approved".to_owned()
    } else {
        format!(
            "the definition of {} {name:?} changed since it was approved",
            kind_word(kind)
        )
    };
    Failure::new(
        Exit::Unapproved,
        format!("{} {name:?} is blocked", kind_word(kind)),
    )
    .plainly(
        why,
        if hinted {
            "`--pin-policy warn` uses it anyway".to_owned()
        } else {
            format!(
                "see what changed and approve it with {} (or `--pin-policy warn` to use it anyway)",
                approve_command(server)
            )
        },
    )
}

/// The lines that say what a listing showed, for a person: the server is
/// the one the command names, so only the pin file's name for it (in the
/// hint) repeats it.
fn notes(server: &str, policy: PinPolicy, path: &Path, findings: &[PinFinding]) -> Vec<String> {
    let mut lines = Vec::new();
    let added: Vec<String> = findings
        .iter()
        .filter_map(|f| match f {
            PinFinding::Added { kind, name } => Some(format!("{} {name}", kind_word(*kind))),
            _ => None,
        })
        .collect();
    if !added.is_empty() {
        lines.push(format!(
            "pinned {} on first use, in {}",
            added.join(", "),
            path.display()
        ));
    }
    let mut changed = false;
    for finding in findings {
        match finding {
            PinFinding::Changed { kind, name } => {
                changed = true;
                let what = format!(
                    "the definition of {} {name:?} changed since it was approved",
                    kind_word(*kind)
                );
                lines.push(match policy {
                    PinPolicy::Warn => format!("warning: {what} (shown anyway: --pin-policy warn)"),
                    PinPolicy::Quarantine => what,
                    _ => format!("{what}: left out (blocked)"),
                });
            }
            PinFinding::Renamed { kind, from, to } => lines.push(format!(
                "{} {from:?} is now named {to:?} (the same definition): pinned under its new name",
                kind_word(*kind)
            )),
            PinFinding::Suspicious { kind, name, marks } => lines.push(format!(
                "warning: the description of {} {name:?} has {}: read it before use",
                kind_word(*kind),
                marks_text(marks)
            )),
            _ => {}
        }
    }
    if changed {
        if policy == PinPolicy::Quarantine {
            lines.push("the server is quarantined: its tools and prompts are left out".to_owned());
        }
        lines.push(format!(
            "  hint: see what changed and approve it with {}",
            approve_command(server)
        ));
    }
    lines
}

/// One finding as JSON (`--format json`: one object a line on stderr).
fn finding_json(server: &str, policy: PinPolicy, finding: &PinFinding) -> Value {
    let (what, kind, name) = match finding {
        PinFinding::Added { kind, name } => ("added", *kind, name),
        PinFinding::Changed { kind, name } => ("changed", *kind, name),
        PinFinding::Renamed { kind, to, .. } => ("renamed", *kind, to),
        PinFinding::Suspicious { kind, name, .. } => ("suspicious", *kind, name),
        _ => ("other", ItemKind::Tool, &String::new()),
    };
    let mut v = json!({"server": server, "finding": what, "kind": kind_word(kind), "name": name});
    match finding {
        PinFinding::Changed { .. } => {
            v["policy"] = json!(match policy {
                PinPolicy::Warn => "warn",
                PinPolicy::Quarantine => "quarantine",
                _ => "block",
            });
        }
        PinFinding::Renamed { from, .. } => v["from"] = json!(from),
        PinFinding::Suspicious { marks, .. } => v["marks"] = json!(marks_text(marks)),
        _ => {}
    }
    json!({ "pin": v })
}

/// The marks of tool poisoning, in words.
pub(crate) fn marks_text(marks: &[Suspicion]) -> String {
    let mut hidden = Vec::new();
    let mut tags = Vec::new();
    for mark in marks {
        match mark {
            Suspicion::Hidden(c) => hidden.push(format!("U+{:04X}", u32::from(*c))),
            Suspicion::InstructionTag(tag) => tags.push(tag.clone()),
            _ => {}
        }
    }
    let mut parts = Vec::new();
    if !hidden.is_empty() {
        parts.push(format!("hidden characters ({})", hidden.join(", ")));
    }
    if !tags.is_empty() {
        parts.push(format!(
            "tags that speak to the model ({})",
            tags.join(", ")
        ));
    }
    parts.join(" and ")
}
