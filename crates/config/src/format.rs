//! [`Format`]: the file formats read, and how one is chosen for a path.

use std::fmt;
use std::path::Path;

/// The syntax of a configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// JSON, with the two extensions VS Code calls JSONC and writes in its
    /// own `mcp.json` and `settings.json`: `//` and `/* */` comments, and a
    /// trailing comma after the last element of an array or object. Nothing
    /// else beyond JSON is accepted (no single quotes, no unquoted keys, no
    /// hexadecimal numbers).
    Json,
    /// TOML 1.0 (Codex's `config.toml`).
    Toml,
}

impl Format {
    /// The format a path's extension names: `.toml` is TOML; anything else
    /// (`.json`, `.jsonc`, no extension) is JSON with comments.
    pub fn from_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("toml") => Format::Toml,
            _ => Format::Json,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Json => "JSON",
            Format::Toml => "TOML",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_picks_the_format() {
        assert_eq!(Format::from_path(Path::new("a/config.toml")), Format::Toml);
        assert_eq!(Format::from_path(Path::new("a/CONFIG.TOML")), Format::Toml);
        assert_eq!(Format::from_path(Path::new(".mcp.json")), Format::Json);
        assert_eq!(Format::from_path(Path::new("x.jsonc")), Format::Json);
        assert_eq!(Format::from_path(Path::new("noext")), Format::Json);
    }
}
