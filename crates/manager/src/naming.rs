//! Public names: what a server's tool or prompt is called in the aggregated
//! catalogue ([`Naming`]), how names are made to fit a host's limits
//! ([`Sanitizer`]), and what happens when two servers claim one name
//! ([`Collisions`]).

use std::hash::Hasher;

/// Between a server's name and its tool's in a prefixed public name. Server
/// names never hold it nor end with `_`
/// ([`validate_server_name`](mcpwire_config::validate_server_name)), so
/// the first `__` of a public name always ends the server's name.
pub const SEPARATOR: &str = "__";

/// How tools and prompts are named in the aggregated catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Naming {
    /// `{server}__{tool}`: unique whatever the servers offer, and the
    /// server is readable in the name. The default.
    #[default]
    Prefixed,
    /// The tool's own name, as the server lists it: what a host with one
    /// server shows. Two servers offering the same name is a collision,
    /// handled by the [`Collisions`] policy.
    Bare,
}

/// What happens when several servers claim the same public name (with
/// [`Naming::Bare`], or after the [`Sanitizer`] rewrote two names alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Collisions {
    /// The name is routed nowhere and a typed
    /// [`Error::Collision`](crate::Error::Collision) says which servers
    /// claim it: listing the catalogue fails, and so does a call by that
    /// name. Nothing is silently overwritten. The default.
    #[default]
    Error,
    /// The first server in declaration order keeps the name; the others'
    /// items are left out, each reported as an
    /// [`Event::Skipped`](crate::Event::Skipped).
    FirstWins,
    /// Every item that claims a taken name gets the `{server}__` prefix
    /// (with [`Naming::Bare`]; the others keep their bare names). A name
    /// still taken twice after that (only the sanitizer can cause it) goes
    /// to the first, as with `FirstWins`.
    PrefixOnConflict,
}

/// Rewrites public names for hosts that limit them (OpenAI and Anthropic
/// accept `^[a-zA-Z0-9_-]{1,64}$`): every other character becomes `_`, and
/// a name longer than the cap is cut and ends with `_` and 8 hex digits of
/// a hash of the whole name, so two long names that share a beginning stay
/// apart. The hash is FNV-1a: the same on every platform and release, so a
/// saved catalogue and a model's conversation keep their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use]
pub struct Sanitizer {
    max_len: usize,
}

impl Default for Sanitizer {
    fn default() -> Self {
        Self::new()
    }
}

/// `_` and 8 hex digits.
const SUFFIX_LEN: usize = 9;

impl Sanitizer {
    /// Characters outside `[A-Za-z0-9_-]` become `_`; names are cut at 64.
    pub fn new() -> Self {
        Self { max_len: 64 }
    }

    /// The longest name, in characters. Default: 64. At least 16, so a cut
    /// name keeps some of its beginning beside its hash.
    pub fn max_len(mut self, max: usize) -> Self {
        self.max_len = max.max(16);
        self
    }

    /// `name`, made to fit.
    pub fn apply(&self, name: &str) -> String {
        let mut out: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if out.is_empty() {
            out.push('_');
        }
        if out.len() > self.max_len {
            let mut hasher = fnv::FnvHasher::default();
            hasher.write(name.as_bytes());
            // Every character is ASCII now: cutting at a byte is safe.
            out.truncate(self.max_len - SUFFIX_LEN);
            out.push_str(&format!("_{:08x}", hasher.finish() as u32));
        }
        out
    }
}

/// The rules in force for one catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct NameRules {
    pub(crate) naming: Naming,
    pub(crate) sanitizer: Option<Sanitizer>,
    pub(crate) collisions: Collisions,
}

impl NameRules {
    /// The public name of `item` of `server` under the naming rule.
    pub(crate) fn public(&self, server: &str, item: &str) -> String {
        match self.naming {
            Naming::Prefixed => self.prefixed(server, item),
            Naming::Bare => self.finish(item.to_owned()),
        }
    }

    /// `{server}__{item}`, sanitized.
    pub(crate) fn prefixed(&self, server: &str, item: &str) -> String {
        self.finish(format!("{server}{SEPARATOR}{item}"))
    }

    fn finish(&self, name: String) -> String {
        match &self.sanitizer {
            Some(s) => s.apply(&name),
            None => name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sanitizer_replaces_characters_and_cuts_with_a_stable_hash() {
        let s = Sanitizer::new();
        assert_eq!(s.apply("files__read.file"), "files__read_file");
        assert_eq!(s.apply("fs__lire_le_résumé"), "fs__lire_le_r_sum_");
        assert_eq!(s.apply(""), "_");
        let long_a = format!("server__{}", "a".repeat(80));
        let long_b = format!("server__{}b", "a".repeat(80));
        let (a, b) = (s.apply(&long_a), s.apply(&long_b));
        assert_eq!(a.len(), 64);
        assert_eq!(b.len(), 64);
        assert_ne!(a, b, "same beginning, different hashes");
        assert!(a.starts_with("server__aaaa"));
        // Stable: FNV-1a of the whole name, never a per-process hash.
        assert_eq!(a, s.apply(&long_a));
        let mut h = fnv::FnvHasher::default();
        h.write(long_a.as_bytes());
        assert!(a.ends_with(&format!("_{:08x}", h.finish() as u32)));
        let short = Sanitizer::new().max_len(3);
        assert_eq!(short.apply(&"x".repeat(20)).len(), 16, "at least 16");
        assert_eq!(short.apply("x_y"), "x_y");
    }

    #[test]
    fn prefixed_and_bare_names() {
        let rules = NameRules::default();
        assert_eq!(rules.public("git", "log"), "git__log");
        let bare = NameRules {
            naming: Naming::Bare,
            ..NameRules::default()
        };
        assert_eq!(bare.public("git", "log"), "log");
        assert_eq!(bare.prefixed("git", "log"), "git__log");
    }
}
