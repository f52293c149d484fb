//! Server names: the rules a name must follow to be part of a tool name.
//!
//! The manager names each tool `{server}__{tool}`, and the hosts that show
//! those names to a model limit them (OpenAI and Anthropic accept
//! `^[a-zA-Z0-9_-]{1,64}$` for a whole tool name). A server name that keeps
//! to the rules below can be split back off a tool name without ambiguity.

use std::fmt;

/// The longest server name accepted, in bytes (all allowed characters are
/// one byte). Short enough to leave room for a tool name inside 64.
pub const MAX_SERVER_NAME_LEN: usize = 32;

/// Why a server name cannot be used as a tool-name prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name is longer than [`MAX_SERVER_NAME_LEN`] bytes.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The name holds a character other than ASCII letters, digits, `_`
    /// and `-`.
    InvalidCharacter {
        /// The first such character.
        found: char,
    },
    /// The name starts with `_` or `-`.
    BadFirstCharacter,
    /// The name holds `__` (the separator between server and tool) or ends
    /// with `_` (which would run into it).
    SeparatorClash,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Empty => f.write_str("the name is empty"),
            NameError::TooLong { len } => write!(
                f,
                "the name is {len} characters long; at most {MAX_SERVER_NAME_LEN} are allowed"
            ),
            NameError::InvalidCharacter { found } => write!(
                f,
                "the name holds {found:?}; only ASCII letters, digits, '_' and '-' are allowed"
            ),
            NameError::BadFirstCharacter => {
                f.write_str("the name must start with an ASCII letter or digit")
            }
            NameError::SeparatorClash => f.write_str(
                "the name must not hold \"__\" nor end with '_' (\"__\" separates server and tool)",
            ),
        }
    }
}

impl std::error::Error for NameError {}

/// Checks that `name` can prefix tool names as `{name}__{tool}`.
///
/// The rules: 1 to [`MAX_SERVER_NAME_LEN`] characters; ASCII letters, digits,
/// `_` and `-` only; the first one a letter or digit; no `__` anywhere and
/// no `_` at the end, so the first `__` in a tool name always ends the
/// server name. Names are case-sensitive.
///
/// Loading a file never fails on a name: a name that breaks these rules is
/// reported as a [`Warning`](crate::Warning) and kept, for the caller to
/// rename or sanitize.
///
/// ```
/// use mcpwire_config::{validate_server_name, NameError};
///
/// assert!(validate_server_name("github-2").is_ok());
/// assert_eq!(validate_server_name("my__server"), Err(NameError::SeparatorClash));
/// assert!(validate_server_name("My Server").is_err());
/// ```
pub fn validate_server_name(name: &str) -> Result<(), NameError> {
    let first = name.chars().next().ok_or(NameError::Empty)?;
    if let Some(found) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(NameError::InvalidCharacter { found });
    }
    if name.len() > MAX_SERVER_NAME_LEN {
        return Err(NameError::TooLong { len: name.len() });
    }
    if !first.is_ascii_alphanumeric() {
        return Err(NameError::BadFirstCharacter);
    }
    if name.contains("__") || name.ends_with('_') {
        return Err(NameError::SeparatorClash);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules() {
        for ok in ["a", "A9", "brave-search", "server_everything", "x-", "0"] {
            assert_eq!(validate_server_name(ok), Ok(()), "{ok}");
        }
        assert_eq!(validate_server_name(""), Err(NameError::Empty));
        assert_eq!(
            validate_server_name(&"a".repeat(33)),
            Err(NameError::TooLong { len: 33 })
        );
        assert!(validate_server_name(&"a".repeat(32)).is_ok());
        assert_eq!(
            validate_server_name("a.b"),
            Err(NameError::InvalidCharacter { found: '.' })
        );
        assert_eq!(
            validate_server_name("é"),
            Err(NameError::InvalidCharacter { found: 'é' })
        );
        assert_eq!(
            validate_server_name("_a"),
            Err(NameError::BadFirstCharacter)
        );
        assert_eq!(
            validate_server_name("-a"),
            Err(NameError::BadFirstCharacter)
        );
        assert_eq!(validate_server_name("a__b"), Err(NameError::SeparatorClash));
        assert_eq!(validate_server_name("a_"), Err(NameError::SeparatorClash));
    }

    #[test]
    fn a_valid_name_splits_back_off_a_tool_name() {
        for (server, tool) in [("a", "b"), ("a-b_c", "_x"), ("s", "t__u"), ("x-", "__y")] {
            validate_server_name(server).unwrap();
            let public = format!("{server}__{tool}");
            let (s, t) = public.split_once("__").unwrap();
            assert_eq!((s, t), (server, tool));
        }
    }
}
