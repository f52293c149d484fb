//! Protocol versions this client speaks, and the two eras they fall in.

/// The newest version of the `initialize` era, sent in `initialize`.
pub const LATEST_VERSION: &str = "2025-11-25";

/// Every `initialize`-era version this client accepts from a server, newest
/// first.
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The newest version of the stateless era (no `initialize`; every request
/// carries its version in `_meta`).
pub const MODERN_VERSION: &str = "2026-07-28";

/// Every stateless-era version this client speaks, newest first.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// True if `version` is an `initialize`-era version this client speaks.
pub fn is_supported(version: &str) -> bool {
    SUPPORTED_VERSIONS.contains(&version)
}

/// True if `version` is a stateless-era version this client speaks.
pub fn is_modern(version: &str) -> bool {
    MODERN_VERSIONS.contains(&version)
}

/// The two ways a session starts, by protocol revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// 2024-11-05 to 2025-11-25: the `initialize` handshake, sessions.
    Legacy,
    /// 2026-07-28 and later: no handshake; `server/discover`, and every
    /// request carries its version, capabilities and client info in
    /// `_meta`.
    Modern,
}

impl Era {
    /// The request that checks a server of this era is alive: `ping`, or
    /// in the stateless era, which has none, `server/discover` (answered by
    /// every server of that era, without effect).
    pub(crate) fn liveness_method(self) -> &'static str {
        match self {
            Era::Legacy => "ping",
            Era::Modern => "server/discover",
        }
    }

    /// The era of a version this client speaks.
    pub fn of(version: &str) -> Option<Era> {
        if is_modern(version) {
            Some(Era::Modern)
        } else if is_supported(version) {
            Some(Era::Legacy)
        } else {
            None
        }
    }

    /// `"legacy"` or `"modern"`, as logs and caches spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which era (and version) the client speaks: chosen by probing, or pinned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EraChoice {
    /// Probe with `server/discover` (bounded by
    /// [`ClientConfig::probe_timeout`](crate::ClientConfig::probe_timeout));
    /// a 2026 answer selects the stateless era, anything else (any error, a
    /// non-JSON answer, silence, a server that exits) falls back to
    /// `initialize`, except a refusal for want of credentials, which is
    /// reported. The outcome is cached per server, and the cache corrects
    /// itself when the server changes (`docs/eras.md`). The default.
    #[default]
    Auto,
    /// Always `initialize` (2025-11-25, or what the server picks).
    Legacy,
    /// Always the stateless era, newest version first.
    Modern,
    /// Exactly this version: a stateless one is used without `initialize`,
    /// an `initialize`-era one is offered in `initialize` (and the server's
    /// different choice refused).
    Version(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_fall_in_their_era() {
        assert_eq!(Era::of("2026-07-28"), Some(Era::Modern));
        assert_eq!(Era::of("2025-11-25"), Some(Era::Legacy));
        assert_eq!(Era::of("2024-11-05"), Some(Era::Legacy));
        assert_eq!(Era::of("1900-01-01"), None);
        assert_eq!(Era::Modern.to_string(), "modern");
    }
}
