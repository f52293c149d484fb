//! Protocol versions this client speaks.

/// The newest protocol version, sent in `initialize`.
pub const LATEST_VERSION: &str = "2025-11-25";

/// Every version this client accepts from a server, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// True if `version` is one this client speaks.
pub fn is_supported(version: &str) -> bool {
    SUPPORTED_VERSIONS.contains(&version)
}
