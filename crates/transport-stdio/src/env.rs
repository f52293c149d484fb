//! The child's environment and the resolution of its command.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::config::{InheritEnv, StdioConfig};

/// The variables a server inherits from this process by default: enough to
/// find programs and a home directory, nothing that usually holds a secret.
/// Everything else must be passed with [`StdioConfig::env`] or allowed
/// wholesale with [`StdioConfig::inherit_env`].
pub const SAFE_ENV_VARS: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The environment the child gets: the allow-list (or everything), then the
/// caller's variables over it.
pub(crate) fn child_env(config: &StdioConfig) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = if config.inherit_env == InheritEnv::All {
        std::env::vars_os().collect()
    } else {
        SAFE_ENV_VARS
            .iter()
            .filter_map(|k| {
                let v = std::env::var_os(k)?;
                // A value starting with "()" is an exported shell function,
                // which the allow-list is not meant to carry.
                (!v.as_encoded_bytes().starts_with(b"()")).then(|| (OsString::from(k), v))
            })
            .collect()
    };
    for (k, v) in &config.env {
        env.retain(|(ek, _)| ek != k);
        env.push((k.clone(), v.clone()));
    }
    env
}

/// Finds the program to run the way `execvp` would, against the child's
/// `PATH`, so errors can name the file we actually tried.
///
/// A command containing a `/` is taken as a path (relative to the child's
/// working directory); otherwise each `PATH` entry is tried in order.
pub(crate) fn resolve_command(
    command: &OsStr,
    env: &[(OsString, OsString)],
    cwd: Option<&Path>,
) -> Result<PathBuf, String> {
    let bytes = command.as_encoded_bytes();
    if bytes.is_empty() {
        return Err("the command is empty".into());
    }
    if bytes.contains(&b'/') {
        let path = match cwd {
            Some(dir) if Path::new(command).is_relative() => dir.join(command),
            _ => PathBuf::from(command),
        };
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(format!("`{}` is not an executable file", path.display()))
        };
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let dir = match cwd {
            Some(base) if dir.is_relative() => base.join(dir),
            _ => dir,
        };
        let candidate = dir.join(command);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!(
        "`{}` was not found on PATH ({})",
        command.to_string_lossy(),
        path.to_string_lossy()
    ))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_on_the_childs_path_and_names_what_failed() {
        let env = vec![(
            OsString::from("PATH"),
            OsString::from("/nonexistent:/bin:/usr/bin"),
        )];
        let sh = resolve_command(OsStr::new("sh"), &env, None).unwrap();
        assert!(sh.ends_with("sh") && sh.is_absolute(), "{}", sh.display());
        let err = resolve_command(OsStr::new("no-such-mcp-server-xyz"), &env, None).unwrap_err();
        assert!(
            err.contains("no-such-mcp-server-xyz") && err.contains("/nonexistent"),
            "{err}"
        );
        let err =
            resolve_command(OsStr::new("./missing"), &env, Some(Path::new("/tmp"))).unwrap_err();
        assert!(err.contains("/tmp/./missing"), "{err}");
        let empty = vec![(OsString::from("PATH"), OsString::from(""))];
        assert!(resolve_command(OsStr::new("sh"), &empty, None).is_err());
    }

    #[test]
    fn caller_variables_override_and_secrets_stay_out() {
        let config = StdioConfig::new("x").env("PATH", "/only").env("EXTRA", "1");
        let env = child_env(&config);
        let get = |k: &str| env.iter().find(|(ek, _)| ek == k).map(|(_, v)| v.clone());
        assert_eq!(get("PATH"), Some("/only".into()));
        assert_eq!(get("EXTRA"), Some("1".into()));
        assert_eq!(env.iter().filter(|(k, _)| k == "PATH").count(), 1);
        for (k, _) in &env {
            let k = k.to_string_lossy();
            assert!(
                SAFE_ENV_VARS.contains(&k.as_ref()) || k == "EXTRA",
                "{k} leaked"
            );
        }
    }
}
